#pragma once
// Pipeline schedules: the order in which each pipeline rank runs the forward and backward passes
// of its model chunks for every micro-batch, and each schedule's own closed form (bubble,
// exposed communication, activations in flight, weight copies) for the analytical executor.
//
// A schedule is one file in src/mapping/schedules/ plus one line in register_builtin_schedules()
// (src/mapping/schedule.cc). mapping/step_plan.h turns a schedule's order into the task graph that
// the event-driven executor runs; the closed form is derived independently of that graph, so the
// agreement of the two executors is a real check (tests/unit/engine/schedule_agreement_test.cc).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/registry.h"
#include "xpusim/core/units.h"

namespace xpusim::mapping {

struct TrainPlan;

/// The pipeline a schedule runs: ranks, virtual stages per rank asked by the plan, micro-batches.
struct PipelineShape {
  int pp = 1;
  int vpp = 1;
  int micro_batches = 1;
};

/// Passes of one micro-batch through one model chunk. Backward is input and weight gradient
/// together; zero-bubble schedules split it into BackwardInput (B) and BackwardWeight (W).
enum class Pass : unsigned char { Forward, Backward, BackwardInput, BackwardWeight };
inline constexpr int kPassCount = 4;
const char* pass_letter(Pass p);  ///< "F", "B", "B", "W"

struct ComputeTask {
  Pass pass = Pass::Forward;
  int chunk = 0;        ///< model chunk of the rank (virtual stage / DualPipe direction)
  int micro_batch = 0;  ///< global micro-batch index
};

/// One step of a rank's compute stream: a task, or two run together (DualPipe's paired forward
/// and backward chunks, whose all-to-all and P2P communication hide under each other's compute).
struct Slot {
  ComputeTask first;
  ComputeTask second;
  bool paired = false;
};

/// A (rank, chunk) a micro-batch visits, in forward order.
struct Hop {
  int rank = 0;
  int chunk = 0;
};

/// The layers a chunk holds: `share` of pipeline stage `stage`'s layers (the even layer split of
/// the model over pp stages; interleaving gives each of a rank's vpp chunks 1/vpp of its stage).
struct ChunkPlacement {
  int stage = 0;
  double share = 1.0;
};

/// Times of one micro-batch through one chunk, as the closed forms need them.
struct ChunkTimes {
  core::Seconds forward;        ///< incl. the exposed communication of the forward
  core::Seconds backward;       ///< input and weight gradient, recompute, exposed communication
  core::Seconds weight_grad;    ///< the weight-gradient part of `backward`
  core::Seconds forward_a2a;    ///< expert all-to-all of the forward that a paired chunk can hide
  core::Seconds backward_a2a;   ///< the same of the backward
};

/// Per-rank chunk times (the mean over a rank's chunks) and the P2P latency between ranks.
struct PipelineTimes {
  std::vector<ChunkTimes> rank;
  core::Seconds p2p;
};

/// A schedule's closed-form estimate of the pipelined part of a step.
struct PipelineEstimate {
  core::Seconds busy;      ///< compute stream work of the busiest rank (incl. exposed comm)
  core::Seconds bubble;    ///< fill and drain idle time
  core::Seconds pp_comm;   ///< P2P latency on the critical path
  core::Seconds ep_comm;   ///< all-to-all exposed on the busiest rank (pairing schedules)
};

class Schedule {
 public:
  virtual ~Schedule() = default;
  virtual std::string name() const = 0;
  virtual std::string description() const = 0;
  /// Why this schedule cannot run `shape` (the constraint and the values), or nothing.
  virtual std::optional<std::string> refusal(const PipelineShape& shape) const = 0;
  virtual int chunks_per_rank(const PipelineShape& shape) const = 0;
  virtual ChunkPlacement placement(const PipelineShape& shape, int rank, int chunk) const = 0;
  /// Distinct routes through the pipeline and the route of each micro-batch.
  virtual std::vector<std::vector<Hop>> routes(const PipelineShape& shape) const = 0;
  virtual int route_of(const PipelineShape& shape, int micro_batch) const = 0;
  /// The compute stream order of `rank`.
  virtual std::vector<Slot> order(const PipelineShape& shape, int rank) const = 0;
  /// True when paired slots hide the expert all-to-all themselves (the framework's exposed share
  /// of the all-to-all then does not apply).
  virtual bool pairs_chunks() const { return false; }

  // Closed form.
  virtual PipelineEstimate estimate(const PipelineShape& shape, const PipelineTimes& t) const = 0;
  /// Peak chunk-micro-batches of activations held by `rank` (a chunk's layers for one micro-batch).
  virtual double inflight_chunks(const PipelineShape& shape, int rank) const = 0;
  /// Copies of a stage's weights the schedule keeps across the pipeline (DualPipe: 2).
  virtual int weight_copies() const { return 1; }
};

using ScheduleRegistry = core::Registry<std::shared_ptr<const Schedule>>;

/// Fills `reg` with 1f1b, interleaved, dualpipe and zb-h1.
void register_builtin_schedules(ScheduleRegistry& reg);
/// The built-in registry (built once by register_builtin_schedules).
const ScheduleRegistry& schedules();

/// The schedule a plan runs: its `schedule` field, else 1f1b for vpp 1 and interleaved for vpp > 1
/// (Megatron's behaviour). An unknown name throws InputError listing the valid ones.
const Schedule& schedule_of(const TrainPlan& plan);
std::string schedule_name(const TrainPlan& plan);
PipelineShape pipeline_shape(const TrainPlan& plan);

/// Layers per pipeline stage: as even as possible, the remainder on the middle stages (the first
/// and last stages also carry the embedding and the LM head).
std::vector<int> layers_per_stage(int layers, int pp);

}  // namespace xpusim::mapping
