// Tests of the hardware catalog: the real data/catalog files (coverage, consistency of derived
// numbers with the geometry they come from) and one test per loader diagnostic.

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/dtype.h"
#include "xpusim/core/units.h"
#include "xpusim/hw/catalog.h"

using namespace xpusim;
using config::Json;
using core::Dtype;
using hw::Catalog;

namespace {

const Catalog& real_catalog() {
  static const Catalog cat = Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  return cat;
}

double rel_err(double a, double b) { return std::fabs(a - b) / std::fabs(b); }

// ----------------------------------------------------------------------------- real catalog

TEST(CatalogData, EveryValidationSystemIsPresent) {
  // The system ids of ../shared/validation/README.md, plus the projected Trainium4.
  const std::vector<std::string> ids = {
      "a100-40g-dgx", "a100-80g-dgx", "h100-sxm-dgx", "h100-sxm-96g-500w", "h800-sxm-dgx",
      "h200-sxm-hgx", "b200-hgx", "gb200-nvl72", "gb300-nvl72", "trn1-32xl", "trn1n-32xl",
      "trn2-48xl", "trn2-ultraserver", "trn3-ultraserver-gen1", "trn3-ultraserver-gen2",
      "trn4-projected"};
  const auto have = real_catalog().system_ids();
  const std::set<std::string> have_set(have.begin(), have.end());
  for (const auto& id : ids) EXPECT_TRUE(have_set.count(id)) << "missing system " << id;
}

TEST(CatalogData, EveryValidationCsvSystemIsPresent) {
  std::ifstream in(std::string(XS_TESTDATA_DIR) + "/validation/public.csv");
  ASSERT_TRUE(in) << "data/validation/public.csv not found";
  std::string header, line;
  std::getline(in, header);
  int n = 0;
  while (std::getline(in, line)) {
    // id,kind,system,...
    auto a = line.find(',');
    auto b = line.find(',', a + 1);
    auto c = line.find(',', b + 1);
    const std::string system = line.substr(b + 1, c - b - 1);
    if (system.empty()) continue;
    EXPECT_NO_THROW(real_catalog().system(system)) << system;
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(CatalogData, EveryChipHasBf16PeakHbmAndTdp) {
  for (const auto& id : real_catalog().chip_ids()) {
    const auto& c = real_catalog().chip(id);
    SCOPED_TRACE(id);
    ASSERT_TRUE(c.supports(Dtype::Bf16));
    EXPECT_GT(core::to_tflops(c.peak_for(Dtype::Bf16)), 100.0);
    EXPECT_GT(core::to_gib(c.hbm_capacity.value), 16.0);
    EXPECT_GT(core::to_tbps(c.hbm_bandwidth.value), 0.5);
    EXPECT_GT(core::to_watts(c.tdp.value), 200.0);
    EXPECT_GT(core::to_bytes(c.sram.value), 0.0);
    EXPECT_EQ(c.family == hw::ChipFamily::Trainium, c.neuron.has_value());
    EXPECT_EQ(c.family == hw::ChipFamily::NvidiaGpu, c.gpu.has_value());
  }
}

TEST(CatalogData, EveryFactHasASource) {
  const auto& cat = real_catalog();
  for (const auto& id : cat.chip_ids()) {
    for (const auto& f : cat.chip(id).facts) {
      EXPECT_FALSE(f.fact.source.empty()) << id << " " << f.path;
    }
  }
  for (const auto& id : cat.system_ids()) {
    for (const auto& f : cat.system(id).facts) {
      EXPECT_FALSE(f.fact.source.empty()) << id << " " << f.path;
    }
  }
}

TEST(CatalogData, Trainium3MxRates) {
  const auto& c = real_catalog().chip("trainium3");
  EXPECT_NEAR(core::to_tflops(c.peak_for(Dtype::Mxfp8)), 2517.0, 1e-9);
  EXPECT_EQ(c.peak_for(Dtype::Mxfp4), c.peak_for(Dtype::Mxfp8));
  // Plain FP8 is ~2x BF16 (C9/D2), not the MX rate.
  EXPECT_LT(c.peak_for(Dtype::Fp8), c.peak_for(Dtype::Mxfp8));
  EXPECT_NEAR(core::to_tflops(c.peak_for(Dtype::Fp8)) / core::to_tflops(c.peak_for(Dtype::Bf16)),
              2.0, 0.15);
  EXPECT_FALSE(c.supports(Dtype::Nvfp4));
}

TEST(CatalogData, Trainium2HasNoMxFormats) {
  const auto& c = real_catalog().chip("trainium2");
  EXPECT_FALSE(c.supports(Dtype::Mxfp4));
  EXPECT_FALSE(c.supports(Dtype::Mxfp8));
  EXPECT_EQ(c.peak.count(Dtype::Mxfp4), 0u);  // absent, not zero
  EXPECT_TRUE(c.supports(Dtype::Fp8));
}

TEST(CatalogData, BlackwellMxAndFp4Rates) {
  for (const char* id : {"b200", "gb200", "gb300"}) {
    const auto& c = real_catalog().chip(id);
    SCOPED_TRACE(id);
    EXPECT_EQ(c.peak_for(Dtype::Mxfp8), c.peak_for(Dtype::Fp8));
    EXPECT_EQ(c.peak_for(Dtype::Mxfp4), c.peak_for(Dtype::Nvfp4));
  }
  EXPECT_NEAR(core::to_tflops(real_catalog().chip("gb300").peak_for(Dtype::Nvfp4)), 15000.0, 1e-6);
  EXPECT_FALSE(real_catalog().chip("h100-sxm").supports(Dtype::Nvfp4));
  EXPECT_FALSE(real_catalog().chip("a100-sxm-80g").supports(Dtype::Fp8));
}

// TensorE peak = rows x cols x 2 FLOP x clock x multiplier x cores (D1). MX rates match AWS's
// chip totals within 0.5%; BF16/FP8 chip totals sit 3-7% above the geometry (C10).
struct GeometryCase {
  const char* chip;
  Dtype dtype;
  double tolerance;
};

std::string GeometryName(const ::testing::TestParamInfo<GeometryCase>& tp) {
  return std::string(tp.param.chip) + "_" + core::dtype_name(tp.param.dtype);
}

class TensorGeometry : public ::testing::TestWithParam<GeometryCase> {};

TEST_P(TensorGeometry, PerCoreTimesCoresMatchesChipPeak) {
  const auto& p = GetParam();
  const auto& c = real_catalog().chip(p.chip);
  ASSERT_TRUE(c.neuron.has_value());
  const auto& n = *c.neuron;
  ASSERT_TRUE(n.tensor_rate_multiplier.count(p.dtype));
  const double derived = n.pe_rows * n.pe_cols * 2.0 * n.tensor_clock.value.base() *
                         n.tensor_rate_multiplier.at(p.dtype) * n.cores_per_chip;
  EXPECT_LE(rel_err(derived, c.peak_for(p.dtype).base()), p.tolerance)
      << "derived " << derived / 1e12 << " TF vs catalog "
      << core::to_tflops(c.peak_for(p.dtype));
}

INSTANTIATE_TEST_SUITE_P(
    Catalog, TensorGeometry,
    ::testing::Values(
        // 128 x 128 x 2 x 2.4 GHz x 4 x 8 = 2516.6 TF vs 2517.
        GeometryCase{"trainium3", Dtype::Mxfp8, 0.005},
        GeometryCase{"trainium3", Dtype::Mxfp4, 0.005},
        GeometryCase{"trainium3", Dtype::Fp8, 0.005},    // derived value (D2)
        GeometryCase{"trainium3", Dtype::Bf16, 0.07},    // 629 vs 671 (C10)
        GeometryCase{"trainium2", Dtype::Fp8, 0.04},     // 1258 vs 1299 (C10)
        GeometryCase{"trainium2", Dtype::Bf16, 0.07},    // 629 vs 667 (C10)
        GeometryCase{"trainium1", Dtype::Bf16, 0.04},    // 2 x 91.8 = 183.5 vs 190
        GeometryCase{"trainium4", Dtype::Mxfp8, 0.005},  // projected: 3 x Trainium3
        GeometryCase{"trainium4", Dtype::Mxfp4, 0.005}),  // projected: 6 x Trainium3
    GeometryName);

TEST(CatalogData, GpuClockTimesSmsMatchesBf16Peak) {
  // Dense BF16 FLOP per SM per clock: 2048 (Ampere), 4096 (Hopper), 8192 (Blackwell).
  const std::vector<std::pair<const char*, double>> cases = {
      {"a100-sxm-80g", 2048}, {"h100-sxm", 4096}, {"h200-sxm", 4096},
      {"b200", 8192},         {"gb200", 8192},    {"gb300", 8192}, {"b300", 8192}};
  for (const auto& [id, per_clk] : cases) {
    const auto& c = real_catalog().chip(id);
    ASSERT_TRUE(c.gpu.has_value()) << id;
    const double derived = c.gpu->sm_count * per_clk * c.gpu->boost_clock.value.base();
    EXPECT_LE(rel_err(derived, c.peak_for(Dtype::Bf16).base()), 0.005) << id;
  }
}

// HGX B300 (p6-b300) carries hardware.md's hardware.csv row: dense BF16 2,250, FP8 4,500 and
// FP4 14,000 TF, 268 GiB at 8 TB/s, 1,100 W, 8 GPUs per NVLink 5 domain, 800 Gb/s per GPU out,
// $142.42 per node-hour over 8 GPUs.
TEST(CatalogData, HgxB300CarriesItsHardwareCsvRow) {
  const auto& sys = real_catalog().system("b300-hgx");
  const auto& c = sys.chip;
  EXPECT_EQ(c.id, "b300");
  EXPECT_NEAR(core::to_tflops(c.peak_for(Dtype::Bf16)), 2250.0, 1e-6);
  EXPECT_NEAR(core::to_tflops(c.peak_for(Dtype::Fp8)), 4500.0, 1e-6);
  EXPECT_NEAR(core::to_tflops(c.peak_for(Dtype::Nvfp4)), 14000.0, 1e-6);
  EXPECT_NEAR(core::to_gib(c.hbm_capacity.value), 268.0, 1e-9);
  EXPECT_NEAR(c.hbm_bandwidth.value.base(), 8e12, 1.0);
  EXPECT_NEAR(c.tdp.value.base(), 1100.0, 1e-9);
  EXPECT_EQ(sys.chips_per_domain, 8);
  // Twice HGX B200's 400 Gb/s per GPU (p6-b200: 3.2 Tbps per node).
  const auto& b200 = real_catalog().system("b200-hgx");
  EXPECT_DOUBLE_EQ(sys.scale_out.bandwidth_per_chip.value.base(), 2.0 * b200.scale_out.bandwidth_per_chip.value.base());
  EXPECT_NEAR(sys.price_per_chip_hour.value.base() * 3600.0, 142.42 / 8.0, 0.01);  // $ per second stored
}

TEST(CatalogData, Trainium4IsProjectedFromAnnouncedMultiples) {
  const auto& s = real_catalog().system("trn4-projected");
  EXPECT_TRUE(s.projected);
  EXPECT_TRUE(s.chip.projected);
  EXPECT_EQ(s.chips_per_domain, 72);
  const auto& t3 = real_catalog().chip("trainium3");
  EXPECT_NEAR(s.chip.peak_for(Dtype::Mxfp4) / t3.peak_for(Dtype::Mxfp4), 6.0, 1e-9);
  EXPECT_NEAR(s.chip.peak_for(Dtype::Mxfp8) / t3.peak_for(Dtype::Mxfp8), 3.0, 1e-3);
  EXPECT_NEAR(s.chip.hbm_bandwidth.value / t3.hbm_bandwidth.value, 4.0, 1e-9);
  EXPECT_EQ(s.chip.peak.at(Dtype::Mxfp8).confidence, hw::Confidence::Projected);
  for (const auto& id : real_catalog().system_ids()) {
    const auto& sys = real_catalog().system(id);
    // The projected Trainium4 and the halves of the mixed Trainium4 + GB300 Fusion rack.
    if (id != "trn4-projected" && sys.fusion_domain.empty()) {
      EXPECT_FALSE(sys.projected) << id;
    }
  }
}

TEST(CatalogData, MixedFusionRackHalvesShareOneDomain) {
  const auto& trn4 = real_catalog().system("trn4-fusion-mixed-rack");
  const auto& gb300 = real_catalog().system("gb300-fusion-mixed-rack");
  EXPECT_EQ(trn4.fusion_domain, gb300.fusion_domain);
  EXPECT_FALSE(trn4.fusion_domain.empty());
  EXPECT_TRUE(trn4.projected);
  EXPECT_TRUE(gb300.projected);
  EXPECT_EQ(trn4.chip.id, "trainium4");
  EXPECT_EQ(gb300.chip.id, "gb300");
  EXPECT_LE(trn4.chips_per_domain + gb300.chips_per_domain, 72);  // NVLink Fusion domains of up to 72 [24]
  // NVLink 5 at 1.8 TB/s per GPU; Trainium4's port at the catalog's projected NVLink 6 value.
  EXPECT_DOUBLE_EQ(gb300.scale_up.back().bandwidth_per_chip.value.base(), 1.8e12);
  EXPECT_DOUBLE_EQ(trn4.scale_up.back().bandwidth_per_chip.value.base(),
                   real_catalog().system("trn4-projected").scale_up.back().bandwidth_per_chip.value.base());
  EXPECT_TRUE(real_catalog().system("gb300-nvl72").fusion_domain.empty());
}

TEST(CatalogData, ScaleUpSizesMultiplyToDomain) {
  for (const auto& id : real_catalog().system_ids()) {
    const auto& s = real_catalog().system(id);
    long long product = 1;
    for (const auto& d : s.scale_up) {
      product *= d.size;
      long long shape = 1;
      for (int x : d.shape) shape *= x;
      if (!d.shape.empty()) {
        EXPECT_EQ(shape, d.size) << id;
      }
      EXPECT_GT(d.bandwidth_per_chip.value.base(), 0.0) << id;
      EXPECT_GT(d.latency.value.base(), 0.0) << id;
    }
    EXPECT_EQ(product, s.chips_per_domain) << id;
    EXPECT_EQ(s.chips_per_domain % s.chips_per_node, 0) << id;
    EXPECT_GE(s.max_chips.value, s.chips_per_domain) << id;
    EXPECT_GT(core::to_dollars_per_hour(s.price_per_chip_hour.value), 0.5) << id;
    EXPECT_GT(core::to_watts(s.overhead_power_per_chip.value), 0.0) << id;
    EXPECT_EQ(s.chip.id, s.chip_id) << id;
  }
}

TEST(CatalogData, TopologiesFromTheReference) {
  const auto& cat = real_catalog();
  // Trn1: 16 chips, 4D hypercube = 2D torus 4x4 (C1).
  const auto& t1 = cat.system("trn1-32xl");
  ASSERT_EQ(t1.scale_up.size(), 1u);
  EXPECT_EQ(t1.scale_up[0].kind, hw::DimKind::Torus);
  EXPECT_EQ(t1.scale_up[0].shape, (std::vector<int>{4, 4}));
  // Trn2 UltraServer: 4x4 torus at 1,024 GB/s plus a 4-ring at 256 GB/s = 1.28 TB/s per chip.
  const auto& us = cat.system("trn2-ultraserver");
  ASSERT_EQ(us.scale_up.size(), 2u);
  EXPECT_NEAR(core::to_gbps(us.scale_up[0].bandwidth_per_chip.value), 1024.0, 1e-9);
  EXPECT_EQ(us.scale_up[1].kind, hw::DimKind::Ring);
  EXPECT_EQ(us.scale_up[1].size, 4);
  EXPECT_NEAR(core::to_gbps(us.scale_up[1].bandwidth_per_chip.value), 256.0, 1e-9);
  // Trn3 Gen2: the two switch levels add up to the 2,048 GiB/s per device of the UltraServer table.
  const auto& g2 = cat.system("trn3-ultraserver-gen2");
  ASSERT_EQ(g2.scale_up.size(), 2u);
  EXPECT_EQ(g2.scale_up[0].size * g2.scale_up[1].size, 144);
  const double total = (g2.scale_up[0].bandwidth_per_chip.value +
                        g2.scale_up[1].bandwidth_per_chip.value).base();
  EXPECT_LE(rel_err(total, core::gib(2048).base()), 1e-4);
  EXPECT_EQ(g2.max_chips.value, 1048576);
  // Scale-out published per direction is stored as both directions added: 200 Gb/s EFA -> 400.
  EXPECT_TRUE(g2.scale_out.published_per_direction);
  EXPECT_NEAR(core::to_gbit_per_s(g2.scale_out.bandwidth_per_chip.value), 400.0, 1e-9);
  EXPECT_EQ(g2.scale_out.kind, hw::DimKind::FatTree);
  // NVL72: one switch of 72 at 1.8 TB/s.
  const auto& nvl = cat.system("gb300-nvl72");
  EXPECT_EQ(nvl.scale_up[0].size, 72);
  EXPECT_NEAR(core::to_tbps(nvl.scale_up[0].bandwidth_per_chip.value), 1.8, 1e-12);
  EXPECT_TRUE(nvl.scale_out.rail_optimized);
}

// Issue 47: every system states its node's host memory, local NVMe and their rates (KV offload
// tiers), an estimate with its range; the Trainium nodes' host memory is hardware.md's per-node
// (or per-UltraServer over its servers) figure.
TEST(CatalogData, EveryNodeStatesItsHostMemoryAndLocalNvme) {
  const auto& cat = real_catalog();
  for (const auto& id : cat.system_ids()) {
    const auto& s = cat.system(id);
    for (const auto* f : {&s.host_memory_per_node, &s.local_nvme_per_node}) {
      EXPECT_GT(f->value.base(), 0) << id;
      EXPECT_FALSE(f->source.empty()) << id;
      if (f->confidence == hw::Confidence::Estimated) {
        EXPECT_TRUE(f->low && f->high) << id << " estimate without a range";
      }
    }
    for (const auto* f : {&s.local_nvme_read_bandwidth_per_node, &s.host_link_bandwidth_per_chip}) {
      EXPECT_GT(f->value.base(), 0) << id;
      if (f->confidence == hw::Confidence::Estimated) {
        EXPECT_TRUE(f->low && f->high) << id << " estimate without a range";
      }
    }
  }
  EXPECT_NEAR(core::to_gib(cat.system("trn2-48xl").host_memory_per_node.value), 2048, 1e-9);
  EXPECT_NEAR(core::to_gib(cat.system("trn1-32xl").host_memory_per_node.value), 512, 1e-9);
  EXPECT_NEAR(core::to_gib(cat.system("trn3-ultraserver-gen1").host_memory_per_node.value), 8192.0 / 4, 1e-9);
  EXPECT_NEAR(core::to_gib(cat.system("trn3-ultraserver-gen2").host_memory_per_node.value), 27648.0 / 36, 1e-9);
  EXPECT_NEAR(core::to_gib(cat.system("h100-sxm-dgx").host_memory_per_node.value), 2048, 1e-9);
}

TEST(CatalogData, H100At500WRecordsItsPowerCap) {
  const auto& c = real_catalog().chip("h100-sxm-96g-500w");
  ASSERT_TRUE(c.power_cap.has_value());
  EXPECT_EQ(core::to_watts(c.power_cap->value), 500.0);
  EXPECT_EQ(c.peak_for(Dtype::Bf16), real_catalog().chip("h100-sxm").peak_for(Dtype::Bf16));
  EXPECT_NEAR(core::to_gib(c.hbm_capacity.value), 96.0, 1e-9);
}

TEST(CatalogData, UnknownSystemSuggestsClosest) {
  try {
    real_catalog().system("trn3-ultrasever-gen2");
    FAIL() << "no exception";
  } catch (const core::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown system 'trn3-ultrasever-gen2'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'trn3-ultraserver-gen2'?"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gb300-nvl72"), std::string::npos) << msg;  // the list of valid ids
  }
}

TEST(CatalogData, UnknownChipSuggestsClosest) {
  try {
    real_catalog().chip("trainum3");
    FAIL() << "no exception";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'trainium3'?"), std::string::npos) << e.what();
  }
}

// ----------------------------------------------------------------------------- diagnostics

Json fact(Json value) {
  return Json{{"value", std::move(value)}, {"source", "test"}, {"confidence", "published"}};
}

Json valid_chip() {
  Json c = Json::object();
  c["id"] = "tchip";
  c["name"] = "Test chip";
  c["vendor"] = "Test";
  c["family"] = "nvidia-gpu";
  c["architecture"] = "hopper";
  c["peak"] = Json{{"bf16", fact("100 TFLOP/s")}, {"fp8", fact("200 TFLOP/s")}};
  c["hbm_capacity"] = fact("80 GiB");
  c["hbm_bandwidth"] = fact("3 TB/s");
  c["sram"] = fact("50 MiB");
  c["tdp"] = fact("700 W");
  c["gpu"] = Json{{"sm_count", fact(100)}, {"boost_clock", fact("1.5 GHz")}};
  return c;
}

Json valid_system() {
  Json s = Json::object();
  s["id"] = "tsys";
  s["name"] = "Test system";
  s["chip"] = "tchip";
  s["node_name"] = "node";
  s["domain_name"] = "node";
  s["chips_per_node"] = fact(16);
  s["chips_per_domain"] = fact(16);
  Json torus = {{"name", "link"},
                {"kind", "torus"},
                {"size", fact(16)},
                {"shape", {4, 4}},
                {"bandwidth_per_chip", fact("1024 GB/s")},
                {"bandwidth_direction", "bidirectional"},
                {"latency", fact("1 us")}};
  s["scale_up"] = Json::array({torus});
  s["scale_out"] = Json{{"name", "efa"},
                        {"kind", "fat-tree"},
                        {"bandwidth_per_chip", fact("200 Gb/s")},
                        {"bandwidth_direction", "per-direction"},
                        {"latency", fact("10 us")},
                        {"tiers", fact(3)},
                        {"oversubscription", fact(1.0)},
                        {"rail_optimized", fact(false)}};
  s["max_chips"] = fact(1024);
  s["price_per_chip_hour"] = fact("$2/h");
  s["overhead_power_per_chip"] = fact("300 W");
  return s;
}

std::string write_json(const std::string& dir, const std::string& name, const Json& j) {
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  std::ofstream(path) << j.dump(2);
  return path;
}

std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "xs_hw_" + name;
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

/// Parses a chip file and returns its diagnostics (empty when it parsed).
std::vector<core::Diagnostic> chip_diags(const Json& j, const std::string& test) {
  const std::string path = write_json(temp_dir(test), "tchip.json", j);
  try {
    hw::parse_chip(path);
  } catch (const core::InputError& e) {
    return e.diagnostics();
  }
  return {};
}

std::vector<core::Diagnostic> system_diags(const Json& j, const std::string& test) {
  const std::string path = write_json(temp_dir(test), "tsys.json", j);
  try {
    hw::parse_system(path);
  } catch (const core::InputError& e) {
    return e.diagnostics();
  }
  return {};
}

TEST(CatalogDiagnostics, ValidFilesParse) {
  EXPECT_TRUE(chip_diags(valid_chip(), "valid_chip").empty());
  EXPECT_TRUE(system_diags(valid_system(), "valid_sys").empty());
  const std::string dir = temp_dir("valid_sys2");
  const auto s = hw::parse_system(write_json(dir, "tsys.json", valid_system()));
  EXPECT_NEAR(core::to_gbit_per_s(s.scale_out.bandwidth_per_chip.value), 400.0, 1e-9);
  EXPECT_EQ(s.scale_out.size, 64);  // 1024 chips / 16 per domain
  EXPECT_EQ(s.scale_out.tiers, 3);
}

TEST(CatalogDiagnostics, UnknownKeySuggestsClosest) {
  Json c = valid_chip();
  c["hbm_bandwith"] = fact("3 TB/s");
  const auto ds = chip_diags(c, "unknown_key");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "hbm_bandwith");
  EXPECT_EQ(ds[0].message, "unknown key");
  EXPECT_EQ(ds[0].hint, "did you mean 'hbm_bandwidth'?");
  EXPECT_NE(ds[0].file.find("tchip.json"), std::string::npos);
}

