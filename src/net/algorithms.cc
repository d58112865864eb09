// The built-in collective algorithms: α-β cost over the levels a group spans.
// Notation (docs/network.md): n members in all, level j has m_j members, P_j = Π_{i<j} m_i
// (members of the group inside one level-j block), S_j = S / P_j the data a rank still holds
// when a hierarchical phase reaches level j.

#include <algorithm>
#include <cmath>

#include "xpusim/net/collective.h"

namespace xpusim::net {
namespace {

using core::ByteRate;
using core::Bytes;
using core::Seconds;

struct Ctx {
  const AlgorithmInput& in;
  const std::vector<LevelUse>& lv;
  double n;
  AlgorithmResult r;

  explicit Ctx(const AlgorithmInput& i)
      : in(i), lv(i.map->levels), n(static_cast<double>(i.map->size)) {
    r.busy.assign(i.topo->dims().size(), Seconds{});
  }
  /// Records `b` bytes sent by this rank over level j at rate `rate`; returns the time.
  Seconds send(size_t j, Bytes b, ByteRate rate) {
    const Seconds t = b / rate;
    r.busy[static_cast<size_t>(lv[j].dim)] += t;
    if (lv[j].scale_out) r.scale_out_bytes += b; else r.scale_up_bytes += b;
    return t;
  }
  /// P_j: group members inside one level-j block.
  double inner(size_t j) const {
    double p = 1;
    for (size_t i = 0; i < j; ++i) p *= static_cast<double>(lv[i].members);
    return p;
  }
};

double mj(const LevelUse& l) { return static_cast<double>(l.members); }

/// Time over level j of an all-to-all algorithm that sends `sent` bytes there at `rate`, of
/// which `share` must cross the level: never faster than the level's bisection allows
/// (direct_bw is the bisection-bound rate, docs/network.md).
Seconds all_to_all_level(Ctx& c, size_t j, Bytes share, Bytes sent, ByteRate rate) {
  const Seconds t = core::max(sent / rate, share / c.lv[j].direct_bw);
  c.r.busy[static_cast<size_t>(c.lv[j].dim)] += t;
  if (c.lv[j].scale_out) c.r.scale_out_bytes += sent; else c.r.scale_up_bytes += sent;
  return t;
}
double ceil_log2(double v) { return std::ceil(std::log2(v) - 1e-12); }
bool pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

/// A flat algorithm moving `per_rank` bytes per rank through every level at once (rings/trees
/// laid out so that each chip of a block carries an equal share of the block's outer traffic,
/// as NCCL's channels do): level j carries per_rank / P_j per rank; time is the slowest level.
Seconds flat_bandwidth(Ctx& c, Bytes per_rank, ByteRate LevelUse::*bw) {
  Seconds worst;
  for (size_t j = 0; j < c.lv.size(); ++j) {
    worst = core::max(worst, c.send(j, per_rank / c.inner(j), c.lv[j].*bw));
  }
  return worst;
}
/// The bottleneck rate of a flat algorithm: min_j bw_j · P_j.
ByteRate flat_rate(const Ctx& c, ByteRate LevelUse::*bw) {
  ByteRate best = c.lv[0].*bw;
  for (size_t j = 0; j < c.lv.size(); ++j) best = core::min(best, (c.lv[j].*bw) * c.inner(j));
  return best;
}
Seconds max_alpha(const Ctx& c, Seconds LevelUse::*a) {
  Seconds m;
  for (const LevelUse& l : c.lv) m = core::max(m, l.*a);
  return m;
}

/// Ring reduce-scatter (or all-gather) of `s` bytes within level j: (m-1)/m · s / bw + steps α.
void ring_rs_level(Ctx& c, size_t j, Bytes s) {
  const LevelUse& l = c.lv[j];
  c.r.bandwidth += c.send(j, s * ((mj(l) - 1) / mj(l)), l.ring_bw);
  c.r.latency += l.ring_alpha * static_cast<double>(l.ring_steps);
}
/// Halving-doubling reduce-scatter (or all-gather) of `s` bytes within level j.
void hd_rs_level(Ctx& c, size_t j, Bytes s) {
  const LevelUse& l = c.lv[j];
  c.r.bandwidth += c.send(j, s * ((mj(l) - 1) / mj(l)), l.hd_bw);
  c.r.latency += l.hd_alpha * ceil_log2(mj(l));
}

// ---- ring ------------------------------------------------------------------------------------
std::optional<AlgorithmResult> ring(const AlgorithmInput& in) {
  Ctx c(in);
  const double n = c.n;
  const Bytes S = in.bytes;
  // Latency of one phase (n-1 pipelined steps): the ring is laid out block by block, so of its n
  // edges e_j = n/P_j - n/P_{j+1} cross level j; a phase costs (n-1)/n · Σ_j e_j α_j, which is
  // (n-1)α on a single level. Inside one torus level the multi-dim ring has Σ(a_i - 1) steps.
  Seconds a;
  if (c.lv.size() == 1) {
    a = c.lv[0].ring_alpha * static_cast<double>(c.lv[0].ring_steps);
  } else {
    for (size_t j = 0; j < c.lv.size(); ++j) {
      const double pj = c.inner(j), pj1 = pj * mj(c.lv[j]);
      const double e = j + 1 == c.lv.size() ? n / pj : n / pj - n / pj1;
      a += c.lv[j].ring_alpha * e;
    }
    a = a * ((n - 1) / n);
  }
  switch (in.kind) {
    case CollectiveKind::AllReduce:
      // 2(n-1)/n · S / B + 2(n-1) α
      c.r.bandwidth = flat_bandwidth(c, S * (2.0 * (n - 1) / n), &LevelUse::ring_bw);
      c.r.latency = a * 2.0;
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
      c.r.bandwidth = flat_bandwidth(c, S * ((n - 1) / n), &LevelUse::ring_bw);
      c.r.latency = a;
      break;
    case CollectiveKind::AllToAll: {
      // Pairwise exchange: n-1 sequential steps of S/n; the share for peers outside a level-j
      // block crosses level j, one link at a time, and never faster than the bisection.
      for (size_t j = 0; j < c.lv.size(); ++j) {
        const double pj = c.inner(j), pj1 = pj * mj(c.lv[j]);
        const Bytes share = S * ((pj1 - pj) / n);
        c.r.bandwidth += all_to_all_level(c, j, share, share, c.lv[j].p2p_bw);
      }
      c.r.latency = max_alpha(c, &LevelUse::p2p_alpha) * (n - 1);
      break;
    }
    case CollectiveKind::Broadcast: {
      // Pipelined chain: (n-1) hops of one chunk, then the rest of the buffer streams behind.
      const ByteRate b = flat_rate(c, &LevelUse::ring_bw);
      const Bytes chunk = core::min(in.chunk, S);
      flat_bandwidth(c, S, &LevelUse::ring_bw);  // bytes and busy time
      c.r.bandwidth = S / b + (chunk / b) * (n - 2);
      c.r.latency = a;
      break;
    }
    case CollectiveKind::SendRecv: return std::nullopt;
  }
  return c.r;
}

// ---- tree (NCCL double binary tree: reduce up, broadcast down, pipelined in chunks) -----------
std::optional<AlgorithmResult> tree(const AlgorithmInput& in) {
  if (in.kind != CollectiveKind::AllReduce && in.kind != CollectiveKind::Broadcast)
    return std::nullopt;
  Ctx c(in);
  const Bytes S = in.bytes;
  double depth = 0;
  Seconds lat;
  for (const LevelUse& l : c.lv) {
    depth += ceil_log2(mj(l));
    lat += l.ring_alpha * ceil_log2(mj(l));
  }
  const ByteRate b = flat_rate(c, &LevelUse::ring_bw);
  const Bytes chunk = core::min(in.chunk, S);
  if (in.kind == CollectiveKind::AllReduce) {
    // Each rank sends ≈ S up and S down (half per tree, interior in one tree, leaf in the other):
    // bandwidth 2S/B, plus the pipeline fill of 2·depth chunks; latency 2·depth·α.
    flat_bandwidth(c, S * 2.0, &LevelUse::ring_bw);
    c.r.bandwidth = (S * 2.0) / b + (chunk / b) * (2.0 * depth);
    c.r.latency = lat * 2.0;
  } else {
    flat_bandwidth(c, S, &LevelUse::ring_bw);
    c.r.bandwidth = S / b + (chunk / b) * depth;
    c.r.latency = lat;
  }
  return c.r;
}

// ---- halving-doubling (recursive halving/doubling, Rabenseifner; Bruck for all-to-all) -----
std::optional<AlgorithmResult> halving_doubling(const AlgorithmInput& in) {
  if (in.kind == CollectiveKind::SendRecv) return std::nullopt;
  Ctx c(in);
  const Bytes S = in.bytes;
  if (in.kind == CollectiveKind::AllToAll) {
    // Bruck: ceil(log2 m_j) steps per level, each sending half the buffer; never faster than
    // the level's bisection allows for the share that must cross it.
    for (size_t j = 0; j < c.lv.size(); ++j) {
      const double steps = ceil_log2(mj(c.lv[j]));
      const double pj = c.inner(j), pj1 = pj * mj(c.lv[j]);
      c.r.bandwidth += all_to_all_level(c, j, S * ((pj1 - pj) / c.n), S * (0.5 * steps), c.lv[j].hd_bw);
      c.r.latency += c.lv[j].hd_alpha * steps;
    }
    return c.r;
  }
  for (const LevelUse& l : c.lv) {
    if (!pow2(l.members)) return std::nullopt;
  }
  // Distance doubles from 1: the first log2(m_0) steps stay in level 0 with the largest data,
  // so the algorithm is hierarchical by construction: level j sees S_j = S / P_j.
  const int passes = in.kind == CollectiveKind::AllReduce || in.kind == CollectiveKind::Broadcast
                         ? 2 : 1;  // broadcast = scatter + all-gather (van de Geijn)
  for (int p = 0; p < passes; ++p) {
    for (size_t j = 0; j < c.lv.size(); ++j) hd_rs_level(c, j, S / c.inner(j));
  }
  return c.r;
}

// ---- direct (one-shot through a switch; all-to-all; send/recv) --------------------------------
std::optional<AlgorithmResult> direct(const AlgorithmInput& in) {
  Ctx c(in);
  const double n = c.n;
  const Bytes S = in.bytes;
  if (in.kind == CollectiveKind::SendRecv) {
    // One message; if the two ranks differ in several dims (unaligned), the slowest one counts.
    for (size_t j = 0; j < c.lv.size(); ++j) {
      c.r.bandwidth = core::max(c.r.bandwidth, c.send(j, S, c.lv[j].p2p_bw));
      c.r.latency = core::max(c.r.latency, c.lv[j].p2p_alpha);
    }
    return c.r;
  }
  if (in.kind == CollectiveKind::AllToAll) {
    // Every share goes straight to its peer; levels work concurrently. Share for peers outside a
    // level-j block: S·(P_{j+1} - P_j)/n over level j. On a rail-optimised fabric, traffic to
    // another domain first hops over scale-up to the chip on the destination's rail (PXN).
    const bool pxn = in.topo->rail_optimised() && c.lv.size() > 1 &&
                     c.lv.back().scale_out && !c.lv.front().scale_out;
    for (size_t j = 0; j < c.lv.size(); ++j) {
      const double pj = c.inner(j), pj1 = pj * mj(c.lv[j]);
      Bytes share = S * ((pj1 - pj) / n);
      if (pxn && j == 0) {
        // Cross-domain bytes for a different local index first move over the innermost
        // scale-up level: fraction (P_up - 1)/P_up of them.
        const double p_up = c.inner(c.lv.size() - 1);
        share += S * ((n - p_up) / n) * ((p_up - 1) / p_up);
      }
      c.r.bandwidth = core::max(c.r.bandwidth, c.send(j, share, c.lv[j].direct_bw));
      c.r.latency = core::max(c.r.latency, c.lv[j].direct_alpha);
    }
    return c.r;
  }
  if (c.lv.size() != 1) return std::nullopt;  // one-shot needs a single switched level
  const LevelUse& l = c.lv[0];
  switch (in.kind) {
    case CollectiveKind::AllReduce:  // one-shot reduce-scatter + all-gather
      c.r.bandwidth = c.send(0, S * (2.0 * (n - 1) / n), l.direct_bw);
      c.r.latency = l.direct_alpha * 2.0;
      break;
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllGather:
      c.r.bandwidth = c.send(0, S * ((n - 1) / n), l.direct_bw);
      c.r.latency = l.direct_alpha;
      break;
    case CollectiveKind::Broadcast:  // root sends the whole buffer to each peer
      c.r.bandwidth = c.send(0, S * (n - 1), l.direct_bw);
      c.r.latency = l.direct_alpha;
      break;
    default: return std::nullopt;
  }
  return c.r;
}

/// Bandwidth time of a hierarchical collective whose phases are pipelined chunk by chunk across
/// levels: the phases of different levels use different links and overlap, so the busiest
/// level sets the pace and every other level adds its time for one chunk (fill and drain):
/// max_d busy_d + (Σ_d busy_d − max_d busy_d) / K, K = ⌈S / chunk⌉ chunks.
Seconds pipelined_over_levels(const std::vector<Seconds>& busy, Bytes bytes, Bytes chunk) {
  Seconds sum, busiest;
  for (const Seconds& b : busy) {
    sum += b;
    busiest = core::max(busiest, b);
  }
  const double chunks = std::max(1.0, std::ceil(bytes / chunk));
  return busiest + (sum - busiest) / chunks;
}

// ---- hierarchical (RS inside each inner level, all-reduce across the outer one, AG back) -----
std::optional<AlgorithmResult> hierarchical(const AlgorithmInput& in) {
  if (in.kind == CollectiveKind::SendRecv || in.kind == CollectiveKind::AllToAll ||
      in.kind == CollectiveKind::Broadcast)
    return std::nullopt;
  Ctx c(in);
  if (c.lv.size() < 2) return std::nullopt;
  const Bytes S = in.bytes;
  const size_t top = c.lv.size() - 1;
  const int passes = in.kind == CollectiveKind::AllReduce ? 2 : 1;
  // Inner levels: ring reduce-scatter (and, for all-reduce, the mirror all-gather).
  for (int p = 0; p < passes; ++p) {
    for (size_t j = 0; j < top; ++j) ring_rs_level(c, j, S / c.inner(j));
  }
  const Bytes st = S / c.inner(top);
  const LevelUse& l = c.lv[top];
  if (in.kind != CollectiveKind::AllReduce) {
    ring_rs_level(c, top, st);
    c.r.bandwidth = pipelined_over_levels(c.r.busy, S, in.chunk);
    return c.r;
  }
  // Across the outer level: the cheaper of ring, halving-doubling and tree on S_top.
  const double m = mj(l);
  const Seconds ring_t = st * (2.0 * (m - 1) / m) / l.ring_bw +
                         l.ring_alpha * (2.0 * static_cast<double>(l.ring_steps));
  const Seconds hd_t = pow2(l.members) ? st * (2.0 * (m - 1) / m) / l.hd_bw +
                                             l.hd_alpha * (2.0 * ceil_log2(m))
                                       : ring_t * 2.0;
  const Bytes chunk = core::min(in.chunk, st);
  const Seconds tree_t = (st * 2.0) / l.ring_bw + (chunk / l.ring_bw) * (2.0 * ceil_log2(m)) +
                         l.ring_alpha * (2.0 * ceil_log2(m));
  Seconds tree_fill;
  if (ring_t <= hd_t && ring_t <= tree_t) {
    ring_rs_level(c, top, st);
    ring_rs_level(c, top, st);
  } else if (hd_t <= tree_t) {
    hd_rs_level(c, top, st);
    hd_rs_level(c, top, st);
  } else {
    c.send(top, st * 2.0, l.ring_bw);
    tree_fill = (chunk / l.ring_bw) * (2.0 * ceil_log2(m));
    c.r.latency += l.ring_alpha * (2.0 * ceil_log2(m));
  }
  c.r.bandwidth = pipelined_over_levels(c.r.busy, S, in.chunk) + tree_fill;
  return c.r;
}

}  // namespace

void register_builtin_algorithms(AlgorithmRegistry& reg) {
  reg.add("ring", "bidirectional ring (multi-dim ring on a torus); bandwidth-optimal, 2(n-1) steps",
          CollectiveAlgorithm{ring});
  reg.add("tree", "NCCL double binary tree, pipelined in chunks; 2 log2(n) steps (all-reduce, "
                  "broadcast)",
          CollectiveAlgorithm{tree});
  reg.add("halving_doubling",
          "recursive halving/doubling (Rabenseifner), Bruck for all-to-all; log2(n) steps; "
          "power-of-two groups",
          CollectiveAlgorithm{halving_doubling});
  reg.add("direct", "one-shot exchange through a switch; all-to-all; send/recv",
          CollectiveAlgorithm{direct});
  reg.add("hierarchical",
          "reduce-scatter inside the inner levels, all-reduce across the outer, all-gather back",
          CollectiveAlgorithm{hierarchical});
}

}  // namespace xpusim::net
