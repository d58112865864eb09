#pragma once
// Rendering of one collective's cost the way nccl-tests reports it: time, algorithm bandwidth
// (size / time) and bus bandwidth (algbw × the collective's bus factor). Computes nothing new
// beyond those two ratios.

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "xpusim/net/collective.h"
#include "xpusim/report/json_convention.h"

namespace xpusim::report {

/// What was asked: the system, the group (all `chips` ranks, stride 1) and the call.
struct CollectiveQuery {
  std::string system;
  long long chips = 0;
  net::CollectiveKind kind = net::CollectiveKind::AllReduce;
  core::Bytes bytes;            ///< the per-chip buffer, nccl-tests' "size"
  std::string algorithm = "auto";
};

/// nccl-tests' bus factor: all-reduce 2(n−1)/n; reduce-scatter, all-gather and all-to-all
/// (n−1)/n; broadcast and send/recv 1 (nccl-tests doc/PERFORMANCE.md).
double nccl_bus_factor(net::CollectiveKind kind, long long ranks);

/// The whole `collective --json` document: the query under `inputs`, then `algorithm`,
/// `time_s`, `latency_s`, `algbw_gb_s`, `busbw_gb_s`, `bus_factor` and the bytes sent per tier.
Json collective_document(const Provenance& provenance, const CollectiveQuery& q, const net::CollectiveCost& c);
std::string collective_text(const CollectiveQuery& q, const net::CollectiveCost& c);

}  // namespace xpusim::report