TEST(CatalogDiagnostics, UnknownKeyInsideAFact) {
  Json c = valid_chip();
  c["tdp"]["confidense"] = "published";
  const auto ds = chip_diags(c, "unknown_fact_key");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "tdp.confidense");
  EXPECT_EQ(ds[0].hint, "did you mean 'confidence'?");
}

TEST(CatalogDiagnostics, NumberWithoutUnit) {
  Json c = valid_chip();
  c["hbm_bandwidth"]["value"] = 4.9;
  const auto ds = chip_diags(c, "no_unit");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "hbm_bandwidth.value");
  EXPECT_EQ(ds[0].message, "number without a unit");
  EXPECT_EQ(ds[0].value, "4.9");
  EXPECT_NE(ds[0].expected.find("TB/s"), std::string::npos) << ds[0].expected;
}

// An estimate's range (docs/catalog.md): both ends, holding the value, parsed with units.
TEST(CatalogDiagnostics, EstimateRange) {
  Json c = valid_chip();
  c["tdp"]["low"] = "500 W";
  c["tdp"]["high"] = "900 W";
  const auto chip = hw::parse_chip(write_json(temp_dir("range_ok"), "tchip.json", c));
  ASSERT_TRUE(chip.tdp.low && chip.tdp.high);
  EXPECT_DOUBLE_EQ(core::to_watts(*chip.tdp.low), 500.0);
  EXPECT_DOUBLE_EQ(core::to_watts(*chip.tdp.high), 900.0);
  c["tdp"]["low"] = "800 W";
  auto ds = chip_diags(c, "range_outside");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "tdp.low");
  EXPECT_EQ(ds[0].message, "the range does not hold the value");
  EXPECT_EQ(ds[0].value, "800 W .. 900 W");
  c["tdp"].erase("high");
  ds = chip_diags(c, "range_half");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "tdp.high");
}

