// The link between two systems of different chips (net/fusion.h): NVLink Fusion when both name
// one domain and fit in it, else the scale-out fabric; the slower endpoint's rate either way.

#include <gtest/gtest.h>

#include "test_systems.h"
#include "xpusim/net/fusion.h"

namespace xpusim::net {
namespace {

// An NVL-rack-like half of a mixed domain: 36 chips, `nvlink_tb_s` both directions.
hw::SystemSpec fusion_half(const char* id, double nvlink_tb_s, double nic_gbit_s, const char* domain) {
  hw::SystemSpec s = testing::hgx();
  s.id = id;
  s.chips_per_domain = 36;
  s.fusion_domain = domain;
  s.scale_up = {testing::dim("nvlink-fusion", hw::DimKind::Switch, 36, core::terabytes_per_second(nvlink_tb_s),
                             core::microseconds(1))};
  s.scale_out.bandwidth_per_chip.value = core::gigabits_per_second(2 * nic_gbit_s);
  return s;
}

TEST(CrossLink, FusionRunsAtTheSlowerEndpointInEitherDirection) {
  const auto fast = fusion_half("fast", 3.6, 800, "rack");
  const auto slow = fusion_half("slow", 1.8, 800, "rack");
  const double eff = testing::shipped_params().nvlink_efficiency;
  for (const auto& [a, b] : {std::pair{&fast, &slow}, std::pair{&slow, &fast}}) {
    const CrossLink l = cross_link(*a, 8, *b, 8, testing::shipped_params());
    EXPECT_TRUE(l.fusion);
    EXPECT_EQ(l.fabric, "nvlink-fusion");
    EXPECT_EQ(l.slower_system, "slow");
    EXPECT_DOUBLE_EQ(l.rate_per_direction.base(), 0.9e12 * eff);  // 1.8 TB/s both ways → 0.9 per direction
    EXPECT_DOUBLE_EQ(cross_link_time(l, core::Bytes::from_base(9e8)).base(), 1e-6 + 9e8 / (0.9e12 * eff));
  }
}

TEST(CrossLink, ScaleOutWhenTheSystemsDoNotShareADomainOrOverflowIt) {
  const auto a = fusion_half("a", 3.6, 800, "rack");
  const auto b = fusion_half("b", 1.8, 400, "other-rack");
  const double eff = testing::shipped_params().scale_out_efficiency;
  const CrossLink apart = cross_link(a, 8, b, 8, testing::shipped_params());
  EXPECT_FALSE(apart.fusion);
  EXPECT_EQ(apart.fabric, "scale-out");
  EXPECT_NE(apart.why_not_fusion.find("do not share"), std::string::npos) << apart.why_not_fusion;
  EXPECT_EQ(apart.slower_system, "b");  // 400 Gb/s NIC
  EXPECT_DOUBLE_EQ(apart.rate_per_direction.base(), 50e9 * eff);
  EXPECT_DOUBLE_EQ(apart.latency.base(), 10e-6);
  const auto c = fusion_half("c", 1.8, 800, "rack");
  const CrossLink over = cross_link(a, 40, c, 8, testing::shipped_params());
  EXPECT_FALSE(over.fusion);
  EXPECT_NE(over.why_not_fusion.find("exceed one Fusion domain"), std::string::npos) << over.why_not_fusion;
}

}  // namespace
}  // namespace xpusim::net
