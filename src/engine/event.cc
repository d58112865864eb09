// Tier B: event-driven execution of one training step.
//
// The step is mapping/step_plan.h's task graph for the plan's pipeline schedule: one
// representative rank per pipeline stage (data-parallel replicas and the tensor/context/
// expert-parallel peers of a stage are symmetric), so the cost is O(pp × micro-batches × chunks)
// events whatever the chip count. Each rank has a compute stream that runs its schedule's slots
// in order (a slot is one task, or a DualPipe forward/backward pair), two P2P send streams and a
// data-parallel stream that reduces gradient buckets while the last backward of each chunk
// produces them. A straggling chip (TrainScenario::straggler) makes its replica the
// representative one. Time is integer picoseconds; events are ordered by (time, sequence).

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>
#include <vector>

#include "common.h"
#include "pipeline.h"
#include "xpusim/core/sim_time.h"
#include "xpusim/mapping/step_plan.h"
#include "xpusim/net/topology.h"

namespace xpusim::engine {

namespace {

using Ps = core::SimTime;
using mapping::Pass;
using mapping::StepTask;
using mapping::TaskKind;

using core::from_sim_time;
using core::to_sim_time;

/// Durations of the plan's tasks: compute (and the all-to-all part a pair can hide), sends,
/// gradient buckets.
struct TaskTimes {
  std::vector<Ps> duration, a2a;
  double dp_contention = 1.0;
  bool dp_overlap = true;
};

TaskTimes task_times(const mapping::StepPlan& plan, const detail::PipelineCosts& p, const detail::StepCosts& c,
                     bool dp_overlap) {
  TaskTimes t;
  t.duration.resize(plan.tasks.size());
  t.a2a.resize(plan.tasks.size(), 0);
  t.dp_contention = c.dp_contention;
  t.dp_overlap = dp_overlap;
  const Ps p2p = to_sim_time(c.p2p);
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const StepTask& task = plan.tasks[i];
    const detail::RankCost& rc = p.ranks[static_cast<size_t>(task.rank)];
    const mapping::ChunkTimes& ct = rc.chunks[static_cast<size_t>(task.chunk)];
    if (task.kind == TaskKind::PpSend) {
      t.duration[i] = p2p;
    } else if (task.kind == TaskKind::DpReduce) {
      const double share = rc.grad_share[static_cast<size_t>(task.chunk)] / task.buckets;
      t.duration[i] = to_sim_time(c.dp_grad_reduce * share);
    } else if (task.pass == Pass::Forward) {
      t.duration[i] = to_sim_time(ct.forward);
      t.a2a[i] = to_sim_time(ct.forward_a2a);
    } else if (task.pass == Pass::BackwardWeight) {
      t.duration[i] = to_sim_time(ct.weight_grad);
    } else {
      const bool input_only = task.pass == Pass::BackwardInput;
      t.duration[i] = to_sim_time(input_only ? ct.backward - ct.weight_grad : ct.backward);
      t.a2a[i] = to_sim_time(ct.backward_a2a);
    }
  }
  return t;
}

/// The straggler's stage: its compute tasks (not its sends or gradient reductions) take
/// `slowdown` times as long.
int slow_down_straggler(const TrainScenario& s, const mapping::StepPlan& plan, const detail::PipelineCosts& p,
                        TaskTimes& t) {
  if (!(s.straggler.slowdown > 1.0)) return -1;
  const int stage = s.straggler.stage >= 0 ? s.straggler.stage : p.busiest;
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const StepTask& task = plan.tasks[i];
    if (task.rank != stage || task.kind != TaskKind::Compute) continue;
    t.duration[i] = static_cast<Ps>(std::llround(static_cast<double>(t.duration[i]) * s.straggler.slowdown));
  }
  return stage;
}

/// Operator-level detail of the trace: a representative (middle) layer's operators and exposed
/// collectives, repeated for the layers of a chunk and scaled to fill each simulated compute
/// span of the first kDetailedMicroBatches micro-batches (the others stay whole spans).
struct OpDetail {
  detail::LayerDetail layer;
  int layers_per_chunk = 1;
};
constexpr int kDetailedMicroBatches = 2;

struct DetailItem {
  std::string name;
  const char* category;
  int stream;
  core::Seconds time;
  std::vector<std::pair<std::string, double>> args;
};