TEST(CatalogDiagnostics, BareNumberInsteadOfFact) {
  Json c = valid_chip();
  c["tdp"] = 700;
  const auto ds = chip_diags(c, "bare_number");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "tdp");
  EXPECT_EQ(ds[0].message, "a catalog number needs a unit and its provenance");
  EXPECT_NE(ds[0].expected.find("\"confidence\""), std::string::npos);
}

TEST(CatalogDiagnostics, StringInsteadOfFact) {
  Json c = valid_chip();
  c["tdp"] = "700 W";
  const auto ds = chip_diags(c, "string_fact");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "a catalog number needs its provenance");
}

TEST(CatalogDiagnostics, ZeroBandwidth) {
  Json c = valid_chip();
  c["hbm_bandwidth"]["value"] = "0 TB/s";
  const auto ds = chip_diags(c, "zero_bw");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "hbm_bandwidth.value");
  EXPECT_EQ(ds[0].message, "must be positive");
  EXPECT_EQ(ds[0].value, "0 TB/s");
}

TEST(CatalogDiagnostics, NegativeLinkBandwidth) {
  Json s = valid_system();
  s["scale_up"][0]["bandwidth_per_chip"]["value"] = "-1024 GB/s";
  const auto ds = system_diags(s, "neg_bw");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_up[0].bandwidth_per_chip.value");
  EXPECT_EQ(ds[0].message, "must be positive");
}

