// Tier B: event-driven execution of one training step.
//
// One representative rank per pipeline stage is simulated (data-parallel replicas and the
// tensor/context/expert-parallel peers of a stage are symmetric: they run the same tasks at the
// same times), so the cost is O(pp × micro-batches × vpp) events whatever the chip count.
// Each stage has a compute stream that runs its 1F1B (or interleaved 1F1B) task list in order,
// and a communication stream that reduces gradient buckets as the last backward of each model
// chunk produces them. Time is integer picoseconds; events are ordered by (time, sequence).

#include <algorithm>
#include <cmath>
#include <queue>
#include <tuple>
#include <vector>

#include "common.h"
#include "xpusim/net/topology.h"

namespace xpusim::engine {

namespace {

using Ps = long long;

Ps to_ps(core::Seconds s) { return static_cast<Ps>(std::llround(core::to_seconds(s) * 1e12)); }
core::Seconds from_ps(Ps p) { return core::seconds(static_cast<double>(p) * 1e-12); }

struct Task {
  bool fwd = true;
  int mb = 0, chunk = 0;
};

/// The order in which stage `s` runs its forward and backward chunks (Megatron's schedules).
std::vector<Task> schedule(int s, int pp, int m, int v) {
  std::vector<Task> out;
  const bool interleaved = v > 1 && m % pp == 0;
  const int vv = interleaved ? v : 1;
  const int total = m * vv;
  auto fwd_task = [&](int k) {
    if (!interleaved) return Task{true, k, 0};
    return Task{true, (k / (pp * vv)) * pp + k % pp, (k / pp) % vv};
  };
  auto bwd_task = [&](int k) {
    if (!interleaved) return Task{false, k, 0};
    return Task{false, (k / (pp * vv)) * pp + k % pp, vv - 1 - (k / pp) % vv};
  };
  int warmup = interleaved ? (pp - s - 1) * 2 + (vv - 1) * pp : pp - s - 1;
  warmup = std::min(warmup, total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(fwd_task(f));
  while (f < total) {
    out.push_back(fwd_task(f++));
    out.push_back(bwd_task(b++));
  }
  while (b < total) out.push_back(bwd_task(b++));
  return out;
}

}  // namespace

TrainResult simulate_event(const TrainScenario& s, bool want_trace) {
  if (auto bad = detail::check(s)) return *bad;
  const net::Topology topo = net::Topology::build(*s.system, s.plan.chips(), detail::topology_options(s));
  const compute::ChipModel chip(s.system->chip, detail::calibration(s));
  const detail::StepCosts c = detail::step_costs(s, topo, chip);
  const auto& plan = s.plan;
  const int pp = plan.pp;
  const int m = static_cast<int>(c.micro_batches);
  const bool interleaved = plan.vpp > 1 && m % pp == 0;
  const int v = interleaved ? plan.vpp : 1;

  // Durations per stage per chunk.
  std::vector<Ps> fdur(static_cast<size_t>(pp)), bdur(static_cast<size_t>(pp));
  for (int st = 0; st < pp; ++st) {
    fdur[static_cast<size_t>(st)] = to_ps(c.stages[static_cast<size_t>(st)].fwd() / v);
    bdur[static_cast<size_t>(st)] = to_ps(c.stages[static_cast<size_t>(st)].bwd() / v);
  }
  const Ps p2p = to_ps(c.p2p);

  // Completion times: done[fwd][stage][mb][chunk], -1 = not yet.
  auto idx = [&](int st, int mb, int ch) {
    return (static_cast<size_t>(st) * static_cast<size_t>(m) + static_cast<size_t>(mb)) * static_cast<size_t>(v) +
           static_cast<size_t>(ch);
  };
  std::vector<Ps> fdone(static_cast<size_t>(pp) * m * v, -1), bdone(static_cast<size_t>(pp) * m * v, -1);
  std::vector<std::vector<Task>> lists(static_cast<size_t>(pp));
  for (int st = 0; st < pp; ++st) lists[static_cast<size_t>(st)] = schedule(st, pp, m, v);
  std::vector<size_t> next(static_cast<size_t>(pp), 0);
  std::vector<Ps> free_at(static_cast<size_t>(pp), 0);
  std::vector<bool> busy(static_cast<size_t>(pp), false);

  // Ready time of a task's input, or -1 when its dependency has not completed.
  auto ready = [&](int st, const Task& t) -> Ps {
    if (t.fwd) {
      if (st > 0) {
        Ps d = fdone[idx(st - 1, t.mb, t.chunk)];
        return d < 0 ? -1 : d + p2p;
      }
      if (t.chunk > 0) {
        Ps d = fdone[idx(pp - 1, t.mb, t.chunk - 1)];
        return d < 0 ? -1 : d + p2p;
      }
      return 0;
    }
    if (st < pp - 1) {
      Ps d = bdone[idx(st + 1, t.mb, t.chunk)];
      return d < 0 ? -1 : d + p2p;
    }
    if (t.chunk < v - 1) {
      Ps d = bdone[idx(0, t.mb, t.chunk + 1)];
      return d < 0 ? -1 : d + p2p;
    }
    Ps d = fdone[idx(st, t.mb, t.chunk)];
    return d;
  };

  TrainResult r;
  r.executor = "event";
  // Event queue of task completions: (time, sequence, stage).
  using Ev = std::tuple<Ps, long long, int>;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<Ev>> q;
  long long seq = 0;
  // Start every stage's next task whose input is ready; returns when none can start.
  std::vector<Ps> last_bwd_start(static_cast<size_t>(pp) * v, -1), last_bwd_end(static_cast<size_t>(pp) * v, -1);
  std::vector<int> bwd_seen(static_cast<size_t>(pp) * v, 0);
  auto try_start = [&](int st, Ps now) {
    auto& i = next[static_cast<size_t>(st)];
    if (busy[static_cast<size_t>(st)] || i >= lists[static_cast<size_t>(st)].size()) return;
    const Task& t = lists[static_cast<size_t>(st)][i];
    const Ps rd = ready(st, t);
    if (rd < 0) return;
    const Ps start = std::max({now, rd, free_at[static_cast<size_t>(st)]});
    const Ps dur = t.fwd ? fdur[static_cast<size_t>(st)] : bdur[static_cast<size_t>(st)];
    busy[static_cast<size_t>(st)] = true;
    free_at[static_cast<size_t>(st)] = start + dur;
    q.emplace(start + dur, seq++, st);
    if (!t.fwd) {
      const size_t k = static_cast<size_t>(st) * v + static_cast<size_t>(t.chunk);
      if (++bwd_seen[k] == m) {
        last_bwd_start[k] = start;
        last_bwd_end[k] = start + dur;
      }
    }
    if (want_trace) {
      r.trace.push_back(TraceEvent{std::string(t.fwd ? "F" : "B") + std::to_string(t.mb) +
                                       (v > 1 ? "." + std::to_string(t.chunk) : ""),
                                   t.fwd ? "forward" : "backward", st, 0, start, dur});
    }
  };
  for (int st = 0; st < pp; ++st) try_start(st, 0);
  while (!q.empty()) {
    auto [t, sq, st] = q.top();
    q.pop();
    ++r.events;
    (void)sq;
    const Task& done = lists[static_cast<size_t>(st)][next[static_cast<size_t>(st)]];
    (done.fwd ? fdone : bdone)[idx(st, done.mb, done.chunk)] = t;
    busy[static_cast<size_t>(st)] = false;
    ++next[static_cast<size_t>(st)];
    // A completion can unblock this stage and its neighbours (and stage 0 / pp-1 for chunks).
    try_start(st, t);
    if (st > 0) try_start(st - 1, t);
    if (st < pp - 1) try_start(st + 1, t);
    try_start(0, t);
    try_start(pp - 1, t);
  }
  for (int st = 0; st < pp; ++st)
    XS_CHECK(next[static_cast<size_t>(st)] == lists[static_cast<size_t>(st)].size(),
             "pipeline schedule deadlocked");

  // Gradient reduction per stage: buckets of each chunk become ready during the last backward
  // of that chunk and run in order on the stage's communication stream.
  const detail::StageCost* worst = &c.stages[0];
  for (const auto& st : c.stages)
    if (st.params > worst->params) worst = &st;
  Ps end = 0;
  Ps compute_end_max = 0;
  for (int st = 0; st < pp; ++st) {
    const auto& sc = c.stages[static_cast<size_t>(st)];
    const double share = worst->params > 0 ? sc.params / worst->params : 0.0;
    const int nb = std::max(1, detail::dp_buckets(sc) / v);
    const Ps bucket = to_ps(c.dp_grad_reduce * (share / (static_cast<double>(nb) * v)));
    Ps comm_free = 0;
    for (int ch = v - 1; ch >= 0; --ch) {
      const size_t k = static_cast<size_t>(st) * v + static_cast<size_t>(ch);
      const Ps b0 = last_bwd_start[k], b1 = last_bwd_end[k];
      for (int i = 0; i < nb; ++i) {
        const Ps rd = s.framework.dp_overlap ? b0 + (b1 - b0) * (i + 1) / nb : b1;
        const Ps start = std::max(comm_free, rd);
        // Buckets reduced while the backward still runs share links with its TP collectives.
        const Ps dur = start < b1 ? static_cast<Ps>(static_cast<double>(bucket) * c.dp_contention) : bucket;
        comm_free = start + dur;
        if (want_trace && bucket > 0)
          r.trace.push_back(TraceEvent{"grad-reduce", "comm", st, 1, start, dur});
      }
    }
    const Ps compute_end = free_at[static_cast<size_t>(st)];
    compute_end_max = std::max(compute_end_max, compute_end);
    const Ps gather = to_ps(detail::exposed_bucketed(c.dp_param_gather * share, sc.fwd(), detail::dp_buckets(sc)));
    end = std::max(end, std::max(compute_end, comm_free) + gather);
  }
  const Ps opt = to_ps(c.optimizer);
  if (want_trace) {
    for (int st = 0; st < pp; ++st) r.trace.push_back(TraceEvent{"optimizer", "optimizer", st, 0, end, opt});
  }
  r.step_time = from_ps(end + opt) + s.framework.step_overhead;

  // Breakdown from the slowest stage's work; the rest of the pipeline time is bubble.
  const detail::StageCost* ws = &c.stages[0];
  for (const auto& st : c.stages)
    if (st.fwd() + st.bwd() > ws->fwd() + ws->bwd()) ws = &st;
  const double md = static_cast<double>(m);
  r.breakdown.compute = (ws->fwd_compute + ws->bwd_compute + ws->recompute) * md;
  r.breakdown.tp_comm = ws->tp_exposed * md;
  r.breakdown.cp_comm = ws->cp_exposed * md;
  r.breakdown.ep_comm = ws->ep_exposed * md;
  r.breakdown.dp_comm = from_ps(end - compute_end_max) + ws->fsdp_exposed * md;
  r.breakdown.pp_comm = c.p2p * (2.0 * (pp - 1));
  r.breakdown.optimizer = c.optimizer;
  r.breakdown.other = s.framework.step_overhead;
  const core::Seconds busy_total = (ws->fwd() + ws->bwd()) * md;
  r.breakdown.bubble = core::max(core::Seconds{}, from_ps(compute_end_max) - busy_total - r.breakdown.pp_comm);
  detail::finish(s, c, r);
  return r;
}

}  // namespace xpusim::engine
