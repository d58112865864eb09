#pragma once
// Mixed training (`xpusim train --mix A:N,B:M`, docs/fusion.md): one pipeline whose first
// stages run on N chips of system A and the rest on M chips of system B. Each kind's time per
// layer is measured by the engine on a homogeneous run of that kind (same tp, dp, micro-batch,
// global batch and sequence length); the layers are split so that stages finish together
// (engine::mixed_layer_split); activations cross between the kinds over the NVLink Fusion link
// when both systems share a Fusion domain, else over the scale-out network, at the slower
// endpoint's rate.

#include <string>
#include <vector>

#include "xpusim/net/fusion.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::scenario {

struct MixPart {
  std::string system;
  long long chips = 0;
};

/// "A:N,B:M" → two parts; InputError naming --mix for any other shape.
std::vector<MixPart> parse_mix(const std::string& text);

struct MixKindResult {
  std::string system, chip;
  bool projected = false;
  long long chips = 0;
  int stages = 0;
  double layer_time_s = 0;   ///< forward + backward of one layer, one micro-batch (measured)
  double stage_time_s = 0;   ///< the kind's slowest stage per micro-batch in the mixed split
  double idle_fraction = 0;  ///< 1 − stage time / the pipeline's beat
  double rest_s = 0;         ///< exposed DP, optimizer and per-step overheads (homogeneous run)
  double pp_comm_s = 0;      ///< P2P between its own stages on the critical path (homogeneous run)
  int layers = 0;            ///< layers its stages hold in the mixed split
  double energy_per_step_j = 0;   ///< all its chips, overhead power included, over the mixed step
  double average_power_w = 0;     ///< per chip
  double cost_per_step_usd = 0;   ///< all its chips for the mixed step
  bool energy_estimated = true, price_estimated = true;
};

struct MixResult {
  std::string model;
  int tp = 1, dp = 1, layers = 0;
  long long micro_batch = 1, global_batch = 1, micro_batches = 1, seq_len = 0;
  std::vector<MixKindResult> kinds;
  int vpp = 1;                      ///< virtual stages (chunks) per stage: interleaved 1F1B when > 1
  std::vector<int> stage_layers;    ///< layers per stage, kind 0's stages first
  std::vector<std::vector<int>> chunk_layers;  ///< per stage, layers of each of its vpp chunks
  int crossings = 1;                ///< boundary crossings per micro-batch per direction: 2 vpp - 1
  net::CrossLink link;              ///< between the kinds
  double activation_bytes_per_chip = 0;  ///< one boundary crossing, one micro-batch, per chip
  double cross_transfer_s = 0;      ///< one crossing
  double cross_bytes_per_step = 0;  ///< all boundary chips, forward and backward
  double beat_s = 0;                ///< slowest stage per micro-batch
  double chunk_s = 0;               ///< slowest chunk per micro-batch (= beat_s at vpp 1)
  double compute_s = 0, bubble_s = 0, pp_comm_s = 0, rest_s = 0, step_s = 0;
  double bubble_fraction = 0;       ///< bubble / step
  double tokens_per_s = 0;
  double energy_per_step_j = 0, cost_per_step_usd = 0;  ///< both kinds
  double joules_per_token = 0, usd_per_million_tokens = 0;
  bool fits = true;                 ///< both kinds' homogeneous runs fit in memory
  std::string reason;               ///< why not
  std::vector<std::string> assumptions;
};

/// Runs both kinds and combines them. `in` holds the plan (tp, dp, vpp, micro-batch, global
/// batch, sequence length, precision); its system and chips come from `mix`. vpp > 1 is the
/// interleaved schedule across the kinds (the only other schedule is 1f1b; dualpipe is an
/// InputError naming --schedule).
MixResult run_train_mix(const TrainInputs& in, const std::string& mix, const hw::Catalog& cat,
                        const std::string& models_dir, const calib::Params& params);

}  // namespace xpusim::scenario
