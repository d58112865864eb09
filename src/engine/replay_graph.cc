// Builds and checks the replay graphs: dependencies, cycles, node classification and timing
// rules (docs/replay.md), process groups, and the pairing of collectives and messages.

#include "replay_graph.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "xpusim/compute/chip_model.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/dtype.h"
#include "xpusim/core/suggest.h"

namespace xpusim::engine::detail {

using workload::ChakraCommType;
using workload::ChakraNode;
using workload::ChakraNodeType;

namespace {

using workload::fail_in_trace;

std::string where_of(const ChakraNode& n, int index) {
  return "node[" + std::to_string(index) + "] (id " + std::to_string(n.id) + " '" + n.name + "')";
}

/// Successor lists and dependency counts over data_deps ∪ ctrl_deps.
void resolve_deps(RankGraph& g) {
  std::unordered_map<std::uint64_t, int> index;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) index[g.ops[i].node->id] = i;
  for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) {
    const ChakraNode& n = *g.ops[i].node;
    std::set<int> parents;
    for (const auto* list : {&n.data_deps, &n.ctrl_deps}) {
      const char* field = list == &n.data_deps ? "data_deps" : "ctrl_deps";
      for (std::uint64_t id : *list) {
        auto it = index.find(id);
        if (it == index.end())
          fail_in_trace(g.file, where_of(n, i) + "." + field, "depends on a node id that is not in the file", std::to_string(id),
              "the id of a node of the same file");
        parents.insert(it->second);
      }
    }
    for (int p : parents) g.ops[p].successors.push_back(i);
    g.ops[i].deps = static_cast<int>(parents.size());
  }
}

/// Kahn's algorithm; on a cycle, walks it and names its nodes.
void check_acyclic(const RankGraph& g) {
  const int n = static_cast<int>(g.ops.size());
  std::vector<int> deps(n);
  std::vector<int> ready;
  for (int i = 0; i < n; ++i)
    if ((deps[i] = g.ops[i].deps) == 0) ready.push_back(i);
  int seen = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++seen;
    for (int s : g.ops[i].successors)
      if (--deps[s] == 0) ready.push_back(s);
  }
  if (seen == n) return;
  // Every node left has a parent left: follow parents until one repeats.
  std::vector<std::vector<int>> parents(n);
  for (int i = 0; i < n; ++i)
    for (int s : g.ops[i].successors) parents[s].push_back(i);
  int at = 0;
  while (deps[at] == 0) ++at;
  std::vector<int> path, pos(n, -1);
  while (pos[at] < 0) {
    pos[at] = static_cast<int>(path.size());
    path.push_back(at);
    at = *std::find_if(parents[at].begin(), parents[at].end(), [&](int p) { return deps[p] > 0; });
  }
  std::string cycle;
  for (std::size_t k = static_cast<std::size_t>(pos[at]); k < path.size(); ++k)
    cycle += std::to_string(g.ops[path[k]].node->id) + " '" + g.ops[path[k]].node->name + "' <- ";
  cycle += std::to_string(g.ops[at].node->id);
  fail_in_trace(g.file, "data_deps/ctrl_deps", "dependency cycle (node <- the node it depends on)", cycle,
      "an acyclic graph");
}