/// One layer's items in pass order: its operators, then its exposed collectives.
std::vector<DetailItem> layer_items(const detail::LayerDetail& d, bool fwd) {
  std::vector<DetailItem> items;
  for (const auto& op : d.ops) {
    const core::Seconds t = fwd ? op.fwd : op.bwd;
    items.push_back({op.name, "op", kTraceCompute, t,
                     {{"flops", (fwd ? op.flops_fwd : op.flops_bwd).base()},
                      {"hbm_bytes", (fwd ? op.hbm_bytes_fwd : op.hbm_bytes_bwd).base()},
                      {"model_time_us", core::to_seconds(t) * 1e6}}});
  }
  const std::tuple<const char*, const char*, int, core::Seconds> comm[] = {
      {"TP/SP collectives", "tp", kTraceTp, fwd ? d.tp_fwd : d.tp_bwd},
      {"CP ring exchange", "cp", kTraceCp, fwd ? d.cp_fwd : d.cp_bwd},
      {"EP all-to-all", "ep", kTraceEp, fwd ? d.ep_fwd : d.ep_bwd},
      {"FSDP gather/scatter", "fsdp", kTraceFsdp, fwd ? d.fsdp_fwd : d.fsdp_bwd}};
  for (const auto& [name, category, stream, t] : comm)
    if (t.base() > 0) items.push_back({name, category, stream, t, {{"exposed_time_us", core::to_seconds(t) * 1e6}}});
  return items;
}

/// The detail of one compute span [start, start + duration) of `t`, appended to `trace`.
void add_op_detail(std::vector<TraceEvent>& trace, const OpDetail& d, const StepTask& t, Ps start, Ps duration) {
  if (t.micro_batch >= kDetailedMicroBatches || t.pass == Pass::BackwardWeight) return;
  const std::vector<DetailItem> items = layer_items(d.layer, t.pass == Pass::Forward);
  double layer_ps = 0;
  for (const auto& it : items) layer_ps += static_cast<double>(to_sim_time(it.time));
  if (layer_ps <= 0) return;
  const double scale = static_cast<double>(duration) / (layer_ps * d.layers_per_chunk);
  double at = static_cast<double>(start);
  for (int layer = 0; layer < d.layers_per_chunk; ++layer) {
    for (const auto& it : items) {
      const double span = static_cast<double>(to_sim_time(it.time)) * scale;
      auto args = it.args;
      args.emplace_back("layer_in_chunk", layer);
      args.emplace_back("micro_batch", t.micro_batch);
      trace.push_back(TraceEvent{it.name, it.category, t.rank, it.stream, std::llround(at), std::llround(span), true,
                                 std::move(args)});
      at += span;
    }
  }
}

/// Runs the graph: dependencies, stream order, (time, sequence) event order.
class Simulation {
 public:
  Simulation(const mapping::StepPlan& plan, const TaskTimes& times, std::vector<TraceEvent>* trace,
             const OpDetail* detail = nullptr)
      : plan_(plan), times_(times), trace_(trace), detail_(detail), pending_(plan.pred_count),
        ready_(plan.tasks.size(), 0), start_(plan.tasks.size(), -1), ranks_(static_cast<size_t>(plan.shape.pp)) {}

  void run() {
    for (size_t i = 0; i < plan_.tasks.size(); ++i)
      if (plan_.tasks[i].kind == TaskKind::PpSend && pending_[i] == 0) start_comm(static_cast<int>(i), 0);
    for (int r = 0; r < plan_.shape.pp; ++r) try_start(r);
    while (!events_.empty()) {
      const auto [time, sequence, task] = events_.top();
      events_.pop();
      (void)sequence;
      ++processed_;
      complete(task, time);
    }
    for (int r = 0; r < plan_.shape.pp; ++r)
      XS_CHECK(rank(r).next_slot == plan_.order[static_cast<size_t>(r)].size(), "pipeline schedule deadlocked");
  }
  long long events() const { return processed_; }
  Ps compute_end(int r) const { return ranks_[static_cast<size_t>(r)].compute_free; }
  Ps comm_end(int r) const { return ranks_[static_cast<size_t>(r)].stream_free[static_cast<size_t>(mapping::Stream::Dp)]; }
  Ps busy(int r) const { return ranks_[static_cast<size_t>(r)].busy; }
  Ps exposed_a2a(int r) const { return ranks_[static_cast<size_t>(r)].exposed_a2a; }

 private:
  struct RankState {
    size_t next_slot = 0;
    bool computing = false;
    Ps compute_free = 0, busy = 0, exposed_a2a = 0;
    Ps stream_free[mapping::kStreamCount] = {0, 0, 0, 0};
  };
  RankState& rank(int r) { return ranks_[static_cast<size_t>(r)]; }

  void push(Ps time, int task) { events_.emplace(time, sequence_++, task); }

