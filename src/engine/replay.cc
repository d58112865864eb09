// Runs the replay graphs (replay_graph.h): a discrete-event loop over integer picoseconds with
// (time, sequence) order. Per rank, ready nodes wait in FIFO order for their lane's one slot
// (compute, communication, CPU); receives and skipped nodes need none. A collective starts when
// the last member of its group issues it; a send is eager (its transfer starts when issued) and
// its receive completes when both the data has arrived and the receive is ready.

#include "xpusim/engine/replay.h"

#include <cstdlib>
#include <deque>
#include <queue>

#include "replay_graph.h"
#include "xpusim/core/check.h"
#include "xpusim/core/diagnostics.h"

namespace xpusim::engine {

std::string replay_lane_name(ReplayLane l) {
  switch (l) {
    case ReplayLane::Compute: return "compute";
    case ReplayLane::Comm: return "communication";
    case ReplayLane::Cpu: return "cpu";
    case ReplayLane::Recv: return "recv";
  }
  return "compute";
}

namespace {

using detail::OpKind;
using detail::ReplayOp;
using core::SimTime;

struct Event {
  SimTime time = 0;
  long long seq = 0;
  long long rank = 0;
  int op = 0;
  bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct OpState {
  SimTime issue = -1, start = -1, end = -1;
  bool done = false;
};

/// Lanes with one in-flight slot: compute, communication, cpu (the enum's first values).
constexpr int kSlottedLanes = static_cast<int>(ReplayLane::Recv);

struct RankState {
  std::vector<OpState> ops;
  std::deque<int> queue[kSlottedLanes];  ///< ready ops per slotted lane
  bool busy[kSlottedLanes] = {};
  long long done = 0;
};

/// A collective instance: the k-th collective of a group, issued by some of its members.
struct Pending {
  std::vector<std::pair<long long, int>> issued;  ///< (rank, op)
};

using Channel = std::tuple<long long, long long, long long>;  ///< (src, dst, tag)

class Sim {
 public:
  Sim(detail::ReplayGraph& g, const net::Topology& topo) : g_(g), topo_(topo) {
    ranks_.resize(g_.ranks.size());
    for (std::size_t r = 0; r < g_.ranks.size(); ++r) ranks_[r].ops.resize(g_.ranks[r].ops.size());
    group_counter_.resize(g_.ranks.size());
  }

  ReplayResult run() {
    for (long long r = 0; r < static_cast<long long>(ranks_.size()); ++r) {
      for (int i = 0; i < static_cast<int>(g_.ranks[r].ops.size()); ++i)
        if (g_.ranks[r].ops[i].deps == 0) ready(r, i, 0);
      pump(r, 0);
    }
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      finish(e.rank, e.op, e.time);
      pump(e.rank, e.time);
    }
    check_all_done();
    return collect();
  }

 private:
  ReplayOp& op(long long r, int i) { return g_.ranks[r].ops[i]; }
  void schedule(long long r, int i, SimTime t) { events_.push({t, seq_++, r, i}); }

  void ready(long long r, int i, SimTime now) {
    const ReplayOp& o = op(r, i);
    if (o.uses_slot) ranks_[r].queue[static_cast<int>(o.lane)].push_back(i);
    else issue(r, i, now);
  }

  void pump(long long r, SimTime now) {
    RankState& s = ranks_[r];
    for (int lane = 0; lane < kSlottedLanes; ++lane)
      if (!s.busy[lane] && !s.queue[lane].empty()) {
        const int i = s.queue[lane].front();
        s.queue[lane].pop_front();
        s.busy[lane] = true;
        issue(r, i, now);
      }
  }

  void issue(long long r, int i, SimTime now) {
    OpState& st = ranks_[r].ops[i];
    st.issue = now;
    switch (op(r, i).kind) {
      case OpKind::Skip:
      case OpKind::Timed:
        st.start = now;
        schedule(r, i, now + op(r, i).duration_ps);
        return;
      case OpKind::Collective: return issue_collective(r, i, now);
      case OpKind::Send: return issue_send(r, i, now);
      case OpKind::Recv: return issue_recv(r, i, now);
    }
  }

