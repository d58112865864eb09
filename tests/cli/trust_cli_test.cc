// Every train and serve prediction carries its uncertainty band (`*_low`/`*_high`) from the
// shipped cross-validated residuals (data/validation/uncertainty.json) and the `extrapolating`
// flag with its reasons (docs/validation.md, "Uncertainty").
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace {

using nlohmann::json;
using xpusim::test::run_cli;

json run_json(const std::string& args) {
  const auto r = run_cli(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
  return json::parse(r.out);
}

/// The band of `key` matches its residual percentiles in the trust block (its framework and
/// metric cell's, else its kind and family's: trust.metric_bands).
void expect_band(const json& doc, const std::string& key, bool is_time) {
  const double v = doc.at(key).get<double>(), lo = doc.at(key + "_low").get<double>(),
               hi = doc.at(key + "_high").get<double>();
  const json& band = doc.at("trust").at("metric_bands").at(key);
  if (band.at("cell") == "kind and family" && !doc.at("trust").at("extrapolating").get<bool>()) {
    EXPECT_EQ(band.at("log_residual_p10"), doc.at("trust").at("log_residual_p10")) << key;
    EXPECT_EQ(band.at("log_residual_p90"), doc.at("trust").at("log_residual_p90")) << key;
  }
  const double p10 = band.at("log_residual_p10").get<double>();
  const double p90 = band.at("log_residual_p90").get<double>();
  // Rate residual r = ln(pred/measured): the measured rate lies in [v·e^−p90, v·e^−p10]; a time
  // is the reciprocal.
  const double want_lo = is_time ? v * std::exp(p10) : v * std::exp(-p90);
  const double want_hi = is_time ? v * std::exp(p90) : v * std::exp(-p10);
  EXPECT_NEAR(lo, want_lo, 1e-9 * std::fabs(want_lo)) << key;
  EXPECT_NEAR(hi, want_hi, 1e-9 * std::fabs(want_hi)) << key;
  EXPECT_LE(lo, hi) << key;
}

TEST(TrustCli, TrainStepCarriesItsBandFromTheShippedResiduals) {
  const json doc = run_json("train --system h100-sxm-dgx --model llama3.1-8b --chips 8");
  ASSERT_TRUE(doc.at("trust").at("has_band").get<bool>()) << doc.at("trust").dump();
  EXPECT_GT(doc.at("trust").at("band_rows").get<int>(), 10);
  expect_band(doc, "step_time_s", true);
  expect_band(doc, "tokens_per_s", false);
  expect_band(doc, "tokens_per_s_per_chip", false);
  expect_band(doc, "mfu_pct", false);
  EXPECT_FALSE(doc.at("trust").at("extrapolating").get<bool>()) << doc.at("trust").dump();
}

TEST(TrustCli, AMillionChipsIsExtrapolatingAndSaysWhy) {
  const json doc = run_json(
      "train --system trn3-ultraserver-gen2 --model llama3.1-405b --chips 1048576 --tp 16 --pp 16 --vpp 2 "
      "--precision mxfp8 --global-batch 131072");
  EXPECT_TRUE(doc.at("trust").at("extrapolating").get<bool>());
  bool names_scale = false;
  for (const auto& reason : doc.at("trust").at("reasons"))
    names_scale = names_scale || reason.get<std::string>().find("1048576 chips") != std::string::npos;
  EXPECT_TRUE(names_scale) << doc.at("trust").dump();
  const auto text = run_cli(
      "train --system trn3-ultraserver-gen2 --model llama3.1-405b --chips 1048576 --tp 16 --pp 16 --vpp 2 "
      "--precision mxfp8 --global-batch 131072");
  EXPECT_NE(text.out.find("extrapolating:"), std::string::npos) << text.out;
}

TEST(TrustCli, ServeCarriesBandsOnLatencyAndThroughput) {
  const json doc = run_json(
      "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --in-len 512 --out-len 128 --rate 2 "
      "--requests 50");
  ASSERT_TRUE(doc.at("trust").at("has_band").get<bool>()) << doc.at("trust").dump();
  for (const char* key : {"ttft_mean_ms", "tpot_mean_ms", "output_tokens_per_s", "output_tokens_per_s_per_chip"}) {
    EXPECT_TRUE(doc.contains(std::string(key) + "_low")) << key;
    EXPECT_LE(doc.at(std::string(key) + "_low").get<double>(), doc.at(std::string(key) + "_high").get<double>()) << key;
  }
  const auto text = run_cli(
      "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --in-len 512 --out-len 128 --rate 2 --requests 50");
  EXPECT_NE(text.out.find("uncertainty (p10..p90"), std::string::npos) << text.out;
}

}  // namespace

// A chip generation without validation rows of its own is extrapolating inside a covered family
// (issue 45 case 1: Trn3 training read a Trn1/Trn2 band as validated), naming the chips that are.
TEST(TrustCli, Trainium3IsExtrapolatingAndNamesTheValidatedChips) {
  const auto r = xpusim::test::run_cli(
      "train --system trn3-ultraserver-gen2 --model llama3.1-70b --chips 144 --framework neuronx-distributed --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["trust"]["extrapolating"].get<bool>());
  EXPECT_NE(j["trust"]["reasons"].dump().find("no validated train rows on trainium3"), std::string::npos)
      << j["trust"]["reasons"].dump();
  EXPECT_NE(j["trust"]["reasons"].dump().find("trainium2"), std::string::npos);
}

// Every Trn3 output, train and serve, is extrapolating and names the nearest validated cell its
// band is from: its kind on the Trainium family, with the chips of those rows (issue 45 item 1).
TEST(TrustCli, Trainium3NamesTheCellItsBandIsFrom) {
  for (const std::string args :
       {"train --system trn3-ultraserver-gen2 --model llama3.1-70b --chips 144 --framework neuronx-distributed",
        "serve --system trn3-ultraserver-gen2 --model llama3.1-8b --chips 1 --rate 1 --requests 20"}) {
    const auto r = xpusim::test::run_cli(args + " --json");
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const auto& trust = j.at("trust");
    const std::string kind = args.substr(0, args.find(' ')) == "train" ? "train" : "infer";
    EXPECT_TRUE(trust.at("extrapolating").get<bool>()) << args;
    EXPECT_EQ(trust.at("band_cell"), kind + "/trainium") << args;
    EXPECT_EQ(trust.at("band_cell_chips").dump().find("trainium3"), std::string::npos) << args;
    ASSERT_TRUE(trust.contains("widening")) << trust.dump();
    for (const auto& [key, band] : trust.at("metric_bands").items()) {
      const std::string basis = band.at("basis");
      EXPECT_NE(basis.find("out-of-fold rows of " + kind + "/trainium"), std::string::npos) << key << ": " << basis;
      EXPECT_NE(basis.find("extrapolating"), std::string::npos) << key << ": " << basis;
    }
    // The text names the same cell.
    const auto text = xpusim::test::run_cli(args);
    EXPECT_NE(text.out.find("out-of-fold rows of " + kind + "/trainium"), std::string::npos) << text.out;
  }
}
