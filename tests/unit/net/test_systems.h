#pragma once
// SystemSpecs built in the tests (the catalog is tested elsewhere): small, round numbers so that
// expected values can be derived by hand from the formulas in docs/network.md.

#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/hw/spec.h"
#include "xpusim/net/topology.h"

namespace xpusim::net::testing {

/// The shipped network parameters (data/calibration/network.yaml): expected values in the tests
/// are derived from them, so a recalibration does not break the formulas' tests.
inline const NetworkParams& shipped_params() {
  static const NetworkParams p = network_params(calib::load_shipped(XS_TESTDATA_DIR));
  return p;
}
inline TopologyOptions opts() {
  TopologyOptions o;
  o.params = shipped_params();
  return o;
}

inline hw::TopologyDim dim(const char* name, hw::DimKind kind, int size, core::ByteRate bw,
                           core::Seconds lat, std::vector<int> shape = {}) {
  hw::TopologyDim d;
  d.name = name;
  d.kind = kind;
  d.size = size;
  d.shape = std::move(shape);
  d.bandwidth_per_chip.value = bw;
  d.latency.value = lat;
  return d;
}

/// HGX-H100-like: 8 GPUs on NVSwitch (900 GB/s both directions, 1 µs), 400 Gb/s EFA per GPU
/// (10 µs), 2-tier fat tree, non-blocking.
inline hw::SystemSpec hgx(long long max_chips = 1 << 20) {
  hw::SystemSpec s;
  s.id = "test-hgx";
  s.chip.family = hw::ChipFamily::NvidiaGpu;
  s.chips_per_node = 8;
  s.chips_per_domain = 8;
  s.domain_name = "node";
  s.scale_up = {dim("nvlink", hw::DimKind::Switch, 8, core::gigabytes_per_second(900),
                    core::microseconds(1))};
  // 400 Gb/s NIC per direction → 800 Gb/s both directions (spec.h convention).
  s.scale_out = dim("efa", hw::DimKind::FatTree, 1, core::gigabits_per_second(800),
                    core::microseconds(10));
  s.scale_out.published_per_direction = true;
  s.scale_out.rail_optimized = true;
  s.scale_out.tiers = 2;
  s.max_chips.value = max_chips;
  return s;
}

/// Trn2-UltraServer-like: 4x4 torus inside a node (1,024 GB/s), ring of 4 nodes (256 GB/s),
/// 200 Gb/s EFA per chip.
inline hw::SystemSpec trn2_ultra() {
  hw::SystemSpec s;
  s.id = "test-trn2u";
  s.chip.family = hw::ChipFamily::Trainium;
  s.chips_per_node = 16;
  s.chips_per_domain = 64;
  s.scale_up = {dim("neuronlink-torus", hw::DimKind::Torus, 16, core::gigabytes_per_second(1024),
                    core::microseconds(2), {4, 4}),
                dim("neuronlink-ring", hw::DimKind::Ring, 4, core::gigabytes_per_second(256),
                    core::microseconds(3))};
  s.scale_out = dim("efa", hw::DimKind::FatTree, 1, core::gigabits_per_second(400),
                    core::microseconds(15));  // 200 Gb/s per direction
  s.scale_out.published_per_direction = true;
  s.scale_out.tiers = 3;
  s.max_chips.value = 1 << 20;
  return s;
}

/// Trn3-Gen2-like: 4-chip servers on a 1st-level switch, 36 servers on 2nd-level switches.
inline hw::SystemSpec trn3_gen2() {
  hw::SystemSpec s;
  s.id = "test-trn3g2";
  s.chip.family = hw::ChipFamily::Trainium;
  s.chips_per_node = 4;
  s.chips_per_domain = 144;
  s.scale_up = {dim("neuronswitch-l1", hw::DimKind::Switch, 4, core::gigabytes_per_second(2560),
                    core::microseconds(1)),
                dim("neuronswitch-l2", hw::DimKind::Switch, 36,
                    core::gigabytes_per_second(2560), core::microseconds(2))};
  s.scale_out = dim("efa", hw::DimKind::FatTree, 1, core::gigabits_per_second(400),
                    core::microseconds(15));  // 200 Gb/s per direction
  s.scale_out.published_per_direction = true;
  s.scale_out.tiers = 3;
  s.scale_out.oversubscription = 2.0;
  s.max_chips.value = 1 << 20;
  return s;
}

/// A 4-dim hypercube (16 chips, 4 links).
inline hw::SystemSpec cube16() {
  hw::SystemSpec s;
  s.id = "test-cube";
  s.chip.family = hw::ChipFamily::Trainium;
  s.chips_per_domain = 16;
  s.scale_up = {dim("neuronlink", hw::DimKind::Hypercube, 16, core::gigabytes_per_second(384),
                    core::microseconds(2), {2, 2, 2, 2})};
  s.scale_out = dim("efa", hw::DimKind::FatTree, 1, core::gigabits_per_second(800),
                    core::microseconds(15));
  s.max_chips.value = 1 << 16;
  return s;
}

/// A full mesh of 8 chips (every pair directly linked, 7 links of 128 GB/s both ways = 896 GB/s
/// per chip, 1 µs), 400 Gb/s per chip scale-out (10 µs), 2-tier fat tree.
inline hw::SystemSpec mesh8() {
  hw::SystemSpec s;
  s.id = "test-mesh8";
  s.chip.family = hw::ChipFamily::NvidiaGpu;
  s.chips_per_node = 8;
  s.chips_per_domain = 8;
  s.scale_up = {dim("mesh", hw::DimKind::FullyConnected, 8, core::gigabytes_per_second(896),
                    core::microseconds(1))};
  s.scale_out = dim("efa", hw::DimKind::FatTree, 1, core::gigabits_per_second(800),
                    core::microseconds(10));
  s.scale_out.published_per_direction = true;
  s.scale_out.tiers = 2;
  s.max_chips.value = 1 << 16;
  return s;
}

}  // namespace xpusim::net::testing
