#pragma once
// The one rule for the training settings an input leaves unstated: global batch, micro-batch,
// virtual pipeline stages, recompute and optimizer sharding. The CLI (scenario/), the
// validation rows (validation/) and the plan search (engine/search.cc) all call it, so the
// same model on the same layout gets the same defaults everywhere.
//
// Order: what the input states; else the framework's recipe (training.defaults.recipes.<fw>:
// micro-batch, gradient accumulation, FSDP or ZeRO-1); else the critical-batch rule
// (training.defaults.critical_batch: about 4M tokens below 100B total parameters, about 16M
// from there), rounded up to whole micro-batches per data-parallel rank and never fewer
// micro-batches than the pipeline schedule needs (pp; 2·pp for DualPipe; a multiple of pp when
// interleaved) unless the input states the global batch. docs/validation.md, "Defaults".

#include <optional>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/workload/model.h"

namespace xpusim::engine {

/// Where a setting came from; Search: the CLI's plan search chose it among candidates.
enum class Origin { Input, Recipe, Rule, Search };
std::string origin_name(Origin o);  ///< "input", "recipe", "rule", "search"

/// A framework's recipe and the critical-batch rule, read once from the calibration.
struct DefaultsRule {
  std::string framework;
  long long micro_batch = 1;            ///< recipe micro-batch (sequences)
  bool gradient_accumulation = true;    ///< false: global batch = dp × local batch
  bool fsdp = false;                    ///< unstated sharding: FSDP, else ZeRO-1
  bool split_local_batch_over_stages = false;  ///< no accumulation: pp micro-batches per local batch
  double tokens_small = 0;              ///< critical batch below the threshold (tokens)
  double tokens_large = 0;              ///< critical batch at or above it (tokens)
  double threshold_params = 0;          ///< total parameters where the larger batch starts
};

/// The rule for framework `framework` (a training.frameworks name); InputError when the
/// calibration lacks its recipe.
DefaultsRule defaults_rule(const std::string& framework, const calib::Params& params);

/// What the input states (unset = take the default).
struct TrainStated {
  std::optional<long long> global_batch;  ///< sequences
  std::optional<double> max_batch_tokens;  ///< upper bound on the global batch (tokens) for the search
  std::optional<long long> micro_batch;
  std::optional<int> vpp;
  bool interleaved = false;  ///< the input names the interleaved schedule without its vpp
  std::optional<mapping::Recompute> recompute;
  std::optional<mapping::Zero> zero;
};

template <typename T>
struct Setting {
  T value{};
  Origin origin = Origin::Rule;
  std::string basis;  ///< why this value ("critical batch of 4,194,304 tokens …")
};

struct TrainDefaults {
  Setting<double> batch_tokens;        ///< the global-batch target (tokens; 0 when stated in sequences)
  Setting<long long> global_batch;     ///< sequences; 0 until a layout is known
  Setting<long long> micro_batch;
  Setting<int> vpp;
  Setting<mapping::Zero> zero;
  /// Recompute levels to try, least first; the least that fits in memory is taken.
  Setting<std::vector<mapping::Recompute>> recompute;
};

/// The defaults for `stated` on `model`. With a layout (dp, pp, schedule, seq_len of `layout`)
/// the global batch in sequences is resolved too; without one (the plan search decides the
/// layout) it stays 0 and batch_tokens is the target.
TrainDefaults train_defaults(const DefaultsRule& rule, const TrainStated& stated, const workload::ModelSpec& model,
                             long long seq_len, const mapping::TrainPlan* layout = nullptr);

/// Fewest micro-batches per step the plan's pipeline schedule runs (1 without a pipeline; pp;
/// 2·pp for DualPipe), and the multiple they must come in (pp when interleaved, 2 for DualPipe).
long long pipeline_min_micro_batches(const mapping::TrainPlan& plan);
long long pipeline_micro_batch_step(const mapping::TrainPlan& plan);

/// The global batch (sequences) for a token target on a layout: whole micro-batches per
/// data-parallel rank, at least the pipeline's minimum, rounded up to its step.
long long global_batch_for_tokens(double tokens, const mapping::TrainPlan& plan);
/// The largest global batch (sequences) of at most `tokens` in whole micro-batches per
/// data-parallel rank and at least as many as the pipeline needs; 0 when even the least such
/// batch exceeds `tokens`.
long long global_batch_within_tokens(double tokens, const mapping::TrainPlan& plan);

/// One line per setting: "global batch 2,048 sequences (input)", "micro-batch 1 (recipe:
/// megatron …)". `recompute` is the level that was taken, `recompute_layers` the layers of each
/// chunk it reruns when the rule chose some (0: every layer); `selective`, what the framework's
/// selective level keeps (named when it is not Megatron's attention core).
std::vector<std::string> describe(const TrainDefaults& d, mapping::Recompute recompute, int recompute_layers,
                                  mapping::SelectiveScope selective = mapping::SelectiveScope::AttentionCore);

}  // namespace xpusim::engine
