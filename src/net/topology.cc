#include "xpusim/net/topology.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "xpusim/core/diagnostics.h"

namespace xpusim::net {

std::string fabric_family_name(FabricFamily f) {
  switch (f) {
    case FabricFamily::NvLink: return "nvlink";
    case FabricFamily::NeuronLink: return "neuronlink";
    case FabricFamily::ScaleOut: return "scale-out";
    case FabricFamily::Other: return "other";
  }
  return "other";
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

FabricFamily family_of(const hw::TopologyDim& d, const hw::SystemSpec& sys) {
  const std::string n = lower(d.name);
  if (n.find("nvlink") != std::string::npos || n.find("nvswitch") != std::string::npos)
    return FabricFamily::NvLink;
  if (n.find("neuron") != std::string::npos) return FabricFamily::NeuronLink;
  return sys.chip.family == hw::ChipFamily::Trainium ? FabricFamily::NeuronLink
                                                     : FabricFamily::NvLink;
}

double efficiency(FabricFamily f, const NetworkParams& p) {
  switch (f) {
    case FabricFamily::NvLink: return p.nvlink_efficiency;
    case FabricFamily::NeuronLink: return p.neuronlink_efficiency;
    case FabricFamily::ScaleOut: return p.scale_out_efficiency;
    case FabricFamily::Other: return p.other_efficiency;
  }
  return p.other_efficiency;
}

bool is_pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

double log2ll(long long v) { return std::log2(static_cast<double>(v)); }

// All-to-all rates from the bisection (docs/network.md, "All-to-all and the bisection"). In an
// all-to-all of S bytes per rank among m members, each pair exchanges S/m, so a cut into two
// halves carries m·S/4 bytes each way. A rate R here means: the share S·(m−1)/m that leaves a
// rank takes S·(m−1)/m / R, which equals the time the cut needs.

/// Cut across one sub-dim of a ring/torus with `ms` members at stride `stride` (links shared by
/// the `stride` interleaved groups), `full` when the ring closes (two links cross the cut, else
/// one), in a group of `m` members: (m/ms)·links·b carries m·S/4 ⇒ R = 4·links·b·(m−1)/(m·ms).
core::ByteRate torus_cut_rate(core::ByteRate both_links_one_direction, long long ms, long long stride,
                              bool full, long long m) {
  const core::ByteRate link = both_links_one_direction / 2.0 / static_cast<double>(stride);
  const double links = full ? 2.0 : 1.0;
  const double md = static_cast<double>(m);
  return link * (4.0 * links * (md - 1.0) / (md * static_cast<double>(ms)));
}

/// Hypercube of m = 2^r members: a cut across one spanned sub-dim has m/2 links of rate `link`
/// ⇒ R = 2·link·(m−1)/m.
core::ByteRate hypercube_all_to_all_rate(core::ByteRate link, long long m) {
  const double md = static_cast<double>(m);
  return link * (2.0 * (md - 1.0) / md);
}

/// Smallest tier ℓ in [1, tiers] whose subtree (fanout^ℓ endpoints) covers `span` endpoints.
int tier_for_span(long long span, long long endpoints, int tiers) {
  if (tiers <= 1 || span <= 1) return 1;
  const double f = std::ceil(std::pow(static_cast<double>(endpoints), 1.0 / tiers) - 1e-9);
  const long long fanout = std::max<long long>(2, static_cast<long long>(f));
  long long cover = fanout;
  for (int l = 1; l < tiers; ++l) {
    if (cover >= span) return l;
    cover = cover > endpoints ? cover : cover * fanout;
  }
  return tiers;
}

}  // namespace

namespace {

std::vector<long long> sub_dim_shape(const hw::TopologyDim& s, const std::string& path, core::Diagnostics& diags) {
  std::vector<long long> shape;
  if (s.kind != hw::DimKind::Torus && s.kind != hw::DimKind::Hypercube) return {s.size};
  if (s.shape.empty()) {
    if (s.kind == hw::DimKind::Torus) return {s.size};
    if (!is_pow2(s.size)) {
      diags.error(path + ".size", "a hypercube's size must be a power of two", std::to_string(s.size), "2^k");
    }
    for (long long v = s.size; v > 1; v /= 2) shape.push_back(2);
    return shape;
  }
  long long p = 1;
  for (int a : s.shape) {
    p *= a;
    shape.push_back(a);
    if (s.kind == hw::DimKind::Hypercube && a != 2) {
      diags.error(path + ".shape", "every hypercube sub-dimension has size 2", std::to_string(a), "2");
    }
  }
  if (p != s.size) {
    diags.error(path + ".shape", "shape does not multiply to the dimension's size", std::to_string(p),
                std::to_string(s.size));
  }
  return shape;
}

/// Resolves one scale-up dim of the catalog (shape of a torus/hypercube, efficiency applied).
Dim resolve_scale_up(const hw::TopologyDim& s, const std::string& path, const hw::SystemSpec& sys,
                 const NetworkParams& params, core::Diagnostics& diags) {
  Dim d;
  d.name = s.name;
  d.kind = s.kind;
  d.family = family_of(s, sys);
  d.size = s.size;
  d.shape = sub_dim_shape(s, path, diags);
  if (d.shape.empty()) d.shape.push_back(1);
  if (s.size > 1 && s.bandwidth_per_chip.value.base() <= 0) {
    diags.error(path + ".bandwidth_per_chip", "bandwidth must be positive", {}, "> 0");
  }
  // D5: vendor figures add both directions; one direction is half.
  d.bandwidth = s.bandwidth_per_chip.value * (0.5 * efficiency(d.family, params));
  d.latency = s.latency.value;
  d.oversubscription = std::max(1.0, s.oversubscription);
  d.tiers = std::max(1, s.tiers);
  return d;
}

void check_chips(const hw::SystemSpec& sys, long long chips) {
  if (sys.chips_per_domain < 1) {
    core::fail("chips_per_domain", "chips per domain must be at least 1", std::to_string(sys.chips_per_domain), ">= 1");
  }
  if (chips < 1) core::fail("chips", "a topology needs at least one chip", std::to_string(chips), ">= 1");
  const long long max_chips = sys.max_chips.value;
  if (max_chips > 0 && chips > max_chips) {
    core::fail("chips", "more chips than the system '" + sys.id + "' allows", std::to_string(chips),
               "<= " + std::to_string(max_chips));
  }
}

Dim resolve_scale_out(const hw::SystemSpec& sys, long long domains, const NetworkParams& params,
                  core::Diagnostics& diags) {
  Dim out;
  out.name = sys.scale_out.name.empty() ? std::string("scale-out") : sys.scale_out.name;
  out.kind = sys.scale_out.kind;
  out.family = FabricFamily::ScaleOut;
  out.scale_out = true;
  out.size = domains;
  out.shape = {domains};
  out.bandwidth = sys.scale_out.bandwidth_per_chip.value * (0.5 * efficiency(FabricFamily::ScaleOut, params));
  out.latency = sys.scale_out.latency.value;
  out.oversubscription = std::max(1.0, sys.scale_out.oversubscription);
  out.tiers = std::max(1, sys.scale_out.tiers);
  if (domains > 1 && out.bandwidth.base() <= 0) {
    diags.error("scale_out.bandwidth_per_chip", "bandwidth must be positive", {}, "> 0");
  }
  return out;
}

}  // namespace

NetworkParams network_params(const calib::Params& params) {
  NetworkParams p;
  p.nvlink_efficiency = params.number("network.nvlink_efficiency");
  p.neuronlink_efficiency = params.number("network.neuronlink_efficiency");
  p.scale_out_efficiency = params.number("network.scale_out_efficiency");
  p.other_efficiency = params.number("network.other_efficiency");
  p.switch_hop_latency = params.seconds("network.switch_hop_latency");
  return p;
}

Topology Topology::build(const hw::SystemSpec& sys, long long chips, const TopologyOptions& opt) {
  check_chips(sys, chips);
  // A cluster that is not a whole number of domains has a partial last domain (a million-chip
  // Trn3 cluster is 7,281 full UltraServers plus part of one); groups are laid as in full ones.
  const long long cpd = sys.chips_per_domain;
  Topology t;
  t.opt_ = opt;
  t.chips_ = chips;
  t.chips_per_domain_ = cpd;
  t.domains_ = chips > cpd ? (chips + cpd - 1) / cpd : 1;
  t.rail_ = opt.rail_optimised.value_or(sys.scale_out.rail_optimized);

  core::Diagnostics diags;
  long long product = 1;
  for (size_t i = 0; i < sys.scale_up.size(); ++i) {
    const hw::TopologyDim& s = sys.scale_up[i];
    const std::string path = "scale_up[" + std::to_string(i) + "]";
    if (s.size < 1) {
      diags.error(path + ".size", "dimension size must be at least 1", std::to_string(s.size), ">= 1");
      continue;
    }
    t.dims_.push_back(resolve_scale_up(s, path, sys, opt.params, diags));
    product *= s.size;
  }
  if (product != cpd) {
    diags.error("scale_up", "the scale-up dimensions' sizes multiply to " + std::to_string(product) +
                                ", not chips_per_domain",
                std::to_string(product), std::to_string(cpd));
  }
  t.dims_.push_back(resolve_scale_out(sys, t.domains_, opt.params, diags));
  diags.throw_if_any();
  return t;
}

bool Topology::fits(const Group& g) const {
  if (g.size < 1 || g.stride < 1) return false;
  if (g.size == 1) return true;
  // (size-1)*stride < chips, without overflow.
  return g.stride <= (chips_ - 1) / (g.size - 1);
}

namespace {

struct Digit {
  int dim;
  int sub;
  long long radix;
  long long members = 1;
  long long stride = 1;
};

/// Mixed-radix digits of the global rank, fastest first: each dim's sub-dims, then the domains.
std::vector<Digit> rank_digits(const std::vector<Dim>& dims) {
  std::vector<Digit> digits;
  for (size_t i = 0; i < dims.size(); ++i)
    for (size_t s = 0; s < dims[i].shape.size(); ++s)
      digits.push_back(Digit{static_cast<int>(i), static_cast<int>(s), dims[i].shape[s]});
  return digits;
}

/// Spreads the group's members over the digits (members and stride per digit); clears
/// `aligned` when the stride does not divide into the radices (approximated).
void lay_group(const Group& g, std::vector<Digit>& digits, bool& aligned) {
  long long n = g.size, st = g.stride;
  for (Digit& d : digits) {
    if (n <= 1) break;
    if (d.radix <= 1) continue;
    if (st % d.radix == 0) {
      st /= d.radix;
      continue;
    }
    if (d.radix % st == 0) {
      const long long span = d.radix / st;
      d.members = std::min(n, span);
      d.stride = st;
      if (n > span && n % span != 0) aligned = false;
      n = (n + span - 1) / span;
      st = 1;
      continue;
    }
    // Stride and radix do not divide: approximate by the members that land in this digit.
    aligned = false;
    const long long span = (d.radix + st - 1) / st;
    d.members = std::min(n, span);
    d.stride = st;
    n = (n + span - 1) / span;
    st = std::max<long long>(1, st / d.radix);
  }
}

/// Members of the group along dim `i` from its digits.
LevelUse members_on_dim(const Dim& dim, int i, const std::vector<Digit>& digits) {
  LevelUse u;
  u.dim = i;
  u.scale_out = dim.scale_out;
  u.sub_members.assign(dim.shape.size(), 1);
  u.sub_stride.assign(dim.shape.size(), 1);
  bool first = true;
  for (const Digit& d : digits) {
    if (d.dim != i || d.members <= 1) continue;
    u.members *= d.members;
    u.sub_members[static_cast<size_t>(d.sub)] = d.members;
    u.sub_stride[static_cast<size_t>(d.sub)] = d.stride;
    if (first) u.stride = d.stride;
    first = false;
  }
  return u;
}

/// Switch, fat tree or the scale-out fabric: every pattern gets the dim's bandwidth; a fat tree
/// adds a switch hop pair per tier climbed and tapers at the top tier.
void switch_patterns(const Dim& dim, long long chips_per_domain, bool rail, const NetworkParams& params,
                     LevelUse& u) {
  core::ByteRate eff = dim.bandwidth;
  core::Seconds alpha = dim.latency;
  const long long mm = u.members;
  if (dim.scale_out || dim.kind == hw::DimKind::FatTree) {
    // Tier reached: rail-optimised fabrics count domains per rail; otherwise every chip is an
    // endpoint of one shared tree.
    const long long span_coords = (mm - 1) * u.stride + 1;
    const long long per_coord = dim.scale_out && !rail ? chips_per_domain : 1;
    const long long endpoints = dim.size * per_coord;
    u.tier = tier_for_span(span_coords * per_coord, endpoints, dim.tiers);
    if (u.tier >= dim.tiers) eff = eff / dim.oversubscription;
    alpha = dim.latency + params.switch_hop_latency * (2.0 * (u.tier - 1));
  }
  u.ring_bw = u.hd_bw = u.direct_bw = u.p2p_bw = eff;
  u.ring_alpha = u.hd_alpha = u.direct_alpha = u.p2p_alpha = alpha;
  u.ring_steps = mm - 1;
}

/// Hypercube: one link per sub-dim; r sub-dims spanned give r links for halving-doubling.
/// A full mesh: one link of B/(size−1) to every other chip. Rings (several, over disjoint link
/// permutations, as NCCL builds on meshes) and the direct exchange use the m − 1 links to the
/// group's other members; halving-doubling and p2p talk to one partner at a time.
void full_mesh_patterns(const Dim& dim, LevelUse& u) {
  const core::ByteRate link = dim.bandwidth / static_cast<double>(dim.size - 1);
  u.ring_bw = u.direct_bw = link * static_cast<double>(u.members - 1);
  u.hd_bw = u.p2p_bw = link;
  u.ring_alpha = u.hd_alpha = u.direct_alpha = u.p2p_alpha = dim.latency;
  u.ring_steps = u.members - 1;
}

void hypercube_patterns(const Dim& dim, LevelUse& u) {
  const core::Seconds a = dim.latency;
  const double d = static_cast<double>(dim.shape.size());
  double r = 0;
  for (long long v : u.sub_members) r += v > 1 ? 1 : 0;
  const core::ByteRate link = dim.bandwidth / d;  // one link, one direction
  u.ring_bw = link * std::min(2.0, r);
  u.hd_bw = link * r;
  u.direct_bw = hypercube_all_to_all_rate(link, u.members);
  u.p2p_bw = link;
  u.ring_alpha = a;
  u.ring_steps = u.members - 1;
  u.hd_alpha = a;
  u.direct_alpha = a * r;
  u.p2p_alpha = a * r;
}

/// Ring or torus: bidirectional rings along each sub-dim.
void ring_patterns(const Dim& dim, LevelUse& u) {
  const core::Seconds a = dim.latency;
  const double k = static_cast<double>(dim.shape.size());
  const core::ByteRate per_sub = dim.bandwidth / k;  // both links of one sub-dim, one direction
  const long long mm = u.members;
  core::ByteRate ring_sum, hd_sum, bisection_rate = per_sub * static_cast<double>(mm);
  long long steps = 0;
  double max_hops = 1, hd_hops = 1, diameter = 0, p2p_hops = 0;
  for (size_t s = 0; s < dim.shape.size(); ++s) {
    const long long ms = u.sub_members[s];
    if (ms <= 1) continue;
    const long long sst = u.sub_stride[s];
    const bool full = ms * sst == dim.shape[s];
    // A strided ring takes `sst` hops per step, shared by the `sst` interleaved groups;
    // a partial ring also carries its wrap-around flow back over the same links.
    const core::ByteRate rb = per_sub / static_cast<double>(sst) / (full ? 1.0 : 2.0);
    ring_sum += rb;
    // Halving-doubling on a ring: the step at distance 2^i crosses 2^i links, so each step
    // costs S/2 over rb regardless of i: log2(m)/2 · S/rb in total.
    const double lg = std::max(1.0, std::ceil(log2ll(ms)));
    hd_sum += rb * (2.0 * static_cast<double>(ms - 1) / (static_cast<double>(ms) * lg));
    steps += ms - 1;
    bisection_rate = core::min(bisection_rate, torus_cut_rate(per_sub, ms, sst, full, mm));
    max_hops = std::max(max_hops, static_cast<double>(sst) * (full ? 1.0 : 2.0));
    hd_hops = std::max(hd_hops, static_cast<double>(sst) * static_cast<double>(ms - 1) / lg);
    diameter += static_cast<double>(sst) * std::floor(static_cast<double>(ms) / 2.0);
    p2p_hops += static_cast<double>(std::min(sst, dim.shape[s] - sst));
  }
  u.ring_bw = ring_sum;
  u.hd_bw = hd_sum;
  // All-to-all on a bidirectional ring/torus is bisection-bound: the worst cut across one
  // spanned sub-dim, and never faster than injecting into every spanned link.
  u.direct_bw = core::min(ring_sum, bisection_rate);
  u.p2p_bw = per_sub / 2.0;  // one link, one direction
  u.ring_alpha = a * max_hops;
  u.ring_steps = steps;
  u.hd_alpha = a * hd_hops;
  u.direct_alpha = a * std::max(1.0, diameter);
  u.p2p_alpha = a * std::max(1.0, p2p_hops);
}

}  // namespace

GroupMapping Topology::map(const Group& g) const {
  if (!fits(g)) {
    core::fail("group",
               "group of " + std::to_string(g.size) + " ranks with stride " + std::to_string(g.stride) +
                   " does not fit in " + std::to_string(chips_) + " chips",
               std::to_string(g.size) + "x" + std::to_string(g.stride),
               "size >= 1, stride >= 1, (size-1)*stride < chips");
  }
  GroupMapping m;
  m.size = g.size;
  if (g.size == 1) return m;
  std::vector<Digit> digits = rank_digits(dims_);
  lay_group(g, digits, m.aligned);
  // Group digits by physical dim and derive each pattern's bandwidth and latency.
  for (size_t i = 0; i < dims_.size(); ++i) {
    const Dim& dim = dims_[i];
    LevelUse u = members_on_dim(dim, static_cast<int>(i), digits);
    if (u.members <= 1) continue;
    if (dim.scale_out || dim.kind == hw::DimKind::Switch || dim.kind == hw::DimKind::FatTree)
      switch_patterns(dim, chips_per_domain_, rail_, opt_.params, u);
    else if (dim.kind == hw::DimKind::FullyConnected)
      full_mesh_patterns(dim, u);
    else if (dim.kind == hw::DimKind::Hypercube)
      hypercube_patterns(dim, u);
    else
      ring_patterns(dim, u);
    m.levels.push_back(std::move(u));
  }
  return m;
}

}  // namespace xpusim::net