TEST(CatalogDiagnostics, WrongUnitKind) {
  Json c = valid_chip();
  c["hbm_bandwidth"]["value"] = "4.9 TB";
  const auto ds = chip_diags(c, "wrong_unit");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_NE(ds[0].message.find("is a size in bytes, expected a bandwidth"), std::string::npos)
      << ds[0].message;
}

TEST(CatalogDiagnostics, WrongTypes) {
  Json c = valid_chip();
  c["name"] = 5;
  c["gpu"]["sm_count"]["value"] = "many";
  const auto ds = chip_diags(c, "wrong_types");
  ASSERT_EQ(ds.size(), 2u);  // both reported at once
  EXPECT_EQ(ds[0].path, "name");
  EXPECT_EQ(ds[0].message, "wrong type");
  EXPECT_EQ(ds[0].expected, "a string");
  EXPECT_EQ(ds[1].path, "gpu.sm_count.value");
  EXPECT_EQ(ds[1].message, "wrong type");
  EXPECT_EQ(ds[1].expected, "an integer");
}

TEST(CatalogDiagnostics, UnknownConfidenceWord) {
  Json c = valid_chip();
  c["sram"]["confidence"] = "publshed";
  const auto ds = chip_diags(c, "bad_conf");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "sram.confidence");
  EXPECT_EQ(ds[0].message, "unknown confidence 'publshed'");
  EXPECT_EQ(ds[0].expected, "one of: published, derived, estimated, projected");
  EXPECT_EQ(ds[0].hint, "did you mean 'published'?");
}