  /// Starts the rank's next slot when the stream is idle and every task of the slot is ready.
  void try_start(int r) {
    RankState& st = rank(r);
    const auto& order = plan_.order[static_cast<size_t>(r)];
    if (st.computing || st.next_slot >= order.size()) return;
    const auto [a, b] = order[st.next_slot];
    if (pending_[static_cast<size_t>(a)] > 0 || (b >= 0 && pending_[static_cast<size_t>(b)] > 0)) return;
    Ps start = std::max(st.compute_free, ready_[static_cast<size_t>(a)]);
    if (b >= 0) start = std::max(start, ready_[static_cast<size_t>(b)]);
    const Ps duration = slot_duration(st, a, b);
    st.computing = true;
    st.compute_free = start + duration;
    st.busy += duration;
    for (int id : {a, b})
      if (id >= 0) begin(id, start, duration);
    push(start + duration, a);
  }

  /// One task, or a pair whose all-to-all hides under the other's compute: max(compute, a2a).
  Ps slot_duration(RankState& st, int a, int b) {
    const auto& d = times_.duration;
    const auto& x = times_.a2a;
    if (b < 0) {
      st.exposed_a2a += x[static_cast<size_t>(a)];
      return d[static_cast<size_t>(a)];
    }
    const Ps compute = d[static_cast<size_t>(a)] - x[static_cast<size_t>(a)] + d[static_cast<size_t>(b)] -
                       x[static_cast<size_t>(b)];
    const Ps duration = std::max(compute, x[static_cast<size_t>(a)] + x[static_cast<size_t>(b)]);
    st.exposed_a2a += duration - compute;
    return duration;
  }

  void begin(int id, Ps start, Ps duration) {
    start_[static_cast<size_t>(id)] = start;
    const StepTask& t = plan_.tasks[static_cast<size_t>(id)];
    if (trace_) {
      const bool fwd = t.pass == Pass::Forward;
      std::string name = std::string(mapping::pass_letter(t.pass)) + std::to_string(t.micro_batch);
      if (plan_.chunks_per_rank > 1) name += "." + std::to_string(t.chunk);
      trace_->push_back(TraceEvent{name, fwd ? "forward" : "backward", t.rank, kTraceCompute, start, duration, false, {}});
      if (detail_) add_op_detail(*trace_, *detail_, t, start, duration);
    }
    for (int k = plan_.anchored_begin[static_cast<size_t>(id)]; k < plan_.anchored_begin[static_cast<size_t>(id) + 1]; ++k)
      release_bucket(plan_.anchored[static_cast<size_t>(k)], start, duration);
  }

  /// Gradient bucket i of n is ready after (i + 1)/n of its chunk's last backward (at its end
  /// without DP overlap); buckets reduced while the backward still runs share its links.
  void release_bucket(int id, Ps anchor_start, Ps anchor_duration) {
    const StepTask& t = plan_.tasks[static_cast<size_t>(id)];
    const Ps anchor_end = anchor_start + anchor_duration;
    const Ps ready = times_.dp_overlap ? anchor_start + anchor_duration * (t.bucket + 1) / t.buckets : anchor_end;
    Ps& free = rank(t.rank).stream_free[static_cast<size_t>(t.stream)];
    const Ps start = std::max(free, ready);
    const Ps base = times_.duration[static_cast<size_t>(id)];
    const Ps duration = start < anchor_end ? static_cast<Ps>(static_cast<double>(base) * times_.dp_contention) : base;
    free = start + duration;
    if (trace_ && base > 0)
      trace_->push_back(TraceEvent{"grad-reduce", "comm", t.rank, kTraceDp, start, duration, false,
                                   {{"bucket", t.bucket}, {"buckets", t.buckets}}});
  }

  void start_comm(int id, Ps ready) {
    const StepTask& t = plan_.tasks[static_cast<size_t>(id)];
    Ps& free = rank(t.rank).stream_free[static_cast<size_t>(t.stream)];
    const Ps start = std::max(free, ready);
    free = start + times_.duration[static_cast<size_t>(id)];
    if (trace_ && t.kind == TaskKind::PpSend)
      trace_->push_back(TraceEvent{std::string(t.stream == mapping::Stream::PpDown ? "send down " : "send up ") +
                                       mapping::pass_letter(t.pass) + std::to_string(t.micro_batch),
                                   "pp", t.rank, kTracePp, start, free - start, false,
                                   {{"micro_batch", t.micro_batch}}});
    push(free, id);
  }

  void complete(int id, Ps time) {
    const StepTask& t = plan_.tasks[static_cast<size_t>(id)];
    if (t.kind == TaskKind::Compute) {
      RankState& st = rank(t.rank);
      const auto [a, b] = plan_.order[static_cast<size_t>(t.rank)][st.next_slot];
      st.computing = false;
      ++st.next_slot;
      release_successors(a, time);
      if (b >= 0) release_successors(b, time);
      try_start(t.rank);
    } else {
      release_successors(id, time);
    }
  }

