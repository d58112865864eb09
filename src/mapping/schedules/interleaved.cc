// Megatron's interleaved 1F1B (Narayanan et al. 2021): each rank holds v = vpp model chunks, chunk
// c of rank r being virtual stage c·pp + r; micro-batches go through the ranks v times. Rank r
// runs 2 (pp − r − 1) + (v − 1)·pp warm-up chunk-forwards, then alternates; forwards take groups
// of pp micro-batches chunk by chunk (backwards the chunks in reverse), so the micro-batches per
// step must be a multiple of pp (Megatron raises otherwise).
// Closed form: busy m·v·(F + B) of a chunk (a chunk is 1/v of the stage), bubble (pp − 1) mean
// chunk (F + B), i.e. (pp − 1)/v of a stage; rank r holds min(m·v, 2 (pp − r − 1) + (v − 1)·pp + 1)
// chunk-micro-batches of activations.

#include <algorithm>

#include "builtin.h"

namespace xpusim::mapping {

namespace {

class Interleaved final : public Schedule {
 public:
  std::string name() const override { return "interleaved"; }
  std::string description() const override {
    return "Megatron interleaved 1F1B: vpp chunks per rank, bubble (pp-1)/(vpp·m); micro-batches a multiple of pp";
  }
  std::optional<std::string> refusal(const PipelineShape& s) const override {
    if (s.vpp < 2)
      return "the interleaved schedule needs vpp >= 2 virtual stages per rank, got vpp = " + std::to_string(s.vpp);
    if (s.pp < 2) return "the interleaved schedule needs pp >= 2 pipeline stages, got pp = " + std::to_string(s.pp);
    if (s.micro_batches % s.pp != 0)
      return "the interleaved schedule needs the micro-batches per step to be a multiple of pp: " +
             std::to_string(s.micro_batches) + " micro-batches, pp = " + std::to_string(s.pp);
    return std::nullopt;
  }
  int chunks_per_rank(const PipelineShape& s) const override { return s.vpp; }
  ChunkPlacement placement(const PipelineShape& s, int rank, int) const override {
    return {rank, 1.0 / s.vpp};
  }
  std::vector<std::vector<Hop>> routes(const PipelineShape& s) const override {
    std::vector<Hop> route;
    for (int c = 0; c < s.vpp; ++c)
      for (int r = 0; r < s.pp; ++r) route.push_back(Hop{r, c});
    return {route};
  }
  int route_of(const PipelineShape&, int) const override { return 0; }
  std::vector<Slot> order(const PipelineShape& s, int rank) const override {
    const int pp = s.pp, v = s.vpp;
    auto micro_batch = [=](int k) { return (k / (pp * v)) * pp + k % pp; };
    return detail::one_f_one_b_order(
        (pp - rank - 1) * 2 + (v - 1) * pp, s.micro_batches * v,
        [=](int k) { return ComputeTask{Pass::Forward, (k / pp) % v, micro_batch(k)}; },
        [=](int k) { return ComputeTask{Pass::Backward, v - 1 - (k / pp) % v, micro_batch(k)}; });
  }
  PipelineEstimate estimate(const PipelineShape& s, const PipelineTimes& t) const override {
    PipelineEstimate e;
    e.busy = detail::max_over(t, detail::chunk_work) * (static_cast<double>(s.micro_batches) * s.vpp);
    e.bubble = detail::mean_over(t, detail::chunk_work) * static_cast<double>(s.pp - 1);
    e.pp_comm = t.p2p * (2.0 * (s.pp - 1));
    return e;
  }
  double inflight_chunks(const PipelineShape& s, int rank) const override {
    const long long cap = 2LL * (s.pp - rank - 1) + (s.vpp - 1LL) * s.pp + 1;
    return static_cast<double>(std::min<long long>(static_cast<long long>(s.micro_batches) * s.vpp, cap));
  }
};

}  // namespace

std::shared_ptr<const Schedule> make_interleaved() { return std::make_shared<Interleaved>(); }

}  // namespace xpusim::mapping