TEST(CatalogDiagnostics, MissingSource) {
  Json c = valid_chip();
  c["sram"].erase("source");
  const auto ds = chip_diags(c, "no_source");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "sram.source");
  EXPECT_EQ(ds[0].message, "missing required field");
}

TEST(CatalogDiagnostics, UnknownDtype) {
  Json c = valid_chip();
  c["peak"]["bf61"] = fact("1 TFLOP/s");
  const auto ds = chip_diags(c, "bad_dtype");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "peak.bf61");
  EXPECT_EQ(ds[0].message, "unknown dtype 'bf61'");
  EXPECT_EQ(ds[0].hint, "did you mean 'bf16'?");
}

TEST(CatalogDiagnostics, UnknownArchitecture) {
  Json c = valid_chip();
  c["architecture"] = "hoper";
  const auto ds = chip_diags(c, "bad_arch");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "architecture");
  EXPECT_EQ(ds[0].message, "unknown architecture 'hoper' for a nvidia-gpu chip");
  EXPECT_EQ(ds[0].expected, "one of: ampere, hopper, blackwell");
  EXPECT_EQ(ds[0].hint, "did you mean 'hopper'?");
}

TEST(CatalogDiagnostics, IdMustMatchFileName) {
  Json c = valid_chip();
  c["id"] = "other";
  const auto ds = chip_diags(c, "id_mismatch");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "id");
  EXPECT_EQ(ds[0].message, "id does not match the file name");
}

