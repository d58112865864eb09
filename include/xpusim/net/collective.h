#pragma once
// Collective communication cost: α-β models of ring, double-binary tree, halving-doubling,
// direct and hierarchical algorithms over a Topology, an explicit registry of those algorithms,
// and flow-level max-min fair sharing among concurrent collectives. Every call is O(dims).
// Model: docs/network.md.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/registry.h"
#include "xpusim/core/units.h"
#include "xpusim/net/topology.h"

namespace xpusim::net {

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather, AllToAll, Broadcast, SendRecv };
/// "all-reduce", "reduce-scatter", "all-gather", "all-to-all", "broadcast", "send-recv".
std::string collective_kind_name(CollectiveKind k);

/// Default pipelining chunk (NCCL: 4 MiB buffer / 8 slices = 512 KiB).
inline constexpr core::Bytes kDefaultChunk = core::kib(512);

struct CollectiveOptions {
  std::string algorithm = "auto";  ///< "auto" or a registry name (see builtin_algorithms())
  core::Bytes chunk = kDefaultChunk;  ///< pipelining granularity (tree, broadcast)
};

struct CollectiveCost {
  core::Seconds time;
  std::string algorithm;             ///< the one chosen ("none" for a group of one)
  core::Bytes scale_up_bytes;        ///< bytes this rank sent over scale-up links
  core::Bytes scale_out_bytes;       ///< bytes this rank sent over the scale-out fabric
  core::Seconds latency;             ///< the α part of `time` (the rest is bandwidth time)
};

/// What an algorithm sees: the group laid onto the topology and the call.
struct AlgorithmInput {
  const Topology* topo = nullptr;
  const GroupMapping* map = nullptr;
  CollectiveKind kind = CollectiveKind::AllReduce;
  core::Bytes bytes;   ///< semantics as in collective_cost()
  core::Bytes chunk;
};

/// What an algorithm returns: time = latency + bandwidth; `busy[d]` is the time dim d's links
/// are busy at full rate for this rank (used to share links among concurrent collectives).
struct AlgorithmResult {
  core::Seconds latency;
  core::Seconds bandwidth;
  std::vector<core::Seconds> busy;  ///< indexed like Topology::dims()
  core::Bytes scale_up_bytes;
  core::Bytes scale_out_bytes;
};

/// A collective algorithm: returns nothing when it does not apply to this kind/group.
struct CollectiveAlgorithm {
  std::function<std::optional<AlgorithmResult>(const AlgorithmInput&)> cost;
};
using AlgorithmRegistry = core::Registry<CollectiveAlgorithm>;

/// Adds ring, tree, halving_doubling, direct, hierarchical.
void register_builtin_algorithms(AlgorithmRegistry& reg);
/// A registry filled by register_builtin_algorithms (built once, immutable).
const AlgorithmRegistry& builtin_algorithms();

/// `bytes` semantics: all-reduce: the buffer size per rank; reduce-scatter: the full input
/// per rank; all-gather: the full gathered output per rank; all-to-all: total bytes each rank
/// sends (incl. its own share); broadcast: buffer size; send/recv: message size between two
/// ranks `stride` apart (group.size is ignored for send/recv).
/// "auto" picks the minimum-time valid algorithm (as NCCL's tuner does). InputError naming
/// "algorithm" for an unknown name or one that does not apply; "group" when it does not fit.
CollectiveCost collective_cost(const Topology& topo, CollectiveKind kind, core::Bytes bytes,
                               Group group, const CollectiveOptions& opt = {});
CollectiveCost collective_cost(const Topology& topo, CollectiveKind kind, core::Bytes bytes,
                               Group group, const CollectiveOptions& opt,
                               const AlgorithmRegistry& reg);

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::AllReduce;
  core::Bytes bytes;
  Group group;
  CollectiveOptions options;
};

/// Concurrent collectives that start together and share links: flow-level max-min fair sharing
/// of each link class (each dim's per-chip links) among the collectives that use it at the same
/// time; returns each one's time (and its algorithm, chosen as if alone).
std::vector<CollectiveCost> concurrent_costs(const Topology& topo,
                                             const std::vector<CollectiveRequest>& reqs);

}  // namespace xpusim::net
