// Collective cost formulas, table-driven: expected values are derived here from the α-β formulas
// of docs/network.md with the test systems of test_systems.h.

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
using testing::hgx;

// HGX test system after efficiency: NVLink 900 GB/s both directions → 450 one way × 0.80.
const NetworkParams kP = testing::shipped_params();
const ByteRate kBup = core::gigabytes_per_second(450) * kP.nvlink_efficiency;
const Seconds kAup = core::microseconds(1);
// EFA 400 Gb/s per direction × 0.85.
const ByteRate kBout = core::gigabits_per_second(400) * kP.scale_out_efficiency;

double rel(Seconds got, Seconds want) {
  return std::abs(core::to_seconds(got) / core::to_seconds(want) - 1.0);
}

struct SizeCase {
  long long n;
  Bytes bytes;
};
const std::vector<SizeCase> kSwitchCases = {
    {2, core::kib(4)}, {2, core::gib(1)}, {4, core::mib(1)},
    {4, core::gib(1)}, {8, core::kib(64)}, {8, core::gib(1)},
};

CollectiveCost cost(const Topology& t, CollectiveKind k, Bytes s, Group g, const char* algo) {
  CollectiveOptions o;
  o.algorithm = algo;
  return collective_cost(t, k, s, g, o);
}

TEST(RingAllReduce, TimeIs2NMinus1OverNSOverBPlus2NMinus1Alpha) {
  const Topology t = Topology::build(hgx(), 8, testing::opts());
  for (const SizeCase& c : kSwitchCases) {
    const double n = static_cast<double>(c.n);
    const Seconds want = c.bytes * (2 * (n - 1) / n) / kBup + kAup * (2 * (n - 1));
    const CollectiveCost got = cost(t, CollectiveKind::AllReduce, c.bytes, {c.n, 1}, "ring");
    EXPECT_LT(rel(got.time, want), 1e-12) << "n=" << c.n << " S=" << core::to_bytes(c.bytes);
    EXPECT_EQ(got.algorithm, "ring");
    // Bytes sent per rank: 2(n-1)/n · S, all on scale-up.
    EXPECT_NEAR(core::to_bytes(got.scale_up_bytes), core::to_bytes(c.bytes) * 2 * (n - 1) / n,
                1e-6 * core::to_bytes(c.bytes));
    EXPECT_EQ(core::to_bytes(got.scale_out_bytes), 0.0);
  }
}

TEST(RingAllGatherReduceScatter, TimeIsNMinus1OverNSOverBPlusNMinus1Alpha) {
  const Topology t = Topology::build(hgx(), 8, testing::opts());
  for (CollectiveKind k : {CollectiveKind::AllGather, CollectiveKind::ReduceScatter}) {
    for (const SizeCase& c : kSwitchCases) {
      const double n = static_cast<double>(c.n);
      const Seconds want = c.bytes * ((n - 1) / n) / kBup + kAup * (n - 1);
      EXPECT_LT(rel(cost(t, k, c.bytes, {c.n, 1}, "ring").time, want), 1e-12)
          << collective_kind_name(k) << " n=" << c.n;
    }
  }
}

TEST(HalvingDoubling, AllReduceHas2Log2NLatencyTerms) {
  const Topology t = Topology::build(hgx(), 8, testing::opts());
  for (const SizeCase& c : kSwitchCases) {
    const double n = static_cast<double>(c.n);
    const Seconds want = c.bytes * (2 * (n - 1) / n) / kBup + kAup * (2 * std::log2(n));
    EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, c.bytes, {c.n, 1}, "halving_doubling").time,
                  want),
              1e-12)
        << "n=" << c.n;
  }
}

TEST(HalvingDoubling, NotValidForNonPowerOfTwoGroups) {
  hw::SystemSpec s = hgx();
  s.chips_per_domain = 6;
  s.scale_up[0].size = 6;
  const Topology t = Topology::build(s, 6, testing::opts());
  EXPECT_THROW(cost(t, CollectiveKind::AllReduce, core::mib(1), {6, 1}, "halving_doubling"),
               core::InputError);
}

