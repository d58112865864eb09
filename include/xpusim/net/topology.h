#pragma once
// Network topologies as compositions of dimensions: the system's scale-up dims inside each
// domain, then the scale-out fabric across domains. A Topology is built once per (system,
// chips) and answers, in O(number of dims), how a communicator group lies on those dims and what
// bandwidth and latency each communication pattern gets there. Model: docs/network.md.

#include <optional>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"

namespace xpusim::net {

/// Fabric family of a dimension; selects the achievable fraction of link peak.
enum class FabricFamily { NvLink, NeuronLink, ScaleOut, Other };
std::string fabric_family_name(FabricFamily f);

/// The only tuning knobs of the network model: achievable fraction of vendor link peak per
/// fabric family, and the latency added per extra switch tier of the scale-out fabric (two hops:
/// up and down). Values and their basis: data/calibration/network.yaml (network_params()).
struct NetworkParams {
  double nvlink_efficiency = 0;      ///< NVLink / NVSwitch
  double neuronlink_efficiency = 0;  ///< NeuronLink / NeuronSwitch
  double scale_out_efficiency = 0;   ///< InfiniBand / EFA / RoCE
  double other_efficiency = 0;       ///< any other scale-up fabric
  core::Seconds switch_hop_latency;  ///< per switch hop above the first scale-out tier
};

/// The network parameters of `params` (network.*).
NetworkParams network_params(const calib::Params& params);

struct TopologyOptions {
  NetworkParams params;
  /// Rail-optimised scale-out: chip k of every domain hangs off rail k, so cross-domain traffic
  /// between chips with the same local index stays inside one rail's switch tree (NCCL arranges
  /// rings/trees this way; PXN forwards all-to-all traffic over scale-up first).
  /// Unset: the system's scale_out.rail_optimized.
  std::optional<bool> rail_optimised;
};

/// A communicator group: `size` ranks; consecutive members are `stride` global ranks apart
/// (global ranks are numbered with the system's dim 0 fastest: chips within a node, nodes within
/// a scale-up domain, domains across the scale-out fabric). Groups are assumed aligned (the
/// first member's coordinates are 0 in every dim the group spans) and, as in SPMD training, all
/// groups of the same shape are assumed to communicate at the same time.
struct Group {
  long long size = 1;
  long long stride = 1;
};

/// One physical dimension of the topology after resolution (efficiency applied).
struct Dim {
  std::string name;
  hw::DimKind kind = hw::DimKind::Switch;
  FabricFamily family = FabricFamily::Other;
  bool scale_out = false;
  long long size = 1;                 ///< coordinates along this dim
  std::vector<long long> shape;       ///< torus/hypercube sub-dims (fastest first); {size} else
  /// Achievable per-chip injection bandwidth into this dim, ONE direction (vendor figure / 2 ×
  /// efficiency).
  core::ByteRate bandwidth;
  core::Seconds latency;              ///< per hop / message start-up
  double oversubscription = 1.0;      ///< fat-tree tapering at the top tier
  int tiers = 1;                      ///< fat-tree tiers
};

/// How a group uses one dim: members along it, and the effective one-direction per-chip
/// bandwidth and per-step latency of each communication pattern there. Patterns:
/// ring  = neighbour exchange (bidirectional ring; multi-dim ring on a torus),
/// hd    = halving-doubling partner exchange,
/// direct = every member to every other at once (switch one-shot, all-to-all),
/// p2p   = one message to one peer.
struct LevelUse {
  int dim = 0;                        ///< index into Topology::dims()
  long long members = 1;              ///< group members along this dim (>1)
  long long stride = 1;               ///< coordinate distance between members (fastest sub-dim)
  std::vector<long long> sub_members; ///< torus/hypercube: members per sub-dim
  std::vector<long long> sub_stride;  ///< torus/hypercube: stride per sub-dim
  bool scale_out = false;
  int tier = 0;                       ///< scale-out: highest fat-tree tier the traffic reaches
  core::ByteRate ring_bw, hd_bw, direct_bw, p2p_bw;
  core::Seconds ring_alpha;           ///< latency of one ring step
  long long ring_steps = 0;           ///< steps of a ring reduce-scatter (m-1, or Σ(m_i-1) on a torus)
  core::Seconds hd_alpha;             ///< latency of one halving-doubling step
  core::Seconds direct_alpha;         ///< latency of a one-shot exchange
  core::Seconds p2p_alpha;            ///< latency of a message to the farthest member
};

/// A group laid onto the dims, fastest first; only dims with more than one member appear.
struct GroupMapping {
  long long size = 1;
  std::vector<LevelUse> levels;
  bool aligned = true;  ///< false when the stride does not divide into the dims (approximated)
};

/// A topology instance: the system's scale-up dims inside each domain + the scale-out fabric
/// across domains, for `chips` chips.
class Topology {
 public:
  /// InputError naming "chips" if chips < 1 or > max_chips, or not a multiple of
  /// chips_per_domain when larger than one domain; naming "scale_up" when the scale-up dims'
  /// sizes do not multiply to chips_per_domain or a torus/hypercube shape is inconsistent.
  static Topology build(const hw::SystemSpec& sys, long long chips,
                        const TopologyOptions& opt);

  long long chips() const { return chips_; }
  long long chips_per_domain() const { return chips_per_domain_; }
  long long domains() const { return domains_; }
  /// Scale-up dims, then the scale-out dim (always present, size = domains()).
  const std::vector<Dim>& dims() const { return dims_; }
  int scale_out_dim() const { return static_cast<int>(dims_.size()) - 1; }
  const TopologyOptions& options() const { return opt_; }
  /// Whether the scale-out fabric is rail-optimised (option, else the system's flag).
  bool rail_optimised() const { return rail_; }

  /// True when the group fits: size >= 1, stride >= 1, (size-1)*stride < chips().
  bool fits(const Group& g) const;
  /// Lays the group onto the dims. InputError naming "group" when it does not fit.
  GroupMapping map(const Group& g) const;

 private:
  long long chips_ = 1, chips_per_domain_ = 1, domains_ = 1;
  bool rail_ = false;
  std::vector<Dim> dims_;
  TopologyOptions opt_;
};

}  // namespace xpusim::net
