#include "xpusim/net/fusion.h"

#include <algorithm>

namespace xpusim::net {

namespace {

std::string fusion_refusal(const hw::SystemSpec& a, long long chips_a, const hw::SystemSpec& b, long long chips_b) {
  if (a.fusion_domain.empty() || b.fusion_domain.empty() || a.fusion_domain != b.fusion_domain)
    return "'" + a.id + "' and '" + b.id + "' do not share an NVLink Fusion domain";
  if (chips_a > a.chips_per_domain || chips_b > b.chips_per_domain)
    return "the pools (" + std::to_string(chips_a) + " + " + std::to_string(chips_b) +
           " chips) exceed one Fusion domain's share (" + std::to_string(a.chips_per_domain) + " + " +
           std::to_string(b.chips_per_domain) + ")";
  return "";
}

}  // namespace

CrossLink cross_link(const hw::SystemSpec& a, long long chips_a, const hw::SystemSpec& b, long long chips_b,
                     const NetworkParams& params) {
  CrossLink link;
  link.why_not_fusion = fusion_refusal(a, chips_a, b, chips_b);
  link.fusion = link.why_not_fusion.empty() && !a.scale_up.empty() && !b.scale_up.empty();
  const hw::TopologyDim& da = link.fusion ? a.scale_up.back() : a.scale_out;
  const hw::TopologyDim& db = link.fusion ? b.scale_up.back() : b.scale_out;
  link.fabric = link.fusion ? "nvlink-fusion" : "scale-out";
  if (link.fusion) link.domain = a.fusion_domain;
  const bool a_slower = da.one_direction() <= db.one_direction();
  link.slower_system = a_slower ? a.id : b.id;
  const double eff = link.fusion ? params.nvlink_efficiency : params.scale_out_efficiency;
  link.rate_per_direction = core::min(da.one_direction(), db.one_direction()) * eff;
  link.latency = core::max(da.latency.value, db.latency.value);
  return link;
}

core::Seconds cross_link_time(const CrossLink& link, core::Bytes bytes_per_chip) {
  if (bytes_per_chip.base() <= 0) return core::seconds(0);
  return link.latency + bytes_per_chip / link.rate_per_direction;
}

}  // namespace xpusim::net
