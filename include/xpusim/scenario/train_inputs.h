#pragma once
// A training scenario as the user wrote it (flags or a YAML/JSON scenario file) and its
// resolution into an engine::TrainScenario: unknown ids, divisibility and bad values become
// InputError diagnostics naming the flag; anything left unset gets the documented default plan
// (or the plan search). The CLI, a future Python module and the HTML report call these.
//
// Scenario file shape (docs/scenarios.md), shared with serving:
//   system, model, chips, framework, executor, description
//   plan:     tp, pp, dp, cp, ep, vpp, micro_batch, precision, allow_fallback, zero, recompute,
//             schedule, async_tp, lora_rank, lora_targets, mtp_layers, moe_load_imbalance,
//             moe_capacity_factor, moe_pad_to_capacity, expert_tp, recompute_layers
//   workload: global_batch, max_global_batch_tokens, seq_len, train_tokens, deadline, budget_usd (scenario/solver.h)

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/config/document.h"
#include "xpusim/engine/defaults.h"
#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/scenario/overrides.h"

namespace xpusim::scenario {

/// Every input optional: unset means "the documented default", never 0.
struct TrainInputs {
  std::optional<std::string> system, model;
  std::optional<long long> chips;
  std::optional<long long> tp, pp, dp, cp, ep, vpp, micro_batch;
  std::optional<std::string> precision, zero, recompute;
  /// Run a precision the chip lacks as the nearest one it has (stated in the output); unset or
  /// false: such a precision is bad input listing the chip's precisions.
  std::optional<bool> allow_fallback;
  std::optional<std::string> schedule;  ///< pipeline schedule; unset = 1f1b (vpp 1) or interleaved (vpp > 1)
  /// Async TP: TP collectives chunked and pipelined with their GEMMs (mapping::TrainPlan::async_tp);
  /// unset or false: the framework's share of them is exposed.
  std::optional<bool> async_tp;
  /// LoRA fine-tuning at this adapter rank (mapping::TrainPlan::lora_rank); absent: every weight trains.
  std::optional<long long> lora_rank;
  /// The weights the LoRA adapters sit beside: "attention" or "all-linear" (needs lora_rank;
  /// default training.defaults.lora.all_linear).
  std::optional<std::string> lora_targets;
  /// Multi-token prediction depth (mapping::TrainPlan::mtp_layers); absent: 0, none.
  std::optional<long long> mtp_layers;
  /// MoE load imbalance over the expert-parallel ranks (mapping::TrainPlan::moe_load_imbalance);
  /// absent: 1, balanced.
  std::optional<double> moe_load_imbalance;
  /// Expert tensor parallelism (mapping::TrainPlan::expert_tp): the experts on their own grid
  /// (MoE parallel folding); absent: the attention's tp.
  std::optional<long long> expert_tp;
  /// Megatron's expert capacity factor (mapping::TrainPlan::moe_capacity_factor) and padding to
  /// it; absent: dropless.
  std::optional<double> moe_capacity_factor;
  std::optional<bool> moe_pad_to_capacity;
  /// With recompute full, only the first N layers of each model chunk are recomputed
  /// (mapping::TrainPlan::recompute_layers, Megatron's block method); absent: every layer.
  std::optional<long long> recompute_layers;
  std::optional<long long> global_batch, seq_len;
  /// Upper bound on the global batch in tokens for the plan search (default: the critical-batch
  /// rule); the search never exceeds it. Not with global_batch (exact).
  std::optional<double> max_global_batch_tokens;
  std::optional<double> train_tokens;  ///< also report the time, energy and cost to train on these
  std::optional<std::string> executor;   ///< event (default) or analytical
  std::optional<std::string> framework;  ///< training framework preset (default megatron)
  EstimateOverrides overrides;           ///< --price, --tdp (flags only)
  // Failures and goodput (flags only; docs/scale.md).
  std::optional<std::string> checkpoint_tier;  ///< local-nvme, parallel-fs (default), object-storage
  std::optional<long long> spares;             ///< hot spare nodes (default 0)
  std::optional<double> checkpoint_interval;   ///< seconds (default: Young–Daly)
  std::optional<long long> runs, seed;         ///< Monte Carlo of the whole run (needs train_tokens)
  std::optional<long long> top;                ///< runners-up of the plan search to list (train --top N)
  std::optional<double> pue;                   ///< site PUE (default reliability.facility.pue)
  std::optional<std::string> scaling;          ///< "FROM..TO": the efficiency curve over chip counts
  std::optional<std::string> deadline;         ///< "30d": fewest chips that train in time (scenario/solver.h)
  std::optional<double> budget;                ///< USD: fastest run within the money (scenario/solver.h)
  std::optional<double> straggler;             ///< one chip's compute this many times slower (event executor)
  std::optional<long long> straggler_stage;    ///< its pipeline stage (default: the busiest)
};

/// Reads a scenario file (nested plan: and workload:). Errors carry the file and key path.
TrainInputs read_train_file(const std::string& path);
/// The same keys from a document already read (a sweep point, a Python call); `path` names the
/// source in diagnostics (a file, or empty).
TrainInputs train_inputs_from_json(const config::Json& doc, const std::string& path);

/// Fills every unset field of `given` from `fallback` (flags given on the command line win).
void fill_unset(TrainInputs& given, const TrainInputs& fallback);

/// The resolved scenario, and whether the plan came from the plan search.
struct BuiltTrain {
  engine::TrainScenario scenario;
  bool searched = false;  ///< the plan came from the plan search
  int evaluated = 0;      ///< plans timed by the search
  int pruned = 0;         ///< candidates the search skipped (memory cannot fit, schedule refuses)
  int fitting = 0;        ///< timed plans that fit
  std::vector<engine::RunnerUp> runners_up;  ///< with TrainInputs::top: the next plans of the search
  int runners_up_asked = 0;                  ///< TrainInputs::top (0: not asked)
  double searched_tokens_per_s = 0;          ///< the best plan's throughput as the search timed it (analytical)
  std::string executor = "event";
  /// The settings the step ran with and where each came from (engine/defaults.h).
  engine::TrainDefaults defaults;
  std::vector<std::string> settings;  ///< one line per setting (engine::describe)
  /// The system with the user's --price/--tdp applied (scenario.system points here); null when
  /// none was given (scenario.system points into the catalog).
  std::shared_ptr<const hw::SystemSpec> overridden_system;
  std::vector<std::string> overrides;  ///< override_notes(): what was replaced, for reports
};

/// Validates the inputs and fills the documented default plan for anything left out.
/// `params` (the calibration) must outlive the scenario: it points to them.
BuiltTrain build_train(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                       const calib::Params& params);

}  // namespace xpusim::scenario

