// Properties that hold for every system, collective, group and size: bounds, monotonicity,
// invariance under relabelling, trivial groups, scale; plus concurrency and diagnostics.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "test_systems.h"
#include "xpusim/net/collective.h"

namespace xpusim::net {
namespace {

using core::Bytes;
using core::ByteRate;
using core::Seconds;

const std::vector<CollectiveKind> kKinds = {
    CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather,
    CollectiveKind::AllToAll,  CollectiveKind::Broadcast,     CollectiveKind::SendRecv};
const std::vector<Bytes> kSizes = {core::bytes(64), core::kib(256), core::mib(16), core::gib(2)};

struct Sys {
  const char* name;
  hw::SystemSpec spec;
  long long chips;
  std::vector<Group> groups;
};

std::vector<Sys> systems() {
  return {
      {"hgx", testing::hgx(), 256, {{8, 1}, {4, 2}, {32, 8}, {16, 1}, {256, 1}, {24, 1}}},
      {"trn2", testing::trn2_ultra(), 512, {{16, 1}, {4, 4}, {64, 1}, {8, 64}, {512, 1}}},
      {"trn3", testing::trn3_gen2(), 1152, {{4, 1}, {144, 1}, {36, 4}, {8, 144}, {1152, 1}}},
      {"cube", testing::cube16(), 64, {{16, 1}, {2, 8}, {64, 1}, {4, 16}}},
      {"mesh", testing::mesh8(), 64, {{8, 1}, {4, 2}, {2, 1}, {16, 1}, {8, 8}, {64, 1}}},
  };
}

TEST(Property, GroupOfOneCostsNothing) {
  for (const Sys& s : systems()) {
    const Topology t = Topology::build(s.spec, s.chips, testing::opts());
    for (CollectiveKind k : kKinds) {
      if (k == CollectiveKind::SendRecv) continue;  // a send/recv always has two ends
      const CollectiveCost c = collective_cost(t, k, core::gib(1), {1, 1});
      EXPECT_EQ(c.time.base(), 0.0) << s.name;
      EXPECT_EQ(c.algorithm, "none");
      EXPECT_EQ(c.scale_up_bytes.base() + c.scale_out_bytes.base(), 0.0);
    }
  }
}

/// Per-chip injection lower bound: a rank must send at least (n-1)/n·S (×2 for all-reduce) over
/// the sum of the one-direction PEAK bandwidths of the dims the group spans (no efficiency).
Seconds injection_bound(const hw::SystemSpec& sys, const Topology& t, CollectiveKind k, Bytes S,
                        Group g) {
  const GroupMapping m = t.map(k == CollectiveKind::SendRecv ? Group{2, g.stride} : g);
  ByteRate peak;
  for (const LevelUse& l : m.levels) {
    const hw::TopologyDim& d = t.dims()[static_cast<size_t>(l.dim)].scale_out
                                   ? sys.scale_out
                                   : sys.scale_up[static_cast<size_t>(l.dim)];
    peak += d.bandwidth_per_chip.value * 0.5;
  }
  const double n = static_cast<double>(m.size);
  switch (k) {
    case CollectiveKind::AllReduce: return S * (2 * (n - 1) / n) / peak;
    case CollectiveKind::Broadcast:
    case CollectiveKind::SendRecv: return S / peak;
    default: return S * ((n - 1) / n) / peak;
  }
}

TEST(Property, NeverBeatsTheInjectionOrBisectionBound) {
  for (const Sys& s : systems()) {
    const Topology t = Topology::build(s.spec, s.chips, testing::opts());
    for (const Group& g : s.groups) {
      for (CollectiveKind k : kKinds) {
        for (Bytes S : kSizes) {
          const CollectiveCost c = collective_cost(t, k, S, g);
          EXPECT_GE(c.time, injection_bound(s.spec, t, k, S, g) * (1 - 1e-12))
              << s.name << " " << collective_kind_name(k) << " " << g.size << "x" << g.stride;
          EXPECT_TRUE(std::isfinite(c.time.base()));
        }
      }
      // Bisection: an all-to-all across several domains moves half of each rank's data across
      // the cut between the two halves of the domains, through at most the scale-out peak.
      const GroupMapping m = t.map(g);
      if (!m.levels.empty() && m.levels.back().scale_out) {
        const Bytes S = core::gib(1);
        const ByteRate out_peak = s.spec.scale_out.bandwidth_per_chip.value * 0.5;
        EXPECT_GE(collective_cost(t, CollectiveKind::AllToAll, S, g).time,
                  (S * 0.5) / out_peak * 0.999)
            << s.name << " " << g.size << "x" << g.stride;
      }
    }
  }
}

/// Bisection lower bound of an all-to-all of S bytes per rank within ONE scale-up dim, from the
/// system's PEAK link rates (no efficiency): each pair exchanges S/m, so a cut into two halves
/// carries m·S/4 each way; the bound is the worst cut's crossing bytes over its capacity.
///  ring/torus (k sub-dims, two links per sub-dim): link = peak_one_way/(2k); a cut across
///    sub-dim i crosses (m/m_i) rings, each at 2 places when it closes (1 when partial), and a
///    ring at stride s_i shares its links with s_i interleaved groups;
///  hypercube (d sub-dims): link = peak_one_way/d, a cut has m/2 links;
///  fully connected (size N): link = peak_one_way/(N−1), a cut has (m/2)² links;
///  switch: no cut below injection (0 here; the injection test covers it).
Seconds bisection_bound(const hw::TopologyDim& d, const LevelUse& l, Bytes S) {
  const double m = static_cast<double>(l.members);
  const ByteRate peak = d.bandwidth_per_chip.value * 0.5;
  const Bytes crossing = S * (m / 4.0);
  if (d.kind == hw::DimKind::Hypercube) {
    const ByteRate link = peak / static_cast<double>(d.shape.size());
    return crossing / (link * (m / 2.0));
  }
  if (d.kind == hw::DimKind::FullyConnected) {
    // Every pair has its own link of peak/(size−1): a cut between halves has (m/2)² of them.
    const ByteRate link = peak / static_cast<double>(d.size - 1);
    return crossing / (link * (m / 2.0) * (m / 2.0));
  }
  if (d.kind != hw::DimKind::Ring && d.kind != hw::DimKind::Torus) return Seconds{};
  const std::vector<int> shape = d.shape.empty() ? std::vector<int>{d.size} : d.shape;
  const ByteRate link = peak / (2.0 * static_cast<double>(shape.size()));
  Seconds worst;
  for (size_t i = 0; i < shape.size(); ++i) {
    const double mi = static_cast<double>(l.sub_members[i]);
    if (mi <= 1) continue;
    const double stride = static_cast<double>(l.sub_stride[i]);
    const bool closes = mi * stride == static_cast<double>(shape[i]);
    const ByteRate cut = link / stride * ((m / mi) * (closes ? 2.0 : 1.0));
    worst = core::max(worst, crossing / cut);
  }
  return worst;
}

TEST(Property, AllToAllNeverBeatsTheScaleUpBisectionWithAnyAlgorithm) {
  for (const Sys& s : systems()) {
    const Topology t = Topology::build(s.spec, s.chips, testing::opts());
    for (const Group& g : s.groups) {
      const GroupMapping m = t.map(g);
      if (m.levels.size() != 1 || m.levels[0].scale_out) continue;
      const hw::TopologyDim& d = s.spec.scale_up[static_cast<size_t>(m.levels[0].dim)];
      for (const std::string& algorithm : builtin_algorithms().names()) {
        for (Bytes S : kSizes) {
          CollectiveOptions opt;
          opt.algorithm = algorithm;
          if (!builtin_algorithms().get(algorithm, "algorithm").cost(
                  AlgorithmInput{&t, &m, CollectiveKind::AllToAll, S, opt.chunk}))
            continue;
          EXPECT_GE(collective_cost(t, CollectiveKind::AllToAll, S, g, opt).time,
                    bisection_bound(d, m.levels[0], S) * (1 - 1e-12))
              << s.name << " " << algorithm << " " << g.size << "x" << g.stride;
        }
      }
    }
  }
}

TEST(Property, TorusAllToAllIsBoundByTheCutAcrossItsLongestSubDim) {
  // 16 chips on the 4x4 torus of a Trn2-like node (1,024 GB/s both ways per chip, 4 links):
  // link = 512/4 = 128 GB/s one way at peak; the cut across one sub-dim crosses 4 rings at 2
  // places = 8 links; it carries 16·S/4 = 4S ⇒ t ≥ 4S / (8·128 GB/s) = S / 256 GB/s at peak,
  // and × the shipped NeuronLink efficiency with the modelled link rate.
  const Topology t = Topology::build(testing::trn2_ultra(), 16, testing::opts());
  const Bytes S = core::gib(1);
  const Seconds bound = S / (core::gigabytes_per_second(256) * testing::shipped_params().neuronlink_efficiency);
  for (const char* algorithm : {"direct", "ring", "halving_doubling"}) {
    CollectiveOptions opt;
    opt.algorithm = algorithm;
    EXPECT_GE(collective_cost(t, CollectiveKind::AllToAll, S, {16, 1}, opt).time, bound * (1 - 1e-12))
        << algorithm;
  }
  // Direct all-to-all achieves the cut bound (bandwidth part) exactly.
  CollectiveOptions direct;
  direct.algorithm = "direct";
  const CollectiveCost c = collective_cost(t, CollectiveKind::AllToAll, S, {16, 1}, direct);
  EXPECT_NEAR(core::to_seconds(c.time - c.latency), core::to_seconds(bound), 1e-9);
}

TEST(Property, MoreBandwidthIsNeverSlower) {
  for (const Sys& s : systems()) {
    const Topology base = Topology::build(s.spec, s.chips, testing::opts());
    std::vector<hw::SystemSpec> faster;
    for (size_t i = 0; i < s.spec.scale_up.size(); ++i) {
      hw::SystemSpec f = s.spec;
      f.scale_up[i].bandwidth_per_chip.value *= 2.0;
      faster.push_back(f);
    }
    hw::SystemSpec f = s.spec;
    f.scale_out.bandwidth_per_chip.value *= 2.0;
    faster.push_back(f);
    for (const hw::SystemSpec& fs : faster) {
      const Topology t = Topology::build(fs, s.chips, testing::opts());
      for (const Group& g : s.groups) {
        for (CollectiveKind k : kKinds) {
          for (Bytes S : kSizes) {
            EXPECT_LE(collective_cost(t, k, S, g).time, collective_cost(base, k, S, g).time)
                << s.name << " " << collective_kind_name(k);
          }
        }
      }
    }
  }
}

TEST(Property, MoreBytesIsNeverFaster) {
  for (const Sys& s : systems()) {
    const Topology t = Topology::build(s.spec, s.chips, testing::opts());
    for (const Group& g : s.groups) {
      for (CollectiveKind k : kKinds) {
        Seconds prev;
        for (Bytes S : kSizes) {
          const Seconds now = collective_cost(t, k, S, g).time;
          EXPECT_GE(now, prev) << s.name << " " << collective_kind_name(k);
          prev = now;
        }
      }
    }
  }
}

TEST(Property, IndependentOfRelabelling) {
  // Two identical switch dims: the same group shape along either gives the same cost.
  hw::SystemSpec s = testing::hgx();
  s.chips_per_domain = 16;
  s.scale_up = {testing::dim("nvlink-a", hw::DimKind::Switch, 4, core::gigabytes_per_second(900),
                             core::microseconds(1)),
                testing::dim("nvlink-b", hw::DimKind::Switch, 4, core::gigabytes_per_second(900),
                             core::microseconds(1))};
  const Topology t = Topology::build(s, 64, testing::opts());
  for (CollectiveKind k : kKinds) {
    for (Bytes S : kSizes) {
      EXPECT_EQ(collective_cost(t, k, S, {4, 1}).time, collective_cost(t, k, S, {4, 4}).time);
      // The same DP group shape seen from a different offset is the same group shape.
      EXPECT_EQ(collective_cost(t, k, S, {4, 16}).time, collective_cost(t, k, S, {4, 16}).time);
    }
  }
  // A torus 4x8 and 8x4.
  hw::SystemSpec a = testing::trn2_ultra(), b = testing::trn2_ultra();
  for (hw::SystemSpec* p : {&a, &b}) {
    p->chips_per_domain = 32;
    p->scale_up = {testing::dim("neuronlink", hw::DimKind::Torus, 32,
                                core::gigabytes_per_second(1024), core::microseconds(2),
                                p == &a ? std::vector<int>{4, 8} : std::vector<int>{8, 4})};
  }
  const Topology ta = Topology::build(a, 32, testing::opts()), tb = Topology::build(b, 32, testing::opts());
  for (Bytes S : kSizes) {
    EXPECT_NEAR(collective_cost(ta, CollectiveKind::AllReduce, S, {32, 1}).time.base(),
                collective_cost(tb, CollectiveKind::AllReduce, S, {32, 1}).time.base(), 1e-15);
  }
  // Every hypercube sub-dimension is alike.
  const Topology c = Topology::build(testing::cube16(), 16, testing::opts());
  for (long long st : {1, 2, 4, 8}) {
    EXPECT_EQ(collective_cost(c, CollectiveKind::SendRecv, core::mib(1), {2, st}).time,
              collective_cost(c, CollectiveKind::SendRecv, core::mib(1), {2, 1}).time);
  }
}

TEST(Scale, MillionChipAllReduceIsFinite) {
  for (const hw::SystemSpec& s : {testing::hgx(), testing::trn2_ultra()}) {
    const Topology t = Topology::build(s, 1 << 20, testing::opts());
    for (Group g : {Group{1 << 20, 1}, Group{16384, 64}, Group{(1 << 20) / 8, 8}}) {
      for (CollectiveKind k : kKinds) {
        const CollectiveCost c = collective_cost(t, k, core::gib(1), g);
        EXPECT_TRUE(std::isfinite(c.time.base()));
        EXPECT_GT(c.time.base(), 0.0);
      }
    }
  }
}

TEST(Concurrent, SingleRequestEqualsCollectiveCost) {
  const Topology t = Topology::build(testing::hgx(), 64, testing::opts());
  const CollectiveRequest r{CollectiveKind::AllReduce, core::gib(1), {64, 1}, {}};
  const std::vector<CollectiveCost> c = concurrent_costs(t, {r});
  ASSERT_EQ(c.size(), 1u);
  const CollectiveCost alone = collective_cost(t, r.kind, r.bytes, r.group);
  EXPECT_NEAR(c[0].time.base(), alone.time.base(), 1e-12);
  EXPECT_EQ(c[0].algorithm, alone.algorithm);
}

TEST(Concurrent, TwoCollectivesOnTheSameLinksShareThemFairly) {
  // Two identical TP all-reduces on NVLink: each gets half the bandwidth while both run, so
  // each takes latency + 2 × bandwidth time.
  const Topology t = Topology::build(testing::hgx(), 8, testing::opts());
  const CollectiveRequest r{CollectiveKind::AllReduce, core::gib(1), {8, 1}, {}};
  const CollectiveCost alone = collective_cost(t, r.kind, r.bytes, r.group);
  const std::vector<CollectiveCost> c = concurrent_costs(t, {r, r});
  for (const CollectiveCost& x : c) {
    EXPECT_NEAR(x.time.base(), (alone.latency + (alone.time - alone.latency) * 2.0).base(),
                1e-9);
  }
  // A short and a long one: the short one finishes at 2× its bandwidth time; then the long one
  // runs alone. Long: B_l + B_s (work conserving).
  const CollectiveRequest s{CollectiveKind::AllReduce, core::mib(64), {8, 1}, {}};
  const CollectiveCost short_alone = collective_cost(t, s.kind, s.bytes, s.group);
  const std::vector<CollectiveCost> c2 = concurrent_costs(t, {r, s});
  const Seconds bl = alone.time - alone.latency, bs = short_alone.time - short_alone.latency;
  EXPECT_NEAR(c2[1].time.base(), (short_alone.latency + bs * 2.0).base(), 1e-9);
  EXPECT_NEAR(c2[0].time.base(), (alone.latency + bl + bs).base(), 1e-9);
}

TEST(Concurrent, CollectivesOnDifferentLinkClassesDoNotSlowEachOther) {
  const Topology t = Topology::build(testing::hgx(), 64, testing::opts());
  const CollectiveRequest tp{CollectiveKind::AllReduce, core::mib(256), {8, 1}, {}};
  const CollectiveRequest dp{CollectiveKind::AllReduce, core::mib(256), {8, 8}, {}};
  const std::vector<CollectiveCost> c = concurrent_costs(t, {tp, dp});
  EXPECT_NEAR(c[0].time.base(), collective_cost(t, tp.kind, tp.bytes, tp.group).time.base(), 1e-12);
  EXPECT_NEAR(c[1].time.base(), collective_cost(t, dp.kind, dp.bytes, dp.group).time.base(), 1e-12);
}

TEST(Diagnostics, UnknownAlgorithmListsTheValidOnesAndTheClosest) {
  const Topology t = Topology::build(testing::hgx(), 8, testing::opts());
  CollectiveOptions o;
  o.algorithm = "rnig";
  try {
    collective_cost(t, CollectiveKind::AllReduce, core::mib(1), {8, 1}, o);
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    const core::Diagnostic& d = e.diagnostics()[0];
    EXPECT_EQ(d.path, "algorithm");
    EXPECT_EQ(d.message, "unknown collective algorithm 'rnig'");
    EXPECT_NE(d.expected.find("direct, halving_doubling, hierarchical, ring, tree"),
              std::string::npos)
        << d.expected;
    EXPECT_NE(d.hint.find("ring"), std::string::npos) << d.hint;
  }
}

TEST(Diagnostics, AlgorithmThatDoesNotApplyNamesTheValidOnes) {
  const Topology t = Topology::build(testing::hgx(), 8, testing::opts());
  CollectiveOptions o;
  o.algorithm = "tree";
  try {
    collective_cost(t, CollectiveKind::AllToAll, core::mib(1), {8, 1}, o);
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    const core::Diagnostic& d = e.diagnostics()[0];
    EXPECT_EQ(d.path, "algorithm");
    EXPECT_EQ(d.message, "algorithm 'tree' does not apply to all-to-all over a group of 8 with "
                         "stride 1");
    EXPECT_EQ(d.expected, "one of: direct, halving_doubling, ring");
  }
}

}  // namespace
}  // namespace xpusim::net