TEST(CatalogDiagnostics, TorusShapeProductMustEqualSize) {
  Json s = valid_system();
  s["scale_up"][0]["shape"] = {4, 3};
  const auto ds = system_diags(s, "torus_shape");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_up[0].shape");
  EXPECT_EQ(ds[0].message, "torus shape product 4 x 3 = 12 does not equal size 16");
  EXPECT_EQ(ds[0].value, "[4,3]");
}

TEST(CatalogDiagnostics, TorusNeedsAShape) {
  Json s = valid_system();
  s["scale_up"][0].erase("shape");
  const auto ds = system_diags(s, "torus_no_shape");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_up[0].shape");
  EXPECT_EQ(ds[0].message, "missing required field");
}

TEST(CatalogDiagnostics, ScaleUpProductMustEqualDomain) {
  Json s = valid_system();
  s["chips_per_domain"]["value"] = 32;
  const auto ds = system_diags(s, "domain_product");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_up");
  EXPECT_EQ(ds[0].message, "product of scale-up dimension sizes 16 = 16 does not equal chips_per_domain 32");
}

TEST(CatalogDiagnostics, UnknownDimKind) {
  Json s = valid_system();
  s["scale_up"][0]["kind"] = "tourus";
  const auto ds = system_diags(s, "dim_kind");
  ASSERT_GE(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_up[0].kind");
  EXPECT_EQ(ds[0].message, "unknown dimension kind 'tourus'");
  EXPECT_EQ(ds[0].hint, "did you mean 'torus'?");
}

TEST(CatalogDiagnostics, UnknownBandwidthDirection) {
  Json s = valid_system();
  s["scale_out"]["bandwidth_direction"] = "per-directon";
  const auto ds = system_diags(s, "direction");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_out.bandwidth_direction");
  EXPECT_EQ(ds[0].hint, "did you mean 'per-direction'?");
}

TEST(CatalogDiagnostics, OversubscriptionBelowOne) {
  Json s = valid_system();
  s["scale_out"]["oversubscription"]["value"] = 0.5;
  const auto ds = system_diags(s, "oversub");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "scale_out.oversubscription.value");
  EXPECT_EQ(ds[0].message, "out of range");
}

