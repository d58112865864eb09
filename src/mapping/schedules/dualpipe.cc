// DualPipe (DeepSeek-V3 technical report, arXiv:2412.19437 §3.2.1; github.com/deepseek-ai/DualPipe):
// micro-batches are fed from both ends of the pipeline. Rank r holds two chunks: chunk 0 is
// pipeline stage r of direction 0 (ranks 0 → pp−1), chunk 1 is stage pp−1−r of direction 1
// (ranks pp−1 → 0), so every stage's weights exist twice. Half the micro-batches go each way.
// In the steady state a forward chunk of one direction and a backward chunk of the other run as
// a pair: the expert all-to-all and P2P communication of each hides under the other's compute.
// Backward is split into input (B) and weight (W) gradients where W fills bubbles.
// The order below is DualPipe's eight steps (dualpipe.py, DualPipe.step) for half-rank
// hr = min(r, pp−1−r); "phase 0" is the direction in which the rank sits at position hr.
// Closed form (report, Table 2): bubble (pp/2 − 1)(F&B + B − 3W), F&B the time of a pair;
// 2× weights; pp + 1 chunk-micro-batches of activations in flight.
// Needs an even pp and an even number of micro-batches m ≥ 2·pp.

#include <algorithm>
#include <deque>

#include "builtin.h"

namespace xpusim::mapping {

namespace {

/// Builds one rank's order with DualPipe's step structure.
class DualOrder {
 public:
  DualOrder(const PipelineShape& s, int rank)
      : half_chunks_(s.micro_batches / 2), second_half_(rank >= s.pp / 2) {}
  void forward(int phase) { out_.push_back(Slot{next_forward(phase), {}, false}); }
  void backward(int phase, bool split) { out_.push_back(Slot{next_backward(phase, split), {}, false}); }
  void weight() {
    out_.push_back(Slot{weights_.front(), {}, false});
    weights_.pop_front();
  }
  void pair(int forward_phase, int backward_phase) {
    const ComputeTask f = next_forward(forward_phase);
    out_.push_back(Slot{f, next_backward(backward_phase, false), true});
  }
  std::vector<Slot> take() { return std::move(out_); }

