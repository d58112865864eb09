// validation/trust.h: bands from signed CV log-residuals (p10/p90 per kind/family), coverage and
// the extrapolating flag, and the data file round trip.
#include "xpusim/validation/trust.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "xpusim/hw/catalog.h"

namespace {

using namespace xpusim;

validation::RowResult result(const std::string& metric, double measured, double predicted, long long chips) {
  validation::RowResult r;
  r.row.kind = "train";
  r.row.system = "h100-sxm-dgx";
  r.row.model = "llama3-8b";
  r.row.precision = "bf16";
  r.row.metric = metric;
  r.row.value = measured;
  r.row.chips = chips;
  r.prediction.predicted = predicted;
  r.prediction.framework = "megatron";
  return r;
}

TEST(Trust, BandsAreThePercentilesOfRateOrientedLogResiduals) {
  const hw::Catalog catalog = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  const calib::Params params = calib::load_shipped(XS_TESTDATA_DIR);
  const validation::Context ctx{&catalog, std::string(XS_TESTDATA_DIR) + "/models", &params};
  // Rate rows: residual ln(pred/meas); the time row counts as −ln(pred/meas).
  const std::vector<validation::RowResult> cv = {
      result("tokens_per_s_per_chip", 100, 110, 8), result("tokens_per_s_per_chip", 100, 90, 64),
      result("mfu_pct", 40, 40, 16), result("step_time_s", 2.0, 2.5, 512), result("mfu_pct", 50, 60, 8)};
  std::vector<double> r = {std::log(1.1), std::log(0.9), 0.0, -std::log(1.25), std::log(1.2)};
  std::sort(r.begin(), r.end());
  // Prediction-bound ranks p·(n+1): p10 at rank 0.6 and p90 at rank 5.4 of 1..5 lie beyond the
  // extremes, so five rows give [min, max].
  const double p10 = r[0], p90 = r[4];
  const auto data = validation::trust_from(cv, ctx, "fixture");
  const auto& band = data.bands.at("train/nvidia-hopper");
  EXPECT_EQ(band.n, 5);
  EXPECT_NEAR(band.low, p10, 1e-4);
  EXPECT_NEAR(band.high, p90, 1e-4);
  const auto& cov = data.coverage.at("train/nvidia-hopper");
  EXPECT_EQ(cov.max_chips, 512);
  EXPECT_EQ(cov.model_types, std::set<std::string>{"dense"});

  // The file round trip keeps everything.
  const std::string path = ::testing::TempDir() + "uncertainty.json";
  std::ofstream(path) << validation::trust_json_text(data);
  const auto loaded = validation::load_trust(path);
  EXPECT_DOUBLE_EQ(loaded.bands.at("train/nvidia-hopper").low, band.low);
  EXPECT_EQ(loaded.coverage.at("train/nvidia-hopper").frameworks, std::set<std::string>{"megatron"});

  // A prediction inside the coverage: a band, not extrapolating; a rate's band is mirrored.
  validation::TrustQuery q{"train", "nvidia-hopper", "dense", "bf16", "megatron", 1024, "", "", ""};
  auto a = validation::assess(loaded, q);
  EXPECT_FALSE(a.extrapolating);
  const auto [lo, hi] = validation::band_of(a, 100.0, false);
  EXPECT_NEAR(lo, 100.0 * std::exp(-band.high), 1e-9);
  EXPECT_NEAR(hi, 100.0 * std::exp(-band.low), 1e-9);
  const auto [tlo, thi] = validation::band_of(a, 2.0, true);
  EXPECT_NEAR(tlo, 2.0 * std::exp(band.low), 1e-9);
  EXPECT_NEAR(thi, 2.0 * std::exp(band.high), 1e-9);

  // Outside: every reason named.
  a = validation::assess(loaded, {"train", "nvidia-hopper", "moe", "fp8", "torchtitan", 1025, "", "", ""});
  EXPECT_TRUE(a.extrapolating);
  EXPECT_EQ(a.reasons.size(), 4u);
  // Hardware from a user's catalog is named as not validated, band kept.
  a = validation::assess(loaded, {"train", "nvidia-hopper", "dense", "bf16", "megatron", 1024, "my/systems/x.json", "", ""});
  EXPECT_TRUE(a.extrapolating);
  EXPECT_TRUE(a.has_band);
  ASSERT_EQ(a.reasons.size(), 1u);
  EXPECT_NE(a.reasons[0].find("my/systems/x.json"), std::string::npos);
  a = validation::assess(loaded, {"infer", "trainium", "dense", "bf16", "vllm", 1, "", "", ""});
  EXPECT_TRUE(a.extrapolating);
  EXPECT_FALSE(a.has_band);

  // A chip generation with no row of its own is extrapolation inside a covered family (the rows
  // are on H100; an H200 query is not), named with the chips the family's rows are on.
  EXPECT_EQ(loaded.coverage.at("train/nvidia-hopper").chips, std::set<std::string>{"h100-sxm"});
  q.chip = "h100-sxm";
  EXPECT_FALSE(validation::assess(loaded, q).extrapolating);
  q.chip = "h200-sxm";
  a = validation::assess(loaded, q);
  EXPECT_TRUE(a.extrapolating);
  ASSERT_EQ(a.reasons.size(), 1u);
  EXPECT_EQ(a.reasons[0], "no validated train rows on h200-sxm (the nvidia-hopper family's rows are on h100-sxm)");
}

}  // namespace