/// Process groups: "0" (all ranks) and the ones given, checked against the rank count.
std::map<std::string, ReplayGroup> resolve_groups(const ReplayInput& in, std::vector<std::string>& notes) {
  const auto n = static_cast<long long>(in.traces.size());
  std::map<std::string, ReplayGroup> groups;
  ReplayGroup all{"0", {}, {n, 1}};
  for (long long r = 0; r < n; ++r) all.ranks.push_back(r);
  groups["0"] = all;
  for (const auto& [id, given] : in.options.comm_groups) {
    if (id.empty() || id == "0") continue;
    std::vector<long long> ranks = given;
    std::sort(ranks.begin(), ranks.end());
    std::vector<std::string> listed;
    for (long long r : given) listed.push_back(std::to_string(r));
    if (ranks.empty() || std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end() || ranks.front() < 0 ||
        ranks.back() >= n)
      core::fail("--comm-groups." + id, "a group needs distinct ranks of the trace", "[" + core::join(listed) + "]",
                 "ranks in 0.." + std::to_string(n - 1) + ", no repeats");
    long long stride = ranks.size() > 1 ? ranks[1] - ranks[0] : 1;
    for (std::size_t k = 1; k < ranks.size(); ++k)
      if (ranks[k] - ranks[k - 1] != stride) stride = 0;
    if (stride == 0) {
      notes.push_back("group '" + id + "' is not evenly strided; its collectives are costed as " +
                      std::to_string(ranks.size()) + " consecutive ranks");
      stride = 1;
    }
    groups[id] = ReplayGroup{id, ranks, {static_cast<long long>(ranks.size()), stride}};
  }
  return groups;
}

net::CollectiveKind collective_kind(const RankGraph& g, int i, ChakraCommType t) {
  switch (t) {
    case ChakraCommType::AllReduce: return net::CollectiveKind::AllReduce;
    case ChakraCommType::AllGather: return net::CollectiveKind::AllGather;
    case ChakraCommType::ReduceScatter:
    case ChakraCommType::ReduceScatterBlock: return net::CollectiveKind::ReduceScatter;
    case ChakraCommType::AllToAll: return net::CollectiveKind::AllToAll;
    case ChakraCommType::Broadcast: return net::CollectiveKind::Broadcast;
    case ChakraCommType::Barrier: return net::CollectiveKind::AllReduce;  // zero bytes: a sync
    default: break;
  }
  fail_in_trace(g.file, node_where(g, i) + ".attr.comm_type", "unsupported collective", workload::chakra_comm_type_name(t),
      "ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER(_BLOCK), ALL_TO_ALL, BROADCAST or BARRIER (docs/replay.md)");
}

core::SimTime us_to_ps(std::uint64_t us) { return static_cast<core::SimTime>(us) * static_cast<core::SimTime>(1e6); }

/// What classify() needs besides the node.
struct Context {
  const ReplayInput& in;
  const compute::ChipModel& chip;
  const std::map<std::string, ReplayGroup>& groups;
  long long rank = 0;
};

void classify_comp(const Context& c, const RankGraph& g, int i, ReplayOp& op) {
  const ChakraNode& n = *op.node;
  op.kind = OpKind::Timed;
  op.uses_slot = true;
  op.lane = n.is_cpu_op ? ReplayLane::Cpu : ReplayLane::Compute;
  op.detail = "duration";
  op.duration_ps = us_to_ps(n.duration_us);
  if (n.is_cpu_op || c.in.options.use_durations || !n.num_ops || !n.tensor_size) return;
  core::Dtype d = core::Dtype::Bf16;
  if (!n.dtype.empty()) {
    auto parsed = core::parse_dtype(n.dtype);
    if (!parsed)
      fail_in_trace(g.file, node_where(g, i) + ".attr.dtype", "unknown dtype", n.dtype, core::join(core::all_dtype_names()));
    d = *parsed;
  }
  const core::Seconds math = core::flops(static_cast<double>(*n.num_ops)) / c.chip.achievable_flops(c.chip.best_dtype(d));
  const core::Seconds memory = c.chip.memory_time(core::bytes(static_cast<double>(*n.tensor_size)));
  op.duration_ps = core::to_sim_time(core::max(math, memory));
  op.detail = "roofline";
}