#include "xpusim/cost/energy.h"
#include "xpusim/engine/goodput.h"

namespace xpusim::scenario {

/// Time, energy and cost to train on a token budget at the simulated step. The cost has one
/// path: the price per chip-hour × the chips × the time it is billed for, which is the expected
/// time with failures and restarts (TrainRun::time_to_train_with_failures) once the scale
/// results are in, the failure-free time before.
struct TrainBudget {
  double tokens = 0;
  double steps = 0;
  core::Seconds time;            ///< failure-free: steps × step time
  core::Joules energy;           ///< all chips, failure-free
  double price_usd_per_chip_hour = 0;
  long long chips = 0;
  core::Seconds billed_time;     ///< the time `dollars` pays for
  bool billed_with_failures = false;
  core::Dollars dollars;         ///< price × chips × billed_time
};

/// price × chips × `t` in dollars (the one cost path of a training run).
double billed_dollars(const TrainBudget& b, core::Seconds t);

/// One simulated training step with everything a report shows.
struct TrainRun {
  BuiltTrain built;
  engine::TrainResult result;
  cost::EnergyCost energy;               ///< per chip
  std::optional<TrainBudget> budget;     ///< when train_tokens was given
  engine::Goodput goodput;               ///< failures, checkpoints, stragglers (scenario/scale.h)
  std::string checkpoint_tier;
  long long spares = 0;
  std::optional<core::Seconds> time_to_train_with_failures;  ///< when train_tokens was given
  std::optional<engine::TimeDistribution> monte_carlo;        ///< when runs was given
  double pue = 1;
  core::Watts site_power;                ///< all chips with their overhead, times the PUE
  core::Joules site_energy_per_token;
  std::optional<core::Seconds> nominal_step_time;  ///< with a straggler: the step without it
};

/// Builds and simulates (the event executor when a trace is wanted). A plan that is not valid
/// for the model and chips is bad input (InputError); one that does not fit in memory is a
/// result with fits == false (exit 1).
TrainRun run_train(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                   const calib::Params& params, bool want_trace);

}  // namespace xpusim::scenario
