// 1F1B (PipeDream-flush, Megatron's default): each rank holds one chunk (its stage); rank r runs
// pp − r − 1 warm-up forwards, then one forward and one backward alternately, then the drain.
// Closed form: the busiest rank's m·(F + B), a bubble of (pp − 1) mean (F + B), and 2 (pp − 1)
// P2P latencies on the critical path; rank r holds min(m, pp − r) micro-batches of activations.

#include <algorithm>

#include "builtin.h"

namespace xpusim::mapping {

namespace {

class OneFOneB final : public Schedule {
 public:
  std::string name() const override { return "1f1b"; }
  std::string description() const override {
    return "one forward one backward (PipeDream-flush), one chunk per rank; bubble (pp-1)/m";
  }
  std::optional<std::string> refusal(const PipelineShape& s) const override {
    if (s.vpp > 1)
      return "the 1f1b schedule runs one model chunk per rank, but vpp = " + std::to_string(s.vpp) +
             " asks for " + std::to_string(s.vpp) + " virtual stages per rank (use the interleaved schedule)";
    return std::nullopt;
  }
  int chunks_per_rank(const PipelineShape&) const override { return 1; }
  ChunkPlacement placement(const PipelineShape&, int rank, int) const override { return {rank, 1.0}; }
  std::vector<std::vector<Hop>> routes(const PipelineShape& s) const override {
    std::vector<Hop> route;
    for (int r = 0; r < s.pp; ++r) route.push_back(Hop{r, 0});
    return {route};
  }
  int route_of(const PipelineShape&, int) const override { return 0; }
  std::vector<Slot> order(const PipelineShape& s, int rank) const override {
    return detail::one_f_one_b_order(
        s.pp - rank - 1, s.micro_batches, [](int k) { return ComputeTask{Pass::Forward, 0, k}; },
        [](int k) { return ComputeTask{Pass::Backward, 0, k}; });
  }
  PipelineEstimate estimate(const PipelineShape& s, const PipelineTimes& t) const override {
    PipelineEstimate e;
    e.busy = detail::max_over(t, detail::chunk_work) * static_cast<double>(s.micro_batches);
    e.bubble = detail::mean_over(t, detail::chunk_work) * static_cast<double>(s.pp - 1);
    e.pp_comm = t.p2p * (2.0 * (s.pp - 1));
    return e;
  }
  double inflight_chunks(const PipelineShape& s, int rank) const override {
    return static_cast<double>(std::min(s.micro_batches, s.pp - rank));
  }
};

}  // namespace

std::shared_ptr<const Schedule> make_one_f_one_b() { return std::make_shared<OneFOneB>(); }

}  // namespace xpusim::mapping