void classify_collective(const Context& c, const RankGraph& g, int i, ReplayOp& op) {
  const ChakraNode& n = *op.node;
  if (!n.comm_type) fail_in_trace(g.file, node_where(g, i) + ".attr.comm_type", "collective without comm_type", {}, "an integer 0..9");
  if (!n.comm_size && *n.comm_type != ChakraCommType::Barrier)
    fail_in_trace(g.file, node_where(g, i) + ".attr.comm_size", "collective without comm_size", {}, "bytes per rank");
  op.kind = OpKind::Collective;
  op.lane = ReplayLane::Comm;
  op.uses_slot = true;
  op.coll = collective_kind(g, i, *n.comm_type);
  op.bytes = *n.comm_type == ChakraCommType::Barrier ? 0 : *n.comm_size;
  op.detail = *n.comm_type == ChakraCommType::Barrier ? "barrier" : net::collective_kind_name(op.coll);
  op.group = n.pg_name.empty() ? "0" : n.pg_name;
  auto it = c.groups.find(op.group);
  if (it == c.groups.end())
    fail_in_trace(g.file, node_where(g, i) + ".attr.pg_name", "process group not defined", n.pg_name,
        "\"\" or \"0\" (all ranks), or a group of --comm-groups FILE ({\"" + n.pg_name + "\": [ranks]})");
  if (!std::binary_search(it->second.ranks.begin(), it->second.ranks.end(), c.rank))
    fail_in_trace(g.file, node_where(g, i) + ".attr.pg_name", "rank " + std::to_string(c.rank) + " is not a member of its group",
        n.pg_name, "a group holding rank " + std::to_string(c.rank));
}

void classify_message(const Context& c, const RankGraph& g, int i, ReplayOp& op) {
  const ChakraNode& n = *op.node;
  const bool send = n.type == ChakraNodeType::CommSend;
  const auto ranks = static_cast<long long>(c.in.traces.size());
  const char* own_field = send ? "comm_src" : "comm_dst";
  const char* peer_field = send ? "comm_dst" : "comm_src";
  const std::optional<long long> own = send ? n.comm_src : n.comm_dst;
  const std::optional<long long> peer = send ? n.comm_dst : n.comm_src;
  if (own && *own != c.rank)
    fail_in_trace(g.file, node_where(g, i) + ".attr." + own_field, "must be the file's own rank", std::to_string(*own),
        std::to_string(c.rank));
  if (!peer || *peer < 0 || *peer >= ranks)
    fail_in_trace(g.file, node_where(g, i) + ".attr." + peer_field, "peer rank missing or out of range",
        peer ? std::to_string(*peer) : "absent", "a rank in 0.." + std::to_string(ranks - 1));
  if (!n.comm_size) fail_in_trace(g.file, node_where(g, i) + ".attr.comm_size", "message without comm_size", {}, "bytes");
  op.kind = send ? OpKind::Send : OpKind::Recv;
  op.lane = send ? ReplayLane::Comm : ReplayLane::Recv;
  op.uses_slot = send;
  op.detail = send ? "send" : "recv";
  op.peer = *peer;
  op.tag = n.comm_tag.value_or(0);
  op.bytes = *n.comm_size;
}

void classify(const Context& c, RankGraph& g, int i) {
  ReplayOp& op = g.ops[i];
  const ChakraNode& n = *op.node;
  const bool comm = n.type == ChakraNodeType::CommColl || n.type == ChakraNodeType::CommSend ||
                    n.type == ChakraNodeType::CommRecv;
  if (comm && n.is_cpu_op) fail_in_trace(g.file, node_where(g, i) + ".attr.is_cpu_op", "a communication node cannot be a CPU op", "true", "false");
  switch (n.type) {
    case ChakraNodeType::Comp: return classify_comp(c, g, i, op);
    case ChakraNodeType::CommColl:
      if (!c.in.options.use_durations) return classify_collective(c, g, i, op);
      break;
    case ChakraNodeType::CommSend:
    case ChakraNodeType::CommRecv:
      if (!c.in.options.use_durations) return classify_message(c, g, i, op);
      break;
    case ChakraNodeType::MemLoad:
    case ChakraNodeType::MemStore:
      op.kind = OpKind::Timed;
      op.lane = ReplayLane::Comm;
      op.uses_slot = true;
      op.bytes = n.tensor_size.value_or(0);
      op.detail = n.tensor_size && !c.in.options.use_durations ? "hbm" : "duration";
      op.duration_ps = op.detail == "hbm" ? core::to_sim_time(c.chip.memory_time(core::bytes(static_cast<double>(op.bytes))))
                                          : us_to_ps(n.duration_us);
      return;
    default: op.kind = OpKind::Skip; op.detail = "skipped"; return;
  }
  // --use-durations: communication by its duration, on the communication lane.
  op.kind = OpKind::Timed;
  op.lane = n.type == ChakraNodeType::CommRecv ? ReplayLane::Recv : ReplayLane::Comm;
  op.uses_slot = n.type != ChakraNodeType::CommRecv;
  op.detail = "duration";
  op.bytes = n.comm_size.value_or(0);
  op.duration_ps = us_to_ps(n.duration_us);
}

