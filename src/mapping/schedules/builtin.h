#pragma once
// The built-in pipeline schedules (one file each) and helpers they share. Private to mapping/.

#include <functional>
#include <memory>

#include "xpusim/mapping/schedule.h"

namespace xpusim::mapping {

std::shared_ptr<const Schedule> make_one_f_one_b();
std::shared_ptr<const Schedule> make_interleaved();
std::shared_ptr<const Schedule> make_dualpipe();

namespace detail {

/// Megatron's 1F1B pattern over `total` chunk-micro-batches: `warmup` forwards, then one forward
/// and one backward alternately, then the remaining backwards.
std::vector<Slot> one_f_one_b_order(int warmup, int total, const std::function<ComputeTask(int)>& fwd,
                                    const std::function<ComputeTask(int)>& bwd);

core::Seconds max_over(const PipelineTimes& t, core::Seconds (*f)(const ChunkTimes&));
core::Seconds mean_over(const PipelineTimes& t, core::Seconds (*f)(const ChunkTimes&));
inline core::Seconds chunk_work(const ChunkTimes& c) { return c.forward + c.backward; }

}  // namespace detail
}  // namespace xpusim::mapping