 private:
  int chunk(int phase) const { return phase ^ (second_half_ ? 1 : 0); }
  ComputeTask next_forward(int phase) {
    const int c = chunk(phase);
    return ComputeTask{Pass::Forward, c, c * half_chunks_ + forwards_[phase]++};
  }
  ComputeTask next_backward(int phase, bool split) {
    const int c = chunk(phase);
    const ComputeTask t{split ? Pass::BackwardInput : Pass::Backward, c, c * half_chunks_ + backwards_[phase]++};
    if (split) weights_.push_back(ComputeTask{Pass::BackwardWeight, c, t.micro_batch});
    return t;
  }
  int half_chunks_;
  bool second_half_;
  int forwards_[2] = {0, 0}, backwards_[2] = {0, 0};
  std::deque<ComputeTask> weights_;
  std::vector<Slot> out_;
};

int half_rank(const PipelineShape& s, int rank) { return std::min(rank, s.pp - 1 - rank); }

/// Paired slots of a rank: 2 per step-4 iteration (the middle ranks run their first one unpaired)
/// and 1 per step-5 iteration.
int paired_slots(const PipelineShape& s, int rank) {
  const int hr = half_rank(s, rank), half = s.pp / 2;
  const int step4 = s.micro_batches / 2 - s.pp + hr + 1, step5 = half - hr - 1;
  return 2 * step4 + step5 - (hr == half - 1 ? 1 : 0);
}

class DualPipe final : public Schedule {
 public:
  std::string name() const override { return "dualpipe"; }
  std::string description() const override {
    return "DeepSeek-V3 bidirectional pipeline: forward/backward chunk pairs hide all-to-all and P2P; "
           "2x weights, m >= 2pp";
  }
  std::optional<std::string> refusal(const PipelineShape& s) const override {
    if (s.vpp > 1)
      return "the dualpipe schedule holds two chunks per rank (one per direction) and takes no vpp, got vpp = " +
             std::to_string(s.vpp);
    if (s.pp < 2 || s.pp % 2 != 0)
      return "the dualpipe schedule needs an even number of pipeline stages, got pp = " + std::to_string(s.pp);
    if (s.micro_batches < 2 * s.pp || s.micro_batches % 2 != 0)
      return "the dualpipe schedule needs an even number of micro-batches per step, at least 2·pp = " +
             std::to_string(2 * s.pp) + ", got " + std::to_string(s.micro_batches);
    return std::nullopt;
  }
  int chunks_per_rank(const PipelineShape&) const override { return 2; }
  ChunkPlacement placement(const PipelineShape& s, int rank, int chunk) const override {
    return {chunk == 0 ? rank : s.pp - 1 - rank, 1.0};
  }
  std::vector<std::vector<Hop>> routes(const PipelineShape& s) const override {
    std::vector<Hop> down, up;
    for (int j = 0; j < s.pp; ++j) {
      down.push_back(Hop{j, 0});
      up.push_back(Hop{s.pp - 1 - j, 1});
    }
    return {down, up};
  }
  int route_of(const PipelineShape& s, int micro_batch) const override {
    return micro_batch < s.micro_batches / 2 ? 0 : 1;
  }
  bool pairs_chunks() const override { return true; }
  int weight_copies() const override { return 2; }
  std::vector<Slot> order(const PipelineShape& s, int rank) const override;
  PipelineEstimate estimate(const PipelineShape& s, const PipelineTimes& t) const override;
  double inflight_chunks(const PipelineShape& s, int) const override {
    return static_cast<double>(std::min(s.micro_batches, s.pp + 1));
  }
};

std::vector<Slot> DualPipe::order(const PipelineShape& s, int rank) const {
  const int hr = half_rank(s, rank), half = s.pp / 2;
  const bool middle = hr == half - 1;
  DualOrder o(s, rank);
  for (int i = 0; i < 2 * (half - hr - 1); ++i) o.forward(0);  // 1: nF0
  for (int i = 0; i < hr + 1; ++i) {                            // 2: nF0F1
    o.forward(0);
    o.forward(1);
  }
  for (int i = 0; i < half - hr - 1; ++i) {  // 3: nB1W1F1
    o.backward(1, true);
    o.weight();
    o.forward(1);
  }
  for (int i = 0; i < s.micro_batches / 2 - s.pp + hr + 1; ++i) {  // 4: nF0B1F1B0
    if (i == 0 && middle) {
      o.forward(0);
      o.backward(1, false);
    } else {
      o.pair(0, 1);
    }
    o.pair(1, 0);
  }
  for (int i = 0; i < half - hr - 1; ++i) {  // 5: nB1F1B0
    o.backward(1, false);
    o.pair(1, 0);
  }
  bool split = false;  // 6: nB1B0, the second half with zero bubble
  for (int i = 0; i < hr + 1; ++i) {
    if (i == (hr + 1) / 2 && hr % 2 == 1) split = true;
    o.backward(1, split);
    if (i == (hr + 1) / 2 && hr % 2 == 0) split = true;
    o.backward(0, split);
  }
  for (int i = 0; i < half - hr - 1; ++i) {  // 7: nWB0
    o.weight();
    o.backward(0, true);
  }
  for (int i = 0; i < hr + 1; ++i) o.weight();  // 8: nW
  return o.take();
}

PipelineEstimate DualPipe::estimate(const PipelineShape& s, const PipelineTimes& t) const {
  auto pair_time = [](const ChunkTimes& c) {
    return core::max(c.forward - c.forward_a2a + c.backward - c.backward_a2a, c.forward_a2a + c.backward_a2a);
  };
  PipelineEstimate e;
  const double m = s.micro_batches;
  core::Seconds pair_sum, backward_sum, weight_sum;
  for (int r = 0; r < s.pp; ++r) {
    const ChunkTimes& c = t.rank[static_cast<size_t>(r)];
    const double pairs = paired_slots(s, r);
    const core::Seconds busy = pair_time(c) * pairs + detail::chunk_work(c) * (m - pairs);
    if (busy > e.busy) {
      e.busy = busy;
      const core::Seconds compute = c.forward - c.forward_a2a + c.backward - c.backward_a2a;
      e.ep_comm = (pair_time(c) - compute) * pairs + (c.forward_a2a + c.backward_a2a) * (m - pairs);
    }
    pair_sum += pair_time(c);
    backward_sum += c.backward;
    weight_sum += c.weight_grad;
  }
  const double n = s.pp;
  e.bubble = core::max(core::Seconds{}, (pair_sum + backward_sum - weight_sum * 3.0) / n * (s.pp / 2 - 1.0));
  e.pp_comm = t.p2p * (2.0 * (s.pp - 1));
  return e;
}

}  // namespace

std::shared_ptr<const Schedule> make_dualpipe() { return std::make_shared<DualPipe>(); }

}  // namespace xpusim::mapping
