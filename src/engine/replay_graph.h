#pragma once
// The replay's per-rank graphs, built and checked before anything runs (engine/replay.cc runs
// them): node ids resolved, dependency cycles refused, each node classified with its lane, its
// duration or its collective/message, and the collectives and messages checked to pair up
// across ranks. Private to the engine.

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "xpusim/engine/replay.h"
#include "xpusim/net/collective.h"
#include "xpusim/net/topology.h"

namespace xpusim::engine::detail {

/// How a node executes.
enum class OpKind { Skip, Timed, Collective, Send, Recv };

/// A process group: its member ranks and how net/ sees it.
struct ReplayGroup {
  std::string id;                  ///< "0" for all ranks
  std::vector<long long> ranks;    ///< sorted
  net::Group group;
};

struct ReplayOp {
  const workload::ChakraNode* node = nullptr;
  OpKind kind = OpKind::Skip;
  ReplayLane lane = ReplayLane::Compute;
  bool uses_slot = false;          ///< occupies its lane's one in-flight slot
  std::string detail;              ///< "roofline", "duration", collective kind, "send", "recv", ...
  core::SimTime duration_ps = 0;   ///< Timed ops and message transfers; collectives: their cost
  std::uint64_t bytes = 0;
  std::string group;               ///< collectives: ReplayGroup id
  net::CollectiveKind coll = net::CollectiveKind::AllReduce;
  long long peer = 0, tag = 0;     ///< send: destination, recv: source
  std::vector<int> successors;
  int deps = 0;                    ///< unresolved dependencies (counted down while running)
};

struct RankGraph {
  std::string file;
  std::vector<ReplayOp> ops;  ///< in file order
};

/// Everything the run needs, checked.
struct ReplayGraph {
  std::vector<RankGraph> ranks;
  std::map<std::string, ReplayGroup> groups;
  std::vector<std::string> notes;
};

/// "FILE: node[i] (id X 'name')" for diagnostics.
std::string node_where(const RankGraph& g, int index);

/// Builds and checks the graphs (InputError as documented on engine::replay).
ReplayGraph build_replay_graph(const ReplayInput& in);

}  // namespace xpusim::engine::detail