  void issue_collective(long long r, int i, SimTime now) {
    const ReplayOp& o = op(r, i);
    const long long k = group_counter_[r][o.group]++;
    Pending& p = pending_[{o.group, k}];
    if (!p.issued.empty()) check_match(p.issued.front(), {r, i}, k);
    p.issued.push_back({r, i});
    const detail::ReplayGroup& grp = g_.groups.at(o.group);
    if (p.issued.size() < grp.ranks.size()) return;
    const net::CollectiveCost c = cost(o, grp);
    const SimTime end = now + core::to_sim_time(c.time);
    for (const auto& [pr, pi] : p.issued) {
      ranks_[pr].ops[pi].start = now;
      op(pr, pi).duration_ps = end - now;
      schedule(pr, pi, end);
    }
    ReplayCollectiveStats& s = out_.collectives[o.detail];
    ++s.count;
    s.bytes += o.bytes;
    s.time_ps += end - now;
    pending_.erase({o.group, k});
  }

  net::CollectiveCost cost(const ReplayOp& o, const detail::ReplayGroup& grp) {
    return net::collective_cost(topo_, o.coll, core::bytes(static_cast<double>(o.bytes)), grp.group);
  }

  void check_match(std::pair<long long, int> first, std::pair<long long, int> now, long long k) {
    const ReplayOp& a = op(first.first, first.second);
    const ReplayOp& b = op(now.first, now.second);
    if (a.detail == b.detail && a.bytes == b.bytes) return;
    auto describe = [](const ReplayOp& o) { return o.detail + " of " + std::to_string(o.bytes) + " bytes"; };
    workload::fail_in_trace(g_.ranks[now.first].file, detail::node_where(g_.ranks[now.first], now.second),
                            "collective #" + std::to_string(k) + " of group '" + b.group + "' does not match rank " +
                                std::to_string(first.first) + "'s " +
                                detail::node_where(g_.ranks[first.first], first.second) + " (" + describe(a) + ")",
                            describe(b), "the same collective kind and comm_size on every rank of the group, in the same order");
  }

  void issue_send(long long r, int i, SimTime now) {
    const ReplayOp& o = op(r, i);
    SimTime transfer = 0;
    if (o.peer != r)
      transfer = core::to_sim_time(net::collective_cost(topo_, net::CollectiveKind::SendRecv,
                                                        core::bytes(static_cast<double>(o.bytes)), {2, std::abs(o.peer - r)})
                                       .time);
    ranks_[r].ops[i].start = now;
    op(r, i).duration_ps = transfer;
    schedule(r, i, now + transfer);
    ReplayCollectiveStats& s = out_.collectives["send-recv"];
    ++s.count;
    s.bytes += o.bytes;
    s.time_ps += transfer;
    const Channel ch{r, o.peer, o.tag};
    arrivals_[ch].push_back({now, now + transfer});
    deliver(ch);
  }

  void issue_recv(long long r, int i, SimTime) {
    const ReplayOp& o = op(r, i);
    const Channel ch{o.peer, r, o.tag};
    waiting_[ch].push_back(i);
    deliver(ch);
  }

  /// Pairs the channel's oldest arrival with its oldest waiting receive.
  void deliver(const Channel& ch) {
    auto& arr = arrivals_[ch];
    auto& wait = waiting_[ch];
    while (!arr.empty() && !wait.empty()) {
      const auto [sent, arrival] = arr.front();
      const int i = wait.front();
      arr.pop_front();
      wait.pop_front();
      const long long dst = std::get<1>(ch);
      OpState& st = ranks_[dst].ops[i];
      st.start = std::max(sent, st.issue);
      const SimTime end = std::max(arrival, st.issue);
      op(dst, i).duration_ps = end - st.start;
      schedule(dst, i, end);
    }
  }

  void finish(long long r, int i, SimTime now) {
    RankState& s = ranks_[r];
    ReplayOp& o = op(r, i);
    OpState& st = s.ops[i];
    st.end = now;
    st.done = true;
    ++s.done;
    if (o.uses_slot) s.busy[static_cast<int>(o.lane)] = false;
    for (int succ : o.successors)
      if (--op(r, succ).deps == 0) ready(r, succ, now);
  }

  void check_all_done();
  ReplayResult collect();