TEST(Tree, AllReduceIsPipelinedDoubleBinaryTree) {
  // 2·ceil(log2 n)·α + 2S/B + 2·ceil(log2 n)·chunk/B (pipeline fill).
  const Topology t = Topology::build(hgx(), 8, testing::opts());
  for (const SizeCase& c : kSwitchCases) {
    const double d = std::ceil(std::log2(static_cast<double>(c.n)));
    const Bytes chunk = core::min(kDefaultChunk, c.bytes);
    const Seconds want = kAup * (2 * d) + (c.bytes * 2.0) / kBup + (chunk / kBup) * (2 * d);
    EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, c.bytes, {c.n, 1}, "tree").time, want),
              1e-12);
  }
}

TEST(Direct, OneShotAllReduceOnASwitchHasTwoLatencyTerms) {
  const Topology t = Topology::build(hgx(), 8, testing::opts());
  const double n = 8;
  const Bytes S = core::mib(1);
  const Seconds want = S * (2 * (n - 1) / n) / kBup + kAup * 2.0;
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {8, 1}, "direct").time, want), 1e-12);
}

TEST(Hierarchical, IsReduceScatterInsideAllReduceAcrossAllGatherInside) {
  // 4 HGX nodes, a group of all 32: RS over 8 in the node, all-reduce of S/8 across the 4 nodes
  // (halving-doubling wins there: same bandwidth as ring, 2·log2(4) instead of 2·3 steps), AG.
  // The phases are pipelined in 512 KiB chunks across the two levels: the busier level sets the
  // pace and the other adds one chunk's worth: max + (sum − max)/K.
  const Topology t = Topology::build(hgx(), 32, testing::opts());
  // Across 4 domains with fan-out ceil(sqrt 4) = 2 the traffic climbs to tier 2: +2 hops.
  const Seconds a_out = core::microseconds(10) + kP.switch_hop_latency * 2.0;
  for (Bytes S : {core::mib(64), core::gib(1)}) {
    const Seconds inner = S * (2 * 7.0 / 8.0) / kBup;
    const Seconds across = (S / 8.0) * (2 * 3.0 / 4.0) / kBout;
    const double chunks = S / core::kib(512);
    const Seconds busiest = core::max(inner, across);
    const Seconds bandwidth = busiest + (inner + across - busiest) / chunks;
    const Seconds latency = kAup * (2 * 7.0) + a_out * (2 * 2.0);
    const CollectiveCost got = cost(t, CollectiveKind::AllReduce, S, {32, 1}, "hierarchical");
    EXPECT_LT(rel(got.time, bandwidth + latency), 1e-12);
    // Scale-out bytes per rank: 2·(3/4)·S/8.
    EXPECT_NEAR(core::to_bytes(got.scale_out_bytes), core::to_bytes(S) * 2 * 0.75 / 8,
                1e-6 * core::to_bytes(S));
  }
}

TEST(Ring, FlatRingAcrossNodesIsBoundByNodeAggregateNicBandwidth) {
  // NCCL lays one ring per NIC: the scale-out level carries 1/8 of each rank's ring traffic, so
  // the bottleneck rate is min(B_up, 8·B_out).
  const Topology t = Topology::build(hgx(), 16, testing::opts());
  const double n = 16;
  const Bytes S = core::gib(1);
  const ByteRate b = core::min(kBup, kBout * 8.0);
  const Seconds a_out = core::microseconds(10);  // 2 domains: fan-out ceil(sqrt 2) = 2, tier 1
  // Of the ring's 16 edges, 14 stay in a node and 2 cross: a phase costs 15/16·(14α_up + 2α_out).
  const Seconds phase = (kAup * 14.0 + a_out * 2.0) * (15.0 / 16.0);
  const Seconds want = S * (2 * (n - 1) / n) / b + phase * 2.0;
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {16, 1}, "ring").time, want), 1e-12);
}