  void release_successors(int id, Ps time) {
    for (int k = plan_.succ_begin[static_cast<size_t>(id)]; k < plan_.succ_begin[static_cast<size_t>(id) + 1]; ++k) {
      const int next = plan_.succ[static_cast<size_t>(k)];
      ready_[static_cast<size_t>(next)] = std::max(ready_[static_cast<size_t>(next)], time);
      if (--pending_[static_cast<size_t>(next)] > 0) continue;
      const StepTask& n = plan_.tasks[static_cast<size_t>(next)];
      if (n.kind == TaskKind::Compute) try_start(n.rank);
      else start_comm(next, ready_[static_cast<size_t>(next)]);
    }
  }

  const mapping::StepPlan& plan_;
  const TaskTimes& times_;
  std::vector<TraceEvent>* trace_;
  const OpDetail* detail_;
  std::vector<int> pending_;
  std::vector<Ps> ready_, start_;
  std::vector<RankState> ranks_;
  using Event = std::tuple<Ps, long long, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  long long sequence_ = 0, processed_ = 0;
};

/// Step time and breakdown from the simulated streams: the pipeline ends when every rank's
/// compute and gradient reduction are done (plus the exposed ZeRO parameter gather).
void fill_result(const TrainScenario& s, const detail::StepCosts& c, const detail::PipelineCosts& p,
                 const Simulation& sim, TrainResult& r) {
  Ps end = 0, compute_end = 0;
  for (int st = 0; st < p.shape.pp; ++st) {
    const Ps gather = to_sim_time(detail::exposed_param_gather(c, p, st));
    end = std::max(end, std::max(sim.compute_end(st), sim.comm_end(st)) + gather);
    compute_end = std::max(compute_end, sim.compute_end(st));
  }
  const Ps opt = to_sim_time(c.optimizer);
  if (!r.trace.empty())
    for (int st = 0; st < p.shape.pp; ++st)
      r.trace.push_back(TraceEvent{"optimizer", "optimizer", st, kTraceCompute, end, opt, false, {}});
  r.step_time = from_sim_time(end + opt) + s.framework.step_overhead;
  const detail::RankCost& busiest = p.ranks[static_cast<size_t>(p.busiest)];
  r.breakdown = busiest.per_step;
  if (p.schedule->pairs_chunks()) r.breakdown.ep_comm = from_sim_time(sim.exposed_a2a(p.busiest));
  r.breakdown.dp_comm = from_sim_time(end - compute_end) + busiest.fsdp;
  r.breakdown.pp_comm = c.p2p * (2.0 * (p.shape.pp - 1));
  r.breakdown.optimizer = c.optimizer;
  r.breakdown.other = s.framework.step_overhead;
  Ps most_busy = 0;
  for (int st = 0; st < p.shape.pp; ++st) most_busy = std::max(most_busy, sim.busy(st));
  r.breakdown.bubble = core::max(core::Seconds{}, from_sim_time(compute_end - most_busy) - r.breakdown.pp_comm);
}

}  // namespace

TrainResult simulate_event(const TrainScenario& s, bool want_trace) {
  if (auto bad = detail::check(s)) return *bad;
  const net::Topology topo = net::Topology::build(*s.system, s.plan.chips(), detail::topology_options(s));
  const compute::ChipModel chip(s.system->chip, detail::calibration(s));
  const detail::StepCosts c = detail::step_costs(s, topo, chip);
  const detail::PipelineCosts p = detail::pipeline_costs(s, c);
  std::vector<int> buckets;
  for (const auto& rc : p.ranks) buckets.insert(buckets.end(), rc.buckets.begin(), rc.buckets.end());
  const mapping::StepPlan plan = mapping::build_step_plan(*p.schedule, p.shape, buckets);
  TaskTimes times = task_times(plan, p, c, s.framework.dp_overlap);
  const int straggler_stage = slow_down_straggler(s, plan, p, times);

  TrainResult r;
  r.executor = "event";
  r.straggler_stage = straggler_stage;
  OpDetail detail;
  if (want_trace) {
    detail.layer = detail::layer_detail(s, topo, chip, s.model.layers / 2);
    detail.layers_per_chunk = std::max(1, p.ranks.front().layers / std::max(1, p.chunks));
  }
  Simulation sim(plan, times, want_trace ? &r.trace : nullptr, want_trace ? &detail : nullptr);
  sim.run();
  r.events = sim.events();
  fill_result(s, c, p, sim, r);
  detail::finish(s, c, r);
  return r;
}

}  // namespace xpusim::engine
