// Topology construction, its diagnostics, and how groups lie on the dims.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_systems.h"
#include "xpusim/net/collective.h"

namespace xpusim::net {
namespace {

using core::Bytes;
using core::Seconds;

std::string first_path(const core::InputError& e) {
  return e.diagnostics().empty() ? std::string() : e.diagnostics()[0].path;
}

TEST(TopologyBuild, RejectsBadChipCountsNamingChips) {
  struct Case {
    const char* name;
    long long chips;
    const char* message_part;
  };
  const std::vector<Case> cases = {
      {"zero", 0, "at least one chip"},
      {"above max_chips", 2048, "more chips than"},
  };
  for (const Case& c : cases) {
    try {
      Topology::build(testing::hgx(1024), c.chips, testing::opts());
      ADD_FAILURE() << c.name << ": no error";
    } catch (const core::InputError& e) {
      EXPECT_EQ(first_path(e), "chips") << c.name;
      EXPECT_NE(std::string(e.what()).find(c.message_part), std::string::npos)
          << c.name << ": " << e.what();
    }
  }
  // A partial domain is fine.
  EXPECT_EQ(Topology::build(testing::hgx(), 4, testing::opts()).chips(), 4);
  EXPECT_EQ(Topology::build(testing::hgx(), 24, testing::opts()).domains(), 3);
  // So is a partial last domain of a cluster: 12 chips of 8-chip nodes are two domains.
  EXPECT_EQ(Topology::build(testing::hgx(), 12, testing::opts()).domains(), 2);
}

TEST(TopologyBuild, RejectsScaleUpDimsThatDoNotMultiplyToTheDomain) {
  hw::SystemSpec s = testing::hgx();
  s.chips_per_domain = 16;
  try {
    Topology::build(s, 16, testing::opts());
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(first_path(e), "scale_up");
    EXPECT_NE(std::string(e.what()).find("multiply to 8"), std::string::npos) << e.what();
  }
  hw::SystemSpec t = testing::trn2_ultra();
  t.scale_up[0].shape = {4, 3};
  try {
    Topology::build(t, 64, testing::opts());
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_EQ(first_path(e), "scale_up[0].shape");
  }
}

TEST(TopologyBuild, HalvesVendorBandwidthAndAppliesFamilyEfficiency) {
  const Topology t = Topology::build(testing::hgx(), 16, testing::opts());
  const NetworkParams& p = testing::shipped_params();
  ASSERT_EQ(t.dims().size(), 2u);
  EXPECT_EQ(t.dims()[0].family, FabricFamily::NvLink);
  EXPECT_DOUBLE_EQ(core::to_gbps(t.dims()[0].bandwidth), 450.0 * p.nvlink_efficiency);
  EXPECT_TRUE(t.dims()[1].scale_out);
  EXPECT_DOUBLE_EQ(core::to_gbit_per_s(t.dims()[1].bandwidth), 400.0 * p.scale_out_efficiency);
  const Topology n = Topology::build(testing::trn3_gen2(), 144, testing::opts());
  EXPECT_EQ(n.dims()[0].family, FabricFamily::NeuronLink);
}

struct MapCase {
  const char* name;
  hw::SystemSpec sys;
  long long chips;
  Group group;
  std::vector<std::pair<int, long long>> levels;  // (dim, members)
};

TEST(TopologyMap, LaysGroupsOntoTheDims) {
  const std::vector<MapCase> cases = {
      {"TP8 in the node", testing::hgx(), 64, {8, 1}, {{0, 8}}},
      {"DP8 across nodes", testing::hgx(), 64, {8, 8}, {{1, 8}}},
      {"16 = 8 in node x 2 nodes", testing::hgx(), 64, {16, 1}, {{0, 8}, {1, 2}}},
      {"TP4 stride 2", testing::hgx(), 64, {4, 2}, {{0, 4}}},
      {"DP over 4 nodes every other node", testing::hgx(), 64, {4, 16}, {{1, 4}}},
      {"whole UltraServer", testing::trn2_ultra(), 128, {64, 1}, {{0, 16}, {1, 4}}},
      {"torus column", testing::trn2_ultra(), 64, {4, 4}, {{0, 4}}},
      {"across servers in a Trn3 UltraServer", testing::trn3_gen2(), 144, {36, 4}, {{1, 36}}},
      {"single chip", testing::hgx(), 8, {1, 1}, {}},
  };
  for (const MapCase& c : cases) {
    const Topology t = Topology::build(c.sys, c.chips, testing::opts());
    const GroupMapping m = t.map(c.group);
    ASSERT_EQ(m.levels.size(), c.levels.size()) << c.name;
    for (size_t i = 0; i < c.levels.size(); ++i) {
      EXPECT_EQ(m.levels[i].dim, c.levels[i].first) << c.name;
      EXPECT_EQ(m.levels[i].members, c.levels[i].second) << c.name;
    }
    EXPECT_TRUE(m.aligned) << c.name;
  }
  // The torus column spans only the second torus sub-dimension.
  const GroupMapping col = Topology::build(testing::trn2_ultra(), 64, testing::opts()).map({4, 4});
  EXPECT_EQ(col.levels[0].sub_members, (std::vector<long long>{1, 4}));
}

TEST(TopologyMap, GroupThatDoesNotFitNamesGroup) {
  const Topology t = Topology::build(testing::hgx(), 16, testing::opts());
  for (Group g : {Group{17, 1}, Group{2, 16}, Group{0, 1}, Group{2, 0}}) {
    EXPECT_FALSE(t.fits(g));
    try {
      collective_cost(t, CollectiveKind::AllReduce, core::mib(1), g);
      ADD_FAILURE() << "no error";
    } catch (const core::InputError& e) {
      EXPECT_EQ(first_path(e), "group");
      EXPECT_NE(std::string(e.what()).find("does not fit in 16 chips"), std::string::npos);
    }
  }
}

TEST(TopologyMap, IrregularStrideIsApproximatedNotRejected) {
  const Topology t = Topology::build(testing::hgx(), 64, testing::opts());
  const GroupMapping m = t.map({5, 3});
  EXPECT_FALSE(m.aligned);
  const CollectiveCost c = collective_cost(t, CollectiveKind::AllReduce, core::mib(1), {5, 3});
  EXPECT_GT(c.time.base(), 0.0);
}

TEST(ScaleOut, OversubscriptionSlowsTrafficThatCrossesTheTopTier) {
  hw::SystemSpec s = testing::hgx();
  const Topology flat = Topology::build(s, 1024, testing::opts());
  s.scale_out.oversubscription = 2.0;
  const Topology tapered = Topology::build(s, 1024, testing::opts());
  // 128 domains, 2 tiers: fan-out ceil(sqrt 128) = 12 domains per rail leaf.
  const Bytes S = core::gib(1);
  const Group near{8, 8}, far{128, 8};
  EXPECT_EQ(collective_cost(flat, CollectiveKind::AllReduce, S, near).time,
            collective_cost(tapered, CollectiveKind::AllReduce, S, near).time);
  EXPECT_GT(collective_cost(tapered, CollectiveKind::AllReduce, S, far).time,
            collective_cost(flat, CollectiveKind::AllReduce, S, far).time * 1.5);
}

TEST(ScaleOut, LatencyGrowsPerTier) {
  // 16,384 domains, 3 tiers, rail-optimised: ceil(16384^(1/3)) = 26 domains per leaf, 676 per pod.
  TopologyOptions o = testing::opts();
  o.rail_optimised = true;
  const Topology t = Topology::build(testing::trn2_ultra(), 1 << 20, o);
  const Bytes S = core::bytes(8);
  const Seconds near = collective_cost(t, CollectiveKind::SendRecv, S, {2, 64}).time;
  const Seconds mid = collective_cost(t, CollectiveKind::SendRecv, S, {2, 64 * 64}).time;
  const Seconds far = collective_cost(t, CollectiveKind::SendRecv, S, {2, 64 * 8192}).time;
  const Seconds hop2 = testing::shipped_params().switch_hop_latency * 2.0;
  EXPECT_NEAR(core::to_seconds(mid - near), core::to_seconds(hop2), 1e-12);
  EXPECT_NEAR(core::to_seconds(far - mid), core::to_seconds(hop2), 1e-12);
}

TEST(ScaleOut, RailOptimisedKeepsSameRailTrafficLow) {
  hw::SystemSpec s = testing::hgx();
  TopologyOptions rail = testing::opts(), no_rail = testing::opts();
  rail.rail_optimised = true;
  no_rail.rail_optimised = false;
  const Topology a = Topology::build(s, 64, rail), b = Topology::build(s, 64, no_rail);
  EXPECT_TRUE(a.rail_optimised());
  EXPECT_FALSE(b.rail_optimised());
  // 8 domains: rail leaves hold ceil(sqrt 8) = 3 domains; without rails a leaf holds
  // ceil(sqrt 64) = 8 chips, so even two neighbouring domains go through the spine.
  const Seconds ta = collective_cost(a, CollectiveKind::SendRecv, core::bytes(8), {2, 8}).time;
  const Seconds tb = collective_cost(b, CollectiveKind::SendRecv, core::bytes(8), {2, 8}).time;
  EXPECT_LT(ta, tb);
}

}  // namespace
}  // namespace xpusim::net
