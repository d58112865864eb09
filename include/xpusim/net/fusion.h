#pragma once
// Traffic between two systems of different chips (heterogeneous serving, mixed training): over
// one NVLink Fusion domain when both name it (hw::SystemSpec::fusion_domain) and their chips fit
// in it, else over the scale-out fabric. Either way a transfer runs at the slower endpoint's
// per-chip rate (per direction, after the fabric's efficiency) and pays the larger start-up.

#include <string>

#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"
#include "xpusim/net/topology.h"

namespace xpusim::net {

struct CrossLink {
  bool fusion = false;               ///< inside one NVLink Fusion domain (scale-up)
  std::string fabric;                ///< "nvlink-fusion" or "scale-out"
  std::string domain;                ///< the Fusion domain (fusion only)
  core::ByteRate rate_per_direction; ///< per chip: the slower endpoint's, times the efficiency
  core::Seconds latency;             ///< the larger start-up of the two endpoints
  std::string slower_system;         ///< the system whose port rate governs
  std::string why_not_fusion;        ///< scale-out: why the Fusion link does not apply
};

/// The link between `chips_a` chips of `a` and `chips_b` chips of `b`.
CrossLink cross_link(const hw::SystemSpec& a, long long chips_a, const hw::SystemSpec& b, long long chips_b,
                     const NetworkParams& params);

/// Time for each sending chip to move `bytes_per_chip` to its partner over the link.
core::Seconds cross_link_time(const CrossLink& link, core::Bytes bytes_per_chip);

}  // namespace xpusim::net
