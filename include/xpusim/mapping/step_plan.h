#pragma once
// One training step as an explicit task graph, built from a plan's pipeline schedule: compute
// tasks per rank, chunk and micro-batch (forward, backward, or split input/weight gradient),
// pipeline P2P sends on each rank's send streams, data-parallel gradient buckets on its DP
// stream, and the dependencies between them. One representative rank per pipeline stage (the
// data/tensor/context/expert-parallel peers of a stage are symmetric). Durations are not here:
// engine/ attaches them from its per-stage costs.

#include <string>
#include <vector>

#include "xpusim/mapping/schedule.h"

namespace xpusim::mapping {

enum class TaskKind : unsigned char { Compute, PpSend, DpReduce };
enum class Stream : unsigned char { Compute, PpDown, PpUp, Dp };  ///< PpDown: to rank + 1
inline constexpr int kStreamCount = 4;

struct StepTask {
  TaskKind kind = TaskKind::Compute;
  Stream stream = Stream::Compute;
  int rank = 0;
  int chunk = 0;
  int micro_batch = 0;
  Pass pass = Pass::Forward;  ///< Compute: the pass; PpSend: the pass whose output is sent
  int bucket = 0;             ///< DpReduce: bucket i of `buckets`
  int buckets = 1;
  /// DpReduce: the compute task that produces the chunk's last weight gradients; bucket i is
  /// ready after (i + 1)/buckets of it has run.
  int anchor = -1;
};

struct StepPlan {
  std::string schedule;
  PipelineShape shape;
  int chunks_per_rank = 1;
  std::vector<ChunkPlacement> placement;  ///< [rank · chunks_per_rank + chunk]
  std::vector<StepTask> tasks;
  /// Successors of task i: succ[succ_begin[i] .. succ_begin[i + 1]).
  std::vector<int> succ_begin, succ;
  std::vector<int> pred_count;  ///< dependencies of each task (anchors excluded)
  /// DpReduce tasks anchored on task i: anchored[anchored_begin[i] .. anchored_begin[i + 1]).
  std::vector<int> anchored_begin, anchored;
  /// Compute stream order per rank: slots of one or two compute task ids (second = -1).
  std::vector<std::vector<std::pair<int, int>>> order;

  const ChunkPlacement& place(int rank, int chunk) const {
    return placement[static_cast<size_t>(rank * chunks_per_rank + chunk)];
  }
};

/// Builds the graph of `schedule` on `shape`. `buckets[rank · chunks + chunk]` is the number of
/// gradient buckets of that chunk (0: no data-parallel reduction). The shape must be runnable
/// (schedule.refusal(shape) empty); XS_CHECK otherwise.
StepPlan build_step_plan(const Schedule& schedule, const PipelineShape& shape,
                         const std::vector<int>& buckets);

}  // namespace xpusim::mapping