TEST(CatalogDiagnostics, UnknownChipReferencedBySystem) {
  const std::string dir = temp_dir("unknown_chip");
  write_json(dir + "/chips", "tchip.json", valid_chip());
  Json s = valid_system();
  s["chip"] = "tchp";
  write_json(dir + "/systems", "tsys.json", s);
  try {
    Catalog::load(dir);
    FAIL() << "no exception";
  } catch (const core::InputError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    const auto& d = e.diagnostics()[0];
    EXPECT_NE(d.file.find("tsys.json"), std::string::npos);
    EXPECT_EQ(d.path, "chip");
    EXPECT_EQ(d.message, "unknown chip 'tchp'");
    EXPECT_EQ(d.value, "tchp");
    EXPECT_EQ(d.expected, "one of: tchip");
    EXPECT_EQ(d.hint, "did you mean 'tchip'?");
  }
}

TEST(CatalogDiagnostics, LoadCollectsProblemsOfEveryFile) {
  const std::string dir = temp_dir("collect");
  Json c = valid_chip();
  c["tdp"]["value"] = 700;
  write_json(dir + "/chips", "tchip.json", c);
  Json s = valid_system();
  s["max_chips"]["value"] = "lots";
  write_json(dir + "/systems", "tsys.json", s);
  try {
    Catalog::load(dir);
    FAIL() << "no exception";
  } catch (const core::InputError& e) {
    // The chip's unit error and the system's type error; the system's chip reference then
    // cannot resolve (the chip failed to load), which is reported too.
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tchip.json: tdp.value: number without a unit"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tsys.json: max_chips.value: wrong type"), std::string::npos) << msg;
  }
}

