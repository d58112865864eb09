#include "xpusim/mapping/step_plan.h"

#include <utility>

#include "xpusim/core/check.h"

namespace xpusim::mapping {

namespace {

/// Builds a StepPlan: compute tasks from the schedule's orders, then the dependencies of every
/// micro-batch along its route, then the gradient buckets, then the successor lists.
class Builder {
 public:
  Builder(const Schedule& schedule, const PipelineShape& shape)
      : schedule_(schedule), shape_(shape), chunks_(schedule.chunks_per_rank(shape)),
        ids_(static_cast<size_t>(shape.pp) * chunks_ * shape.micro_batches * kPassCount, -1) {
    plan_.schedule = schedule.name();
    plan_.shape = shape;
    plan_.chunks_per_rank = chunks_;
    for (int r = 0; r < shape.pp; ++r)
      for (int c = 0; c < chunks_; ++c) plan_.placement.push_back(schedule.placement(shape, r, c));
  }

  void add_compute_tasks() {
    plan_.order.resize(static_cast<size_t>(shape_.pp));
    for (int r = 0; r < shape_.pp; ++r) {
      for (const Slot& slot : schedule_.order(shape_, r)) {
        const int first = add_compute(r, slot.first);
        const int second = slot.paired ? add_compute(r, slot.second) : -1;
        plan_.order[static_cast<size_t>(r)].emplace_back(first, second);
      }
    }
  }

  void add_route_dependencies() {
    const auto routes = schedule_.routes(shape_);
    for (int mb = 0; mb < shape_.micro_batches; ++mb) {
      const std::vector<Hop>& route = routes[static_cast<size_t>(schedule_.route_of(shape_, mb))];
      const size_t hops = route.size();
      for (size_t h = 1; h < hops; ++h)
        link(forward(route[h - 1], mb), route[h - 1], route[h], Pass::Forward, forward(route[h], mb));
      edges_.emplace_back(forward(route[hops - 1], mb), backward(route[hops - 1], mb));
      for (size_t h = hops - 1; h-- > 0;)
        link(backward(route[h + 1], mb), route[h + 1], route[h], Pass::Backward, backward(route[h], mb));
      for (const Hop& hop : route) add_weight_dependency(hop, mb);
    }
    XS_CHECK(static_cast<size_t>(compute_tasks_ + sends_) == plan_.tasks.size(), "task count mismatch");
    XS_CHECK(expected_compute_ == compute_tasks_, "the schedule runs a task outside its routes");
  }

  void add_gradient_buckets(const std::vector<int>& buckets) {
    XS_CHECK(buckets.size() == static_cast<size_t>(shape_.pp * chunks_), "one bucket count per rank and chunk");
    for (int r = 0; r < shape_.pp; ++r) {
      for (int c = 0; c < chunks_; ++c) {
        const int n = buckets[static_cast<size_t>(r * chunks_ + c)];
        const int anchor = last_weight_gradient(r, c);
        for (int i = 0; i < n; ++i) {
          StepTask t{TaskKind::DpReduce, Stream::Dp, r, c, 0, Pass::Backward, i, n, anchor};
          anchors_.emplace_back(anchor, static_cast<int>(plan_.tasks.size()));
          plan_.tasks.push_back(t);
        }
      }
    }
  }

  StepPlan finish() {
    const size_t n = plan_.tasks.size();
    plan_.pred_count.assign(n, 0);
    plan_.succ_begin = csr(edges_, n, plan_.succ);
    for (const auto& [from, to] : edges_) ++plan_.pred_count[static_cast<size_t>(to)];
    plan_.anchored_begin = csr(anchors_, n, plan_.anchored);
    return std::move(plan_);
  }