/// Every group member issues the same number of collectives on the group; every send has a
/// receive (same src, dst, tag) and back.
void check_pairing(const ReplayGraph& graph) {
  std::map<std::string, std::map<long long, long long>> colls;
  std::map<std::tuple<long long, long long, long long>, std::pair<long long, long long>> msgs;  // sends, recvs
  for (std::size_t r = 0; r < graph.ranks.size(); ++r)
    for (const ReplayOp& op : graph.ranks[r].ops) {
      const auto rank = static_cast<long long>(r);
      if (op.kind == OpKind::Collective) ++colls[op.group][rank];
      if (op.kind == OpKind::Send) ++msgs[{rank, op.peer, op.tag}].first;
      if (op.kind == OpKind::Recv) ++msgs[{op.peer, rank, op.tag}].second;
    }
  for (const auto& [id, per_rank] : colls) {
    std::string counts;
    bool same = true;
    for (long long r : graph.groups.at(id).ranks) {
      const long long k = per_rank.count(r) ? per_rank.at(r) : 0;
      same = same && k == per_rank.begin()->second;
      counts += (counts.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + ": " + std::to_string(k);
    }
    if (!same)
      core::fail("collectives of group '" + id + "'", "the group's ranks issue different numbers of collectives", counts,
                 "the same number on every member rank (a collective must be issued by all of its group)");
  }
  for (const auto& [key, n] : msgs)
    if (n.first != n.second) {
      const auto& [src, dst, tag] = key;
      core::fail("messages " + std::to_string(src) + " -> " + std::to_string(dst) + " tag " + std::to_string(tag),
                 "sends and receives do not pair up",
                 std::to_string(n.first) + " sends, " + std::to_string(n.second) + " receives",
                 "one COMM_RECV_NODE on rank " + std::to_string(dst) + " per COMM_SEND_NODE on rank " + std::to_string(src));
    }
}

}  // namespace

std::string node_where(const RankGraph& g, int index) { return where_of(*g.ops[index].node, index); }

ReplayGraph build_replay_graph(const ReplayInput& in) {
  ReplayGraph graph;
  graph.groups = resolve_groups(in, graph.notes);
  const compute::ChipModel chip(in.system->chip, compute::calibration_for(in.system->chip, *in.calibration));
  for (std::size_t r = 0; r < in.traces.size(); ++r) {
    RankGraph g;
    g.file = in.traces[r].file;
    for (const ChakraNode& n : in.traces[r].nodes) {
      ReplayOp op;
      op.node = &n;
      g.ops.push_back(std::move(op));
    }
    resolve_deps(g);
    check_acyclic(g);
    const Context c{in, chip, graph.groups, static_cast<long long>(r)};
    for (int i = 0; i < static_cast<int>(g.ops.size()); ++i) classify(c, g, i);
    graph.ranks.push_back(std::move(g));
  }
  check_pairing(graph);
  return graph;
}

}  // namespace xpusim::engine::detail