TEST(CatalogDiagnostics, MissingDirectory) {
  try {
    Catalog::load("/nonexistent/catalog");
    FAIL() << "no exception";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("catalog directory not found"), std::string::npos);
  }
}

}  // namespace

// ----------------------------------------------------------------------------- user layers

TEST(CatalogLayers, UserChipReplacesTheShippedOneInShippedSystems) {
  const std::string shipped = std::string(XS_TESTDATA_DIR) + "/catalog";
  std::ifstream in(shipped + "/chips/h100-sxm.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"value\": \"700 W\"";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "\"value\": \"650 W\"");
  const auto dir = std::filesystem::temp_directory_path() / "xpusim_catalog_layers";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "chips");
  std::ofstream(dir / "chips" / "h100-sxm.json") << text;

  const Catalog cat = Catalog::load(shipped, {dir.string()});
  EXPECT_DOUBLE_EQ(core::to_watts(cat.system("h100-sxm-dgx").chip.tdp.value), 650.0);
  EXPECT_EQ(cat.system("h100-sxm-dgx").chip.user_file, (dir / "chips" / "h100-sxm.json").string());
  EXPECT_TRUE(cat.system("h100-sxm-dgx").user_file.empty());
  ASSERT_EQ(cat.user_entries().size(), 1u);
  EXPECT_TRUE(cat.user_entries()[0].replaces_shipped);
  EXPECT_EQ(cat.system_ids(), real_catalog().system_ids());
  EXPECT_DOUBLE_EQ(core::to_watts(real_catalog().system("h100-sxm-dgx").chip.tdp.value), 700.0);
}

// A count that is missing its value, or does not fit the int it is held in, is a diagnostic and
// no fact: the cross-field checks never divide by a placeholder 0 (fuzz finding: a misspelt
// "value" in chips_per_node reached `chips_per_domain % chips_per_node`, regression
// tests/fuzz/regressions/config/system-invalid-chips-per-node-divides-by-zero.json).
TEST(CatalogDiagnostics, AnInvalidCountIsNoFactForTheCrossFieldChecks) {
  Json s = valid_system();
  s["chips_per_node"].erase("value");
  s["chips_per_node"]["valu=e"] = 8;
  auto ds = system_diags(s, "count_no_value");
  ASSERT_FALSE(ds.empty());
  bool named = false;
  for (const auto& d : ds) named = named || d.path.rfind("chips_per_node", 0) == 0;
  EXPECT_TRUE(named);

  s = valid_system();
  s["chips_per_node"]["value"] = 1LL << 40;  // would wrap as an int
  ds = system_diags(s, "count_too_big");
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].path, "chips_per_node.value");
  EXPECT_EQ(ds[0].message, "out of range");
  EXPECT_EQ(ds[0].value, std::to_string(1LL << 40));
}