 private:
  size_t key(int rank, int chunk, int micro_batch, Pass pass) const {
    return ((static_cast<size_t>(rank) * chunks_ + chunk) * shape_.micro_batches + micro_batch) * kPassCount +
           static_cast<size_t>(pass);
  }
  int add_compute(int rank, const ComputeTask& t) {
    XS_CHECK(t.chunk >= 0 && t.chunk < chunks_ && t.micro_batch >= 0 && t.micro_batch < shape_.micro_batches,
             "the schedule names a chunk or micro-batch out of range");
    int& id = ids_[key(rank, t.chunk, t.micro_batch, t.pass)];
    XS_CHECK(id < 0, "the schedule runs a task twice");
    id = static_cast<int>(plan_.tasks.size());
    plan_.tasks.push_back(StepTask{TaskKind::Compute, Stream::Compute, rank, t.chunk, t.micro_batch, t.pass});
    ++compute_tasks_;
    return id;
  }
  int find(const Hop& hop, int mb, Pass pass) const { return ids_[key(hop.rank, hop.chunk, mb, pass)]; }
  int forward(const Hop& hop, int mb) const {
    const int id = find(hop, mb, Pass::Forward);
    XS_CHECK(id >= 0, "the schedule misses a forward");
    return id;
  }
  int backward(const Hop& hop, int mb) const {
    const int full = find(hop, mb, Pass::Backward), input = find(hop, mb, Pass::BackwardInput);
    XS_CHECK((full >= 0) != (input >= 0), "the schedule must run each backward exactly once");
    return full >= 0 ? full : input;
  }
  void add_weight_dependency(const Hop& hop, int mb) {
    const int input = find(hop, mb, Pass::BackwardInput), weight = find(hop, mb, Pass::BackwardWeight);
    XS_CHECK((input >= 0) == (weight >= 0), "the schedule splits a backward without its W");
    expected_compute_ += input >= 0 ? 3 : 2;
    if (input >= 0) edges_.emplace_back(input, weight);
  }
  /// `from` on hop `src` feeds `to` on hop `dst`: directly on one rank, else through a send.
  void link(int from, const Hop& src, const Hop& dst, Pass pass, int to) {
    if (src.rank == dst.rank) {
      edges_.emplace_back(from, to);
      return;
    }
    const int send = static_cast<int>(plan_.tasks.size());
    const Stream stream = dst.rank > src.rank ? Stream::PpDown : Stream::PpUp;
    plan_.tasks.push_back(StepTask{TaskKind::PpSend, stream, src.rank, src.chunk, plan_.tasks[static_cast<size_t>(from)].micro_batch, pass});
    ++sends_;
    edges_.emplace_back(from, send);
    edges_.emplace_back(send, to);
  }
  int last_weight_gradient(int rank, int chunk) const {
    int last = -1;
    for (const auto& [a, b] : plan_.order[static_cast<size_t>(rank)])
      for (int id : {a, b}) {
        if (id < 0) continue;
        const StepTask& t = plan_.tasks[static_cast<size_t>(id)];
        if (t.chunk == chunk && (t.pass == Pass::Backward || t.pass == Pass::BackwardWeight)) last = id;
      }
    XS_CHECK(last >= 0, "a chunk without a backward");
    return last;
  }
  static std::vector<int> csr(const std::vector<std::pair<int, int>>& edges, size_t n, std::vector<int>& out) {
    std::vector<int> begin(n + 1, 0);
    for (const auto& e : edges) ++begin[static_cast<size_t>(e.first) + 1];
    for (size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
    out.assign(edges.size(), 0);
    std::vector<int> fill(begin.begin(), begin.end() - 1);
    for (const auto& [from, to] : edges) out[static_cast<size_t>(fill[static_cast<size_t>(from)]++)] = to;
    return begin;
  }

  const Schedule& schedule_;
  PipelineShape shape_;
  int chunks_;
  std::vector<int> ids_;
  StepPlan plan_;
  std::vector<std::pair<int, int>> edges_, anchors_;
  int compute_tasks_ = 0, sends_ = 0, expected_compute_ = 0;
};

}  // namespace

StepPlan build_step_plan(const Schedule& schedule, const PipelineShape& shape, const std::vector<int>& buckets) {
  const auto refused = schedule.refusal(shape);
  XS_CHECK(!refused, "build_step_plan on a shape the schedule refuses");
  Builder b(schedule, shape);
  b.add_compute_tasks();
  b.add_route_dependencies();
  b.add_gradient_buckets(buckets);
  return b.finish();
}

}  // namespace xpusim::mapping