  detail::ReplayGraph& g_;
  const net::Topology& topo_;
  std::vector<RankState> ranks_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  long long seq_ = 0;
  std::vector<std::map<std::string, long long>> group_counter_;
  std::map<std::pair<std::string, long long>, Pending> pending_;
  std::map<Channel, std::deque<std::pair<SimTime, SimTime>>> arrivals_;  ///< (sent, arrival)
  std::map<Channel, std::deque<int>> waiting_;                            ///< receives posted
  ReplayResult out_;
};

/// How many stuck nodes a deadlock diagnostic names.
constexpr std::size_t kStuckNamed = 8;

/// Nothing left to run but nodes unfinished: name what each stuck rank waits for.
void Sim::check_all_done() {
  std::vector<std::string> stuck;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].done == static_cast<long long>(ranks_[r].ops.size())) continue;
    for (int i = 0; i < static_cast<int>(ranks_[r].ops.size()) && stuck.size() < kStuckNamed; ++i) {
      const OpState& st = ranks_[r].ops[i];
      if (st.issue < 0 || st.done) continue;
      const ReplayOp& o = op(static_cast<long long>(r), i);
      std::string what = "rank " + std::to_string(r) + " " + detail::node_where(g_.ranks[r], i);
      if (o.kind == OpKind::Collective) what += " waits for the other ranks of group '" + o.group + "' to issue its " + o.detail;
      else if (o.kind == OpKind::Recv) what += " waits for a message from rank " + std::to_string(o.peer) + " tag " + std::to_string(o.tag);
      stuck.push_back(what);
    }
  }
  bool unfinished = false;
  for (const RankState& s : ranks_) unfinished = unfinished || s.done < static_cast<long long>(s.ops.size());
  if (!unfinished) return;
  std::string all;
  for (const auto& s : stuck) all += (all.empty() ? "" : "; ") + s;
  core::fail("replay", "deadlock: nothing can run and nodes are unfinished: " + all, "",
             "collectives issued in the same order on every rank of a group, and every receive's send reachable");
}

ReplayResult Sim::collect() {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    ReplayRankStats st;
    for (int i = 0; i < static_cast<int>(ranks_[r].ops.size()); ++i) {
      const OpState& s = ranks_[r].ops[i];
      const ReplayOp& o = op(static_cast<long long>(r), i);
      st.finish_ps = std::max(st.finish_ps, s.end);
      ++st.nodes;
      ++out_.node_counts[workload::chakra_node_type_name(o.node->type)];
      if (o.kind == OpKind::Skip) continue;
      const SimTime busy = s.end - s.start;
      if (o.lane == ReplayLane::Compute) st.compute_ps += busy;
      else if (o.lane == ReplayLane::Cpu) st.cpu_ps += busy;
      else st.comm_ps += busy;
      st.wait_ps += s.start - s.issue;
      out_.events.push_back({static_cast<long long>(r), o.lane, o.node->id, o.node->name, o.node->type, o.detail,
                             s.issue, s.start, s.end, o.node->num_ops.value_or(0), o.bytes ? o.bytes : o.node->tensor_size.value_or(0)});
    }
    if (st.finish_ps > out_.total_ps || r == 0) {
      out_.total_ps = st.finish_ps;
      out_.critical_rank = static_cast<long long>(r);
    }
    out_.ranks.push_back(st);
  }
  std::stable_sort(out_.events.begin(), out_.events.end(), [](const ReplayEvent& a, const ReplayEvent& b) {
    return a.start_ps != b.start_ps ? a.start_ps < b.start_ps : a.rank < b.rank;
  });
  out_.notes = g_.notes;
  return out_;
}

}  // namespace

ReplayResult replay(const ReplayInput& in) {
  XS_CHECK(in.system != nullptr && in.calibration != nullptr, "ReplayInput: system and calibration must be set");
  if (in.traces.empty()) core::fail("PREFIX", "no rank files", {}, "at least one PREFIX.<rank>.et");
  net::TopologyOptions opt;
  opt.params = net::network_params(*in.calibration);
  const net::Topology topo = net::Topology::build(*in.system, static_cast<long long>(in.traces.size()), opt);
  detail::ReplayGraph graph = detail::build_replay_graph(in);
  return Sim(graph, topo).run();
}

}  // namespace xpusim::engine
