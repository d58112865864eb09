#pragma once
// One training step of a model on a system with a parallel plan.
//
// Two executors consume the same per-stage costs (engine/stage_costs.h):
// - analytical: closed form per phase (1F1B / interleaved bubble, exposed communication);
//   microseconds per plan, used by plan search;
// - event-driven: the exact pipeline schedule of one representative rank per stage (all
//   data-parallel replicas and tensor/context/expert-parallel peers are symmetric), with a
//   compute stream and communication streams per stage, DP gradient buckets overlapping
//   backward, integer-picosecond time and a deterministic event order. Its cost grows with
//   pp × micro-batches × vpp, not with the chip count.

#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/compute/chip_model.h"
#include "xpusim/cost/activity.h"
#include "xpusim/hw/spec.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/workload/model.h"

namespace xpusim::engine {

/// Framework-level behaviour that is not hardware, one preset per framework family. Values,
/// meaning and basis: data/calibration/training.yaml (framework_params()).
struct FrameworkParams {
  std::string name;
  /// The stack's kernel quality relative to the chip's vendor-tuned stack, one number on every
  /// chip: scales the GEMM efficiency on Hopper and newer GPUs, and the GEMM and attention
  /// efficiency on Trainium (against NeuronX Distributed's NKI kernels); not applied on Ampere.
  double compute_efficiency = 0;
  /// The same for attention kernels on Hopper and newer GPUs (FlashAttention-2 / SDPA / Triton
  /// against FlashAttention-3 / cuDNN); a GPU kernel choice, not applied on Trainium.
  double attention_efficiency = 0;
  /// Token routing cost of a dropless MoE layer per pass, per routed element (token copy × hidden).
  core::Seconds moe_route_cost_per_element;
  double tp_comm_exposed = 0;   ///< share of TP/SP collectives not hidden behind GEMMs
  double ep_comm_exposed = 0;   ///< share of expert all-to-all on the critical path
  double fsdp_overlap = 0;      ///< share of per-layer FSDP gathers hidden by prefetch
  /// Gradient reduction overlaps the last backward (bucketed); false = all-reduce after it.
  bool dp_overlap = true;
  /// What `--recompute selective` keeps under this framework (sets TrainPlan::selective).
  mapping::SelectiveScope selective_scope = mapping::SelectiveScope::AttentionCore;
  /// Whether the defaults rule's full recomputation reruns only the fewest layers of each model
  /// chunk that fit (Megatron's block method), not every layer.
  bool recompute_some_layers = false;
  core::Seconds step_overhead;  ///< per-step fixed cost (data loader, logging, sync)
  double optimizer_kernels = 0; ///< kernel launches of the optimizer step
  /// CP ring attention: backward attention time ÷ forward (the window hiding the backward exchange).
  double cp_attention_backward_ratio = 0;
};

/// The preset `name` (a section of training.frameworks, plus training.common). Unknown names
/// throw InputError with the closest match.
FrameworkParams framework_params(const std::string& name, const calib::Params& params);
std::vector<std::string> framework_names(const calib::Params& params);

/// One straggling chip: the compute of one pipeline stage of one data-parallel replica runs
/// `slowdown` times slower (thermal throttling, a degraded HBM stack, a noisy neighbour).
/// Synchronous training waits for it at every gradient reduction; since a longer task never
/// makes a later event earlier, the slow replica's pipeline is the critical one, so the event
/// executor simulates it as the representative replica: O(pp × micro-batches) events at any
/// chip count. The analytical executor ignores it.
struct Straggler {
  double slowdown = 1.0;  ///< ≥ 1; 1 = none
  int stage = -1;         ///< pipeline stage of the slow chip; -1 = the busiest stage
};

struct TrainScenario {
  const hw::SystemSpec* system = nullptr;
  workload::ModelSpec model;
  mapping::TrainPlan plan;
  FrameworkParams framework;
  /// The fitted and assumed parameters (chip calibration, network efficiencies); must be set.
  const calib::Params* calibration = nullptr;
  Straggler straggler;
};

struct Breakdown {
  core::Seconds compute;        ///< forward + backward + recompute on the critical path
  core::Seconds tp_comm;        ///< exposed TP/SP collectives
  core::Seconds cp_comm;        ///< exposed context-parallel ring exchange
  core::Seconds ep_comm;        ///< exposed expert all-to-all
  core::Seconds pp_comm;        ///< pipeline P2P on the critical path
  core::Seconds dp_comm;        ///< exposed gradient reduction / parameter gathers
  core::Seconds bubble;         ///< pipeline fill and drain
  core::Seconds optimizer;      ///< optimizer step
  core::Seconds other;          ///< per-step overheads
};

/// Chrome trace threads (tid) of a pipeline stage: what each stream carries.
enum TraceStream : int { kTraceCompute = 0, kTraceDp = 1, kTraceTp = 2, kTraceCp = 3, kTraceEp = 4,
                         kTraceFsdp = 5, kTracePp = 6, kTraceStreams = 7 };

struct TraceEvent {
  std::string name;
  std::string category;  ///< "forward", "backward", "comm", "optimizer"; detail: "op", "tp", "cp", "ep", "fsdp"
  int stage = 0;         ///< pipeline stage (Chrome trace pid)
  int stream = 0;        ///< TraceStream (Chrome trace tid)
  long long start_ps = 0;
  long long duration_ps = 0;
  bool detail = false;   ///< inside a compute span: an operator or a layer's exposed collective
  std::vector<std::pair<std::string, double>> args;  ///< Chrome trace args (op FLOPs, bytes, ...)
};

struct TrainResult {
  bool feasible = true;
  std::string reason;              ///< why infeasible
  std::string executor;            ///< "analytical" or "event"
  std::string schedule;            ///< pipeline schedule that ran (mapping/schedule.h)
  std::vector<int> stage_layers;   ///< transformer layers per pipeline stage (embedding on the
                                   ///< first, LM head on the last)
  std::string stage_placement;     ///< which stages a rank holds, e.g. "rank r: stages r and 15-r"
  core::Seconds step_time;
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_chip = 0;
  double model_tflops_per_chip = 0;
  double hw_tflops_per_chip = 0;
  double mfu = 0;                  ///< model FLOP/s per chip ÷ dense peak of the executed dtype
  core::Dtype executed_precision = core::Dtype::Bf16;  ///< the plan's precision, or its fallback
  Breakdown breakdown;
  mapping::TrainMemory memory;
  core::Bytes hbm_capacity;
  bool fits = true;
  cost::Activity activity;         ///< per chip per step
  long long events = 0;            ///< events processed (event executor)
  int straggler_stage = -1;        ///< stage of TrainScenario::straggler's chip (event executor); -1 none
  std::vector<TraceEvent> trace;
};

/// Checks the plan (divisibility, chips) and returns a result with feasible=false and the reason
/// when it is not; also marks fits=false when the memory does not fit (still timed).
TrainResult simulate_analytical(const TrainScenario& s);
TrainResult simulate_event(const TrainScenario& s, bool want_trace = false);

/// Chrome trace-event JSON (opens in Perfetto) of an event-driven result.
std::string chrome_trace_json(const TrainResult& r);

/// Tier-A plan search: the feasible plan that fits with the highest throughput (tokens/s, so
/// that plans whose global batch rounds differently are compared fairly; for a fixed batch this
/// is the shortest step) among the plans that meet the batch target (the least batch they run,
/// one micro-batch per data-parallel rank times the micro-batches their pipeline needs, within
/// `batch_tokens`; others only when none does), over TP (inside the scale-up domain), PP, CP,
/// VPP, micro-batch, ZeRO and recompute choices. Candidates whose static memory (weights, gradients, optimizer state
/// with the least activation memory the recompute choices allow) cannot fit are pruned before
/// they are timed. Deterministic: ties keep the first plan in enumeration order.
struct SearchSpace {
  std::vector<int> tp = {1, 2, 4, 8, 16, 32, 64};
  std::vector<int> pp = {1, 2, 4, 8, 16, 32, 64};
  std::vector<int> cp = {1};
  /// Virtual stages per rank (interleaved schedule when > 1); empty = keep the base plan's.
  std::vector<int> vpp;
  /// Sequences per micro-batch; empty = keep the base plan's.
  std::vector<long long> micro_batch;
  std::vector<mapping::Recompute> recompute = {mapping::Recompute::None,
                                               mapping::Recompute::Selective,
                                               mapping::Recompute::Full};
  std::vector<mapping::Zero> zero = {mapping::Zero::Zero1, mapping::Zero::Fsdp};
  /// Expert-parallel degree of a MoE model when the user states it (layouts whose dp·cp it
  /// does not divide are skipped); 0 = the largest power of two dividing dp·cp and the experts,
  /// up to 64.
  int ep = 0;
  /// When > 0, each candidate's global batch is this many tokens (engine::global_batch_for_tokens:
  /// whole micro-batches per data-parallel rank, at least as many as the pipeline needs);
  /// when 0 the base scenario's global batch is kept.
  long long batch_tokens = 0;
  /// True: batch_tokens is an upper bound. Each candidate's batch is the largest within it
  /// (engine::global_batch_within_tokens) and a candidate that cannot stay within it is skipped;
  /// false: the nearest batch at or above it, and plans over it rank after those within it.
  bool batch_bound = false;
  /// False (a framework recipe without gradient accumulation): each candidate's global batch is
  /// one local batch per data-parallel rank (as many micro-batches as its pipeline needs).
  bool gradient_accumulation = true;
  /// Runners-up the result keeps beside the best (`train --top N`): the next plans in the
  /// search's ranking among those that fit; 0 keeps none.
  int runners_up = 0;
};
/// A plan the search timed that fits but lost to the best: its plan and figures.
struct RunnerUp {
  mapping::TrainPlan plan;
  double tokens_per_s = 0;
  core::Seconds step_time;
  core::Bytes memory_per_chip;
  bool over_batch_target = false;  ///< its least batch exceeds the target (ranks after those within)
};
struct SearchResult {
  bool found = false;
  TrainScenario best;
  TrainResult result;
  int evaluated = 0;  ///< plans timed with the analytical executor
  int pruned = 0;     ///< candidates that divide the chips but were skipped (memory, schedule)
  int over_batch_bound = 0;  ///< candidates whose least batch exceeds SearchSpace::batch_tokens (batch_bound)
  int fitting = 0;           ///< timed plans that fit
  /// SearchSpace::runners_up plans after the best, in ranking order (ties in enumeration order).
  std::vector<RunnerUp> runners_up;
};
SearchResult search_plan(const TrainScenario& base, long long chips, const SearchSpace& space);
/// With a batch bound: the most chips below `chips`, in whole scale-up domains, that some plan
/// of the space employs within the bound (each layout's largest data-parallel degree whose
/// pipeline's micro-batches fit the batch, confirmed by a search); 0 when none.
long long largest_chips_within_bound(const TrainScenario& base, long long chips, const SearchSpace& space);

}  // namespace xpusim::engine