namespace {

// A framework and metric cell with at least kMinCellRows rows has a band of its own, which its
// metric takes over the family's; smaller cells take the family's; an extrapolating query's band
// is twice as wide (half a width each side).
TEST(Trust, CellsOfTenRowsBandTheirMetric) {
  const hw::Catalog catalog = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  const calib::Params params = calib::load_shipped(XS_TESTDATA_DIR);
  const validation::Context ctx{&catalog, std::string(XS_TESTDATA_DIR) + "/models", &params};
  std::vector<validation::RowResult> cv;
  for (int i = 0; i < validation::kMinCellRows; ++i)  // a step-time cell: predicted 10..19% fast
    cv.push_back(result("step_time_s", 1.0, 1.0 / (1.1 + 0.01 * i), 8));
  for (int i = 0; i < 3; ++i) cv.push_back(result("mfu_pct", 50, 40, 8));  // too few for a cell
  const auto data = validation::trust_from(cv, ctx, "fixture");
  ASSERT_EQ(data.cells.size(), 1u);
  const auto& cell = data.cells.at("train/nvidia-hopper/megatron/step_time_s");
  EXPECT_EQ(cell.n, validation::kMinCellRows);
  // Rate residual −ln(pred/measured) = ln(1.1 + 0.01 i); p10 at rank 0.1·11 = 1.1 of 1..10.
  EXPECT_NEAR(cell.low, std::log(1.1) + 0.1 * (std::log(1.11) - std::log(1.1)), 1e-4);
  const std::string path = ::testing::TempDir() + "cells.json";
  std::ofstream(path) << validation::trust_json_text(data);
  const auto loaded = validation::load_trust(path);
  ASSERT_EQ(loaded.cells.size(), 1u);
  auto a = validation::assess(loaded, {"train", "nvidia-hopper", "dense", "bf16", "megatron", 8, "", "", ""});
  ASSERT_FALSE(a.extrapolating);
  EXPECT_DOUBLE_EQ(validation::band_for(a, "step_time_s").low, loaded.cells.at("train/nvidia-hopper/megatron/step_time_s").low);
  EXPECT_DOUBLE_EQ(validation::band_for(a, "mfu_pct").low, a.band.low);
  const auto [lo, hi] = validation::band_of(a, 2.0, true, "step_time_s");
  EXPECT_NEAR(lo, 2.0 * std::exp(cell.low), 1e-9);
  EXPECT_NEAR(hi, 2.0 * std::exp(cell.high), 1e-9);
  a = validation::assess(loaded, {"train", "nvidia-hopper", "moe", "bf16", "megatron", 8, "", "", ""});
  ASSERT_TRUE(a.extrapolating);
  const auto wide = validation::band_for(a, "step_time_s");
  EXPECT_NEAR(wide.high - wide.low, 2 * (cell.high - cell.low), 1e-12);
  EXPECT_NEAR(wide.low + wide.high, cell.low + cell.high, 1e-12);
}

}  // namespace

