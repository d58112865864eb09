#pragma once
// Building a training scenario from flags or a YAML scenario (shared by train and demo).

#include <optional>
#include <string>

#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::cli {

struct TrainOptions {
  std::string system, model, scenario;
  long long chips = 0;
  int tp = 0, pp = 0, dp = 0, cp = 0, ep = 0, vpp = 0;  ///< 0 = not given
  long long micro_batch = 0, global_batch = 0, seq_len = 0;
  std::string precision, zero, recompute;
  std::string schedule;  ///< pipeline schedule; empty = 1f1b (vpp 1) or interleaved (vpp > 1)
  std::string executor = "event";
  std::string framework = "megatron";
};

/// Fills unset options from a YAML/JSON scenario file (flags win).
void apply_scenario_file(TrainOptions& o);

/// Resolved scenario and whether the user fixed the whole layout (tp, pp and dp or implied).
struct BuiltTrain {
  engine::TrainScenario scenario;
  bool searched = false;   ///< the plan came from the plan search
  int evaluated = 0;       ///< plans evaluated by the search
};

/// Validates the options (unknown ids, divisibility → InputError naming the flag) and fills the
/// documented default plan for anything left out.
/// `params` must outlive the scenario (it points to them).
BuiltTrain build_train(const TrainOptions& o, const hw::Catalog& cat, const std::string& models_dir,
                       const calib::Params& params);

}  // namespace xpusim::cli
