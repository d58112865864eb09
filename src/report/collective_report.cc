#include "xpusim/report/collective_report.h"

#include <nlohmann/json.hpp>

#include "xpusim/core/format.h"

namespace xpusim::report {

double nccl_bus_factor(net::CollectiveKind kind, long long ranks) {
  const double n = static_cast<double>(ranks);
  switch (kind) {
    case net::CollectiveKind::AllReduce: return 2.0 * (n - 1.0) / n;
    case net::CollectiveKind::ReduceScatter:
    case net::CollectiveKind::AllGather:
    case net::CollectiveKind::AllToAll: return (n - 1.0) / n;
    case net::CollectiveKind::Broadcast:
    case net::CollectiveKind::SendRecv: return 1.0;
  }
  return 1.0;
}

namespace {

struct Bandwidths {
  double algbw_gb_s = 0, busbw_gb_s = 0;
};

Bandwidths bandwidths(const CollectiveQuery& q, const net::CollectiveCost& c) {
  Bandwidths b;
  const double t = core::to_seconds(c.time);
  if (t <= 0) return b;
  b.algbw_gb_s = core::to_bytes(q.bytes) / t / 1e9;
  b.busbw_gb_s = b.algbw_gb_s * nccl_bus_factor(q.kind, q.chips);
  return b;
}

}  // namespace

Json collective_document(const Provenance& provenance, const CollectiveQuery& q, const net::CollectiveCost& c) {
  const Bandwidths b = bandwidths(q, c);
  const Json inputs = {{"system", q.system},
                       {"chips", q.chips},
                       {"op", net::collective_kind_name(q.kind)},
                       {"bytes", static_cast<long long>(core::to_bytes(q.bytes))},
                       {"algorithm", q.algorithm}};
  Json j;
  j["algorithm"] = c.algorithm;
  j["time_s"] = core::to_seconds(c.time);
  j["latency_s"] = core::to_seconds(c.latency);
  j["algbw_gb_s"] = b.algbw_gb_s;
  j["busbw_gb_s"] = b.busbw_gb_s;
  j["bus_factor"] = nccl_bus_factor(q.kind, q.chips);
  j["scale_up_bytes"] = static_cast<long long>(core::to_bytes(c.scale_up_bytes));
  j["scale_out_bytes"] = static_cast<long long>(core::to_bytes(c.scale_out_bytes));
  return document("collective", provenance, inputs, j);
}

std::string collective_text(const CollectiveQuery& q, const net::CollectiveCost& c) {
  const Bandwidths b = bandwidths(q, c);
  std::string out = core::strformat("%s of %s B per chip over %lld chips of %s (algorithm %s)\n",
                                    net::collective_kind_name(q.kind).c_str(),
                                    core::fmt_num(core::to_bytes(q.bytes), 6).c_str(), q.chips,
                                    q.system.c_str(), c.algorithm.c_str());
  out += core::strformat("  time          %s us (latency part %s us)\n",
                         core::fmt_num(core::to_seconds(c.time) * 1e6, 5).c_str(),
                         core::fmt_num(core::to_seconds(c.latency) * 1e6, 5).c_str());
  out += core::strformat("  algbw         %s GB/s\n", core::fmt_num(b.algbw_gb_s, 5).c_str());
  out += core::strformat("  busbw         %s GB/s (bus factor %s, as nccl-tests)\n",
                         core::fmt_num(b.busbw_gb_s, 5).c_str(),
                         core::fmt_num(nccl_bus_factor(q.kind, q.chips), 4).c_str());
  out += core::strformat("  bytes sent    %s B scale-up, %s B scale-out (per chip)\n",
                         core::fmt_num(core::to_bytes(c.scale_up_bytes), 6).c_str(),
                         core::fmt_num(core::to_bytes(c.scale_out_bytes), 6).c_str());
  return out;
}

}  // namespace xpusim::report