namespace {

// The widening of an extrapolating band is measured: p90 − p10 of the per-source median
// residuals of the kind (sources with kMinSourceRows rows or more, when kMinSpreadSources have
// them); a source with fewer rows does not count, and without the spread the band doubles.
TEST(Trust, ExtrapolatingBandsWidenByTheSpreadBetweenSources) {
  const hw::Catalog catalog = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  const calib::Params params = calib::load_shipped(XS_TESTDATA_DIR);
  const validation::Context ctx{&catalog, std::string(XS_TESTDATA_DIR) + "/models", &params};
  // Four sources of three rows each, predicted 0%, +10%, +20%, +40% fast (rate residual ln(1+x));
  // a fifth with two rows (too few) predicted 3x fast.
  const std::vector<double> fast = {1.0, 1.1, 1.2, 1.4};
  std::vector<validation::RowResult> cv;
  for (size_t s = 0; s < fast.size(); ++s)
    for (int i = 0; i < validation::kMinSourceRows; ++i) {
      auto r = result("tokens_per_s_per_chip", 100, 100 * fast[s], 8);
      r.row.source_url = "https://source" + std::to_string(s) + ".example.org/run" + std::to_string(i);
      cv.push_back(r);
    }
  for (int i = 0; i < validation::kMinSourceRows - 1; ++i) {
    auto r = result("tokens_per_s_per_chip", 100, 300, 8);
    r.row.source_url = "https://outlier.example.org/run" + std::to_string(i);
    cv.push_back(r);
  }
  const auto data = validation::trust_from(cv, ctx, "fixture");
  ASSERT_EQ(data.widening.count("train"), 1u);
  const auto& w = data.widening.at("train");
  EXPECT_EQ(w.sources, 4);
  // Medians ln 1, ln 1.1, ln 1.2, ln 1.4; p10 at rank 0.5 and p90 at rank 4.5 of 1..4 are held
  // at the extremes.
  const double spread = std::log(1.4) - 0.0;
  EXPECT_NEAR(w.log_spread, spread, 1e-4);

  const std::string path = ::testing::TempDir() + "widening.json";
  std::ofstream(path) << validation::trust_json_text(data);
  const auto loaded = validation::load_trust(path);
  ASSERT_EQ(loaded.widening.count("train"), 1u);
  EXPECT_DOUBLE_EQ(loaded.widening.at("train").log_spread, w.log_spread);

  auto a = validation::assess(loaded, {"train", "nvidia-hopper", "moe", "bf16", "megatron", 8, "", "", ""});
  ASSERT_TRUE(a.extrapolating);
  const auto wide = validation::band_for(a, "mfu_pct");
  EXPECT_NEAR(wide.high - wide.low, a.band.high - a.band.low + w.log_spread, 1e-12);
  EXPECT_NEAR(wide.low + wide.high, a.band.low + a.band.high, 1e-12);
  // The basis names the cell, its rows and chips, and the widening.
  const std::string basis = validation::band_basis(a, "mfu_pct");
  EXPECT_NE(basis.find(std::to_string(a.band.n) + " out-of-fold rows of train/nvidia-hopper (chips h100-sxm)"),
            std::string::npos) << basis;
  EXPECT_NE(basis.find("spread between 4 sources"), std::string::npos) << basis;

  // Without a measured spread the band doubles, and the basis says so.
  validation::TrustData none = loaded;
  none.widening.clear();
  a = validation::assess(none, {"train", "nvidia-hopper", "moe", "bf16", "megatron", 8, "", "", ""});
  const auto doubled = validation::band_for(a, "mfu_pct");
  EXPECT_NEAR(doubled.high - doubled.low, 2 * (a.band.high - a.band.low), 1e-12);
  EXPECT_NE(validation::band_basis(a, "mfu_pct").find("twice its width"), std::string::npos);
}

// A rate and the same rate per chip share a cell's band whichever of the two the cell measured.
TEST(Trust, PerChipRateTakesItsTotalsCell) {
  validation::Assessment a;
  a.has_band = true;
  a.band = validation::Band{100, -0.5, 0.5};
  a.group = "infer/nvidia-hopper";
  a.framework = "trtllm";
  a.metric_bands["throughput_tokens_per_s"] = validation::Band{12, -0.1, 0.05};
  EXPECT_DOUBLE_EQ(validation::band_for(a, "throughput_tokens_per_s_per_chip").low, -0.1);
  EXPECT_DOUBLE_EQ(validation::band_for(a, "ttft_ms").low, -0.5);
  EXPECT_EQ(validation::band_rows_basis(a, "throughput_tokens_per_s_per_chip"),
            "12 out-of-fold rows of infer/nvidia-hopper/trtllm/throughput_tokens_per_s");
}

}  // namespace
