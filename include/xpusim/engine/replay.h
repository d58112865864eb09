#pragma once
// Replay of a Chakra execution trace (one ChakraTrace per rank) on a catalog system, with
// ASTRA-sim's semantics (../shared/reference/formats.md §2.5; docs/replay.md): per rank a DAG
// over data and control dependencies; at most one in-flight accelerator compute op, one in-flight
// communication/memory op and one CPU op per rank (receives are exempt), so compute and
// communication overlap; a collective starts when every member of its group has issued it and
// is costed by net::collective_cost on the system's topology; sends and receives match by
// (src, dst, tag) in order. Integer-picosecond time, (time, sequence) event order: deterministic.

#include <map>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/core/sim_time.h"
#include "xpusim/hw/spec.h"
#include "xpusim/workload/chakra.h"

namespace xpusim::engine {

struct ReplayOptions {
  /// Process groups by pg_name (ASTRA-sim's --comm-group-configuration); "" and "0" always mean
  /// every rank and need no entry.
  std::map<std::string, std::vector<long long>> comm_groups;
  /// Replay every node by its duration_micros, communication included, with no matching across
  /// ranks (ASTRA-sim's replay-only mode).
  bool use_durations = false;
};

/// What the replay needs: the per-rank traces (rank r = traces[r]), the system and the
/// calibration in use (chip efficiencies, network efficiencies).
struct ReplayInput {
  std::vector<workload::ChakraTrace> traces;
  const hw::SystemSpec* system = nullptr;
  const calib::Params* calibration = nullptr;
  ReplayOptions options;
};

/// Where an op ran on its rank.
enum class ReplayLane { Compute = 0, Comm = 1, Cpu = 2, Recv = 3 };
/// "compute", "communication", "cpu", "recv".
std::string replay_lane_name(ReplayLane l);

/// One executed node (for the timeline).
struct ReplayEvent {
  long long rank = 0;
  ReplayLane lane = ReplayLane::Compute;
  std::uint64_t node_id = 0;
  std::string name;
  workload::ChakraNodeType type = workload::ChakraNodeType::Comp;
  std::string detail;          ///< collective kind, "send", "recv", "roofline", "duration", ...
  core::SimTime issue_ps = 0;  ///< when the rank issued it (a collective may wait for its peers)
  core::SimTime start_ps = 0;
  core::SimTime end_ps = 0;
  std::uint64_t num_ops = 0;
  std::uint64_t bytes = 0;
};

struct ReplayRankStats {
  core::SimTime finish_ps = 0;
  core::SimTime compute_ps = 0;  ///< accelerator compute busy time
  core::SimTime comm_ps = 0;     ///< communication and memory ops, start to end (waits excluded)
  core::SimTime cpu_ps = 0;      ///< CPU ops
  core::SimTime wait_ps = 0;     ///< time collectives and receives waited for their peers
  long long nodes = 0;
};

/// Per collective kind (one entry per matched collective or message, not per rank).
struct ReplayCollectiveStats {
  long long count = 0;
  std::uint64_t bytes = 0;  ///< comm_size summed
  core::SimTime time_ps = 0;
};

struct ReplayResult {
  core::SimTime total_ps = 0;  ///< the last rank's finish
  std::vector<ReplayRankStats> ranks;
  long long critical_rank = 0;  ///< the rank that finishes last (lowest index on ties)
  std::map<std::string, long long> node_counts;                 ///< by NodeType name, all ranks
  std::map<std::string, ReplayCollectiveStats> collectives;     ///< by kind ("all-reduce", "send-recv", ...)
  std::vector<ReplayEvent> events;  ///< in issue order per rank, ranks interleaved by time
  std::vector<std::string> notes;   ///< approximations taken (irregular groups, ...)
};

/// Runs the replay. InputError (naming the file, node and value) for a dependency on a missing
/// id, a dependency cycle, an unknown or unsupported collective, a process group that is not
/// defined, collectives or messages that do not match across ranks, or a deadlock.
ReplayResult replay(const ReplayInput& in);

/// ASTRA-sim's "exposed communication": a rank's finish minus its compute time.
inline core::SimTime exposed_comm_ps(const ReplayRankStats& r) { return r.finish_ps - r.compute_ps; }

}  // namespace xpusim::engine