TEST(Ring, BidirectionalRingDimensionGivesFullPerChipBandwidth) {
  // One ring of 8 Trainium chips, 400 GB/s both directions: B = 200 GB/s × 0.75.
  hw::SystemSpec s = testing::cube16();
  s.chips_per_domain = 8;
  s.scale_up = {testing::dim("neuronlink", hw::DimKind::Ring, 8, core::gigabytes_per_second(400),
                             core::microseconds(2))};
  const Topology t = Topology::build(s, 8, testing::opts());
  const ByteRate b = core::gigabytes_per_second(200) * kP.neuronlink_efficiency;
  const Bytes S = core::mib(256);
  const Seconds want = S * (2 * 7.0 / 8.0) / b + core::microseconds(2) * 14.0;
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {8, 1}, "ring").time, want), 1e-12);
  // A ring over every other chip takes 2 hops per step and shares its links with the other
  // interleaved group: B/2, 2α per step.
  const Seconds want2 = S * (2 * 3.0 / 4.0) / (b / 2.0) + core::microseconds(4) * 6.0;
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {4, 2}, "ring").time, want2), 1e-12);
}

TEST(Torus, MultiDimRingUsesAllLinksOfTheTorus) {
  // Trn2-like 4x4 torus (1,024 GB/s both directions): the all-reduce over all 16 chips runs a
  // bidirectional ring in each torus dimension with the data split across them, so the bandwidth
  // term equals that of one ring at the full per-chip rate; steps: Σ(a_i - 1) per phase.
  const Topology t = Topology::build(testing::trn2_ultra(), 64, testing::opts());
  const ByteRate b = core::gigabytes_per_second(512) * kP.neuronlink_efficiency;
  const Bytes S = core::gib(1);
  const Seconds want = S * (2 * 15.0 / 16.0) / b + core::microseconds(2) * (2 * 6.0);
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {16, 1}, "ring").time, want), 1e-12);
  // Only one torus dimension (4 chips, stride 1): its two links, B/2.
  const Seconds want1 = S * (2 * 3.0 / 4.0) / (b / 2.0) + core::microseconds(2) * 6.0;
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {4, 1}, "ring").time, want1), 1e-12);
}

TEST(Hypercube, HalvingDoublingUsesOneLinkPerStepAndAllLinksWithRotation) {
  const Topology t = Topology::build(testing::cube16(), 16, testing::opts());
  // 384 GB/s both directions over 4 links → 48 GB/s per link one way × 0.75.
  const ByteRate link = core::gigabytes_per_second(48) * kP.neuronlink_efficiency;
  const Bytes S = core::mib(64);
  // All 16: 4 sub-dims busy at once → 4·link; 2·log2(16) steps of α.
  const Seconds want = S * (2 * 15.0 / 16.0) / (link * 4.0) + core::microseconds(2) * 8.0;
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {16, 1}, "halving_doubling").time, want),
            1e-12);
  // Send/recv to the neighbour along one sub-dim: one link.
  const Seconds p2p = S / link + core::microseconds(2);
  EXPECT_LT(rel(cost(t, CollectiveKind::SendRecv, S, {2, 4}, "direct").time, p2p), 1e-12);
}

TEST(SendRecv, IsAlphaPlusSOverBOfTheDimTheRanksDifferIn) {
  const Topology t = Topology::build(hgx(), 64, testing::opts());
  const Bytes S = core::mib(16);
  EXPECT_LT(rel(collective_cost(t, CollectiveKind::SendRecv, S, {2, 1}).time, kAup + S / kBup),
            1e-12);
  const Seconds a_out = core::microseconds(10);  // 8 domains, fan-out 3: neighbours in tier 1
  EXPECT_LT(rel(collective_cost(t, CollectiveKind::SendRecv, S, {2, 8}).time, a_out + S / kBout),
            1e-12);
}

TEST(AllToAll, DirectSplitsBytesByLevelAndRunsLevelsConcurrently) {
  // 1 node: (n-1)/n·S over NVSwitch in one shot.
  const Topology t = Topology::build(hgx(), 8, testing::opts());
  const Bytes S = core::mib(64);
  EXPECT_LT(rel(cost(t, CollectiveKind::AllToAll, S, {8, 1}, "direct").time,
                S * (7.0 / 8.0) / kBup + kAup),
            1e-12);
  // Across domains (no inner members): (m-1)/m·S over the scale-out.
  const Topology t2 = Topology::build(hgx(), 64, testing::opts());
  const CollectiveCost c = cost(t2, CollectiveKind::AllToAll, S, {8, 8}, "direct");
  const Seconds a_out = core::microseconds(10) + kP.switch_hop_latency * 2.0;  // span 8 > 3
  EXPECT_LT(rel(c.time, S * (7.0 / 8.0) / kBout + a_out), 1e-12);
  EXPECT_NEAR(core::to_bytes(c.scale_out_bytes), core::to_bytes(S) * 7 / 8, 1.0);
}

TEST(Auto, PicksLatencyOptimalForSmallAndBandwidthOptimalForLarge) {
  // At 64 GPUs; at ~1,000 the double binary tree also wins for large buffers (its 2S/B bandwidth
  // term equals the ring's asymptotically, and its latency is logarithmic), as with NCCL.
  const Topology t = Topology::build(hgx(), 64, testing::opts());
  const CollectiveCost small = collective_cost(t, CollectiveKind::AllReduce, core::kib(8), {64, 1});
  EXPECT_TRUE(small.algorithm == "tree" || small.algorithm == "halving_doubling")
      << small.algorithm;
  const CollectiveCost large = collective_cost(t, CollectiveKind::AllReduce, core::gib(4), {64, 1});
  EXPECT_TRUE(large.algorithm == "ring" || large.algorithm == "hierarchical")
      << large.algorithm << " " << core::to_ms(large.time) << " ms";
  // Auto is the minimum over every valid algorithm.
  for (const std::string& name : builtin_algorithms().names()) {
    CollectiveOptions o;
    o.algorithm = name;
    for (Bytes s : {core::kib(8), core::gib(4)}) {
      try {
        const CollectiveCost c = collective_cost(t, CollectiveKind::AllReduce, s, {64, 1}, o);
        EXPECT_GE(c.time, collective_cost(t, CollectiveKind::AllReduce, s, {64, 1}).time);
      } catch (const core::InputError&) {
        // not valid for this call
      }
    }
  }
  // Non-power-of-two across nodes (3 nodes): halving-doubling does not apply; tree does.
  const Topology t3 = Topology::build(hgx(), 24, testing::opts());
  const CollectiveCost s3 = collective_cost(t3, CollectiveKind::AllReduce, core::kib(8), {24, 1});
  EXPECT_NE(s3.algorithm, "halving_doubling");
}

}  // namespace
}  // namespace xpusim::net

namespace xpusim::net {
namespace {

TEST(FullyConnected, RingsUseEveryLinkAndHalvingDoublingOneAtATime) {
  // mesh8: 896 GB/s both ways per chip over 7 links → link = 64 GB/s one way × efficiency 0.80
  // (an unnamed scale-up fabric of a GPU: NVLink family). Group of all 8:
  //   ring all-reduce   2·7/8·S / (7·link) + 2·7·α
  //   direct all-to-all 7/8·S / (7·link) + α           (= the (m/2)² link cut bound)
  //   halving-doubling  2·Σ over 3 steps, one partner per step: 2·7/8·S / link + 2·3·α
  const Topology t = Topology::build(testing::mesh8(), 8, testing::opts());
  const ByteRate link = core::gigabytes_per_second(64) * kP.nvlink_efficiency;
  const Seconds alpha = core::microseconds(1);
  const Bytes S = core::mib(256);
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {8, 1}, "ring").time,
                S * (2 * 7.0 / 8.0) / (link * 7.0) + alpha * 14.0), 1e-12);
  EXPECT_LT(rel(cost(t, CollectiveKind::AllToAll, S, {8, 1}, "direct").time,
                S * (7.0 / 8.0) / (link * 7.0) + alpha), 1e-12);
  EXPECT_LT(rel(cost(t, CollectiveKind::AllReduce, S, {8, 1}, "halving_doubling").time,
                S * (2 * 7.0 / 8.0) / link + alpha * 6.0), 1e-12);
  // A group of 4 at stride 2 reaches its 3 members over 3 links.
  EXPECT_LT(rel(cost(t, CollectiveKind::AllGather, S, {4, 2}, "ring").time,
                S * (3.0 / 4.0) / (link * 3.0) + alpha * 3.0), 1e-12);
}

}  // namespace
}  // namespace xpusim::net
