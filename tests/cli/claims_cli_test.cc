// End-to-end tests of `xpusim claims` and of the --price/--tdp overrides of train and serve.

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "cli_runner.h"
#include "xpusim/config/document.h"

using xpusim::config::Json;
using xpusim::test::run_cli;

namespace {

Json claims_json(const std::string& flags = "") {
  const auto r = run_cli("claims --json " + flags);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

std::map<std::string, Json> by_id(const Json& doc) {
  std::map<std::string, Json> out;
  for (const auto& c : doc["claims"]) out[c["id"].get<std::string>()] = c;
  return out;
}

// The shipped document, computed once for the tests that only read it.
const Json& shipped() {
  static const Json doc = claims_json();
  return doc;
}

TEST(ClaimsCli, EveryClaimIsPresentWithRatiosAndWhy) {
  const auto claims = by_id(shipped());
  for (const char* id : {"seed-4x-speed", "seed-4x-memory", "seed-40pct-energy-efficiency", "seed-1m-chips",
                         "seed-lower-inference-cost", "aws-4.4x-compute", "aws-3.9x-memory-bandwidth",
                         "aws-4x-energy-efficiency", "aws-3x-throughput-per-chip-gpt-oss",
                         "aws-4x-lower-response-time-gpt-oss", "aws-ultraclusters-10x"}) {
    ASSERT_TRUE(claims.count(id)) << id;
    const Json& c = claims.at(id);
    EXPECT_GT(c["published_ratio"].get<double>(), 0) << id;
    EXPECT_GT(c["xpusim_ratio"].get<double>(), 0) << id;
    EXPECT_FALSE(c["why"].empty()) << id;
    EXPECT_FALSE(c["conditions"].get<std::string>().empty()) << id;
    EXPECT_LE(c["xpusim_ratio_range"]["low"].get<double>(), c["xpusim_ratio"].get<double>()) << id;
    EXPECT_GE(c["xpusim_ratio_range"]["high"].get<double>(), c["xpusim_ratio"].get<double>()) << id;
    EXPECT_TRUE(std::set<std::string>({"reproduced", "within range", "not reproduced"}).count(c["verdict"])) << id;
  }
  EXPECT_DOUBLE_EQ(claims.at("aws-ultraclusters-10x")["published_ratio"].get<double>(), 10.0);
}

// The ratios come from the catalog: HBM per UltraServer and peak per UltraServer, recomputed here
// from `catalog show --json` (capacity per chip x chips per domain).
TEST(ClaimsCli, CatalogRatiosAreDerivedFromTheCatalog) {
  auto show = [](const std::string& id) { return Json::parse(run_cli("catalog show " + id + " --json").out); };
  const Json t3 = show("trn3-ultraserver-gen2"), t2 = show("trn2-ultraserver");
  auto per_domain = [](const Json& s, double per_chip) { return per_chip * s["system"]["chips_per_domain"].get<double>(); };
  const double hbm = per_domain(t3, t3["chip"]["hbm_capacity_gib"].get<double>()) /
                     per_domain(t2, t2["chip"]["hbm_capacity_gib"].get<double>());
  const double peak = per_domain(t3, t3["chip"]["peak_tflops"]["mxfp8"].get<double>()) /
                      per_domain(t2, t2["chip"]["peak_tflops"]["fp8"].get<double>());
  const double bw = per_domain(t3, t3["chip"]["hbm_bandwidth_tb_s"].get<double>()) /
                    per_domain(t2, t2["chip"]["hbm_bandwidth_tb_s"].get<double>());
  const auto claims = by_id(shipped());
  EXPECT_NEAR(claims.at("seed-4x-memory")["xpusim_ratio"].get<double>(), hbm, 1e-9);
  EXPECT_NEAR(hbm, 20736.0 / 6144.0, 1e-9);  // the reading: 20,736 GiB vs 6,144 GiB
  EXPECT_NEAR(claims.at("aws-4.4x-compute")["xpusim_ratio"].get<double>(), peak, 1e-9);
  EXPECT_NEAR(claims.at("aws-3.9x-memory-bandwidth")["xpusim_ratio"].get<double>(), bw, 1e-9);
}

TEST(ClaimsCli, EstimatedInputsHaveRangesAndFlipsAreReported) {
  const auto claims = by_id(shipped());
  EXPECT_FALSE(claims.at("seed-40pct-energy-efficiency")["flips"].empty());
  EXPECT_FALSE(claims.at("seed-lower-inference-cost")["flips"].empty());
  const Json chip = Json::parse(run_cli("catalog show trainium3 --json").out)["chip"];
  EXPECT_EQ(chip["tdp_confidence"], "estimated");
  EXPECT_LT(chip["tdp_low_w"].get<double>(), chip["tdp_w"].get<double>());
  EXPECT_GT(chip["tdp_high_w"].get<double>(), chip["tdp_w"].get<double>());
  const Json sys = Json::parse(run_cli("catalog show trn3-ultraserver-gen1 --json").out)["system"];
  EXPECT_EQ(sys["price_per_chip_hour_confidence"], "estimated");
  EXPECT_LT(sys["price_per_chip_hour_low_usd"].get<double>(), sys["price_per_chip_hour_usd"].get<double>());
  EXPECT_DOUBLE_EQ(sys["scale_out_bandwidth_per_domain_per_direction_gbit_s"].get<double>(), 12800.0);
  const Json gen2 = Json::parse(run_cli("catalog show trn3-ultraserver-gen2 --json").out)["system"];
  EXPECT_DOUBLE_EQ(gen2["scale_out_bandwidth_per_domain_per_direction_gbit_s"].get<double>(), 28800.0);
  const auto text = run_cli("catalog show trn3-ultraserver-gen2");
  EXPECT_NE(text.out.find("TDP 1000 W (estimated, range 715 W .. 1400 W)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("price $3.78 (estimated, range $2.24 .. $4.33)"), std::string::npos) << text.out;
}

// A higher Trn3 price makes Trn3 less cheap per token (Trn2/Trn3 cost ratio falls); a higher
// TDP makes it less energy-efficient (Trn3/Trn2 tokens per joule falls).
TEST(ClaimsCli, OverridesMoveTheRatiosTheExpectedWay) {
  const auto base = by_id(shipped());
  const auto dear = by_id(claims_json("--price 8 --tdp 1400"));
  EXPECT_LT(dear.at("seed-lower-inference-cost")["xpusim_ratio"].get<double>(),
            base.at("seed-lower-inference-cost")["xpusim_ratio"].get<double>());
  EXPECT_LT(dear.at("seed-40pct-energy-efficiency")["xpusim_ratio"].get<double>(),
            base.at("seed-40pct-energy-efficiency")["xpusim_ratio"].get<double>());
  EXPECT_LT(dear.at("aws-4x-energy-efficiency")["xpusim_ratio"].get<double>(),
            base.at("aws-4x-energy-efficiency")["xpusim_ratio"].get<double>());
  // Performance claims do not depend on price or power.
  EXPECT_DOUBLE_EQ(dear.at("seed-4x-speed")["xpusim_ratio"].get<double>(),
                   base.at("seed-4x-speed")["xpusim_ratio"].get<double>());
}

TEST(ClaimsCli, BadOverridesExitTwoNamingTheFlag) {
  for (const std::string cmd : {"claims --price -1", "claims --tdp 0",
                                "train --system trn3-ultraserver-gen2 --model llama3.1-8b --chips 16 --price 0",
                                "serve --system trn3-ultraserver-gen2 --model llama3.1-8b --tdp -5 --rate 1 --requests 10"}) {
    const auto r = run_cli(cmd);
    EXPECT_EQ(r.exit_code, 2) << cmd;
    EXPECT_TRUE(r.out.empty()) << cmd;
    const bool price = cmd.find("--price") != std::string::npos;
    EXPECT_NE(r.err.find(price ? "error: --price: must be a finite positive number" : "error: --tdp: must be a finite positive number"),
              std::string::npos) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find(price ? "USD per chip-hour" : "chip TDP in watts"), std::string::npos) << r.err;
  }
  const auto nan = run_cli("claims --price nan");
  EXPECT_EQ(nan.exit_code, 2) << nan.err;
}

TEST(ClaimsCli, TrainAndServeStateTheOverride) {
  const std::string train = "train --system trn3-ultraserver-gen2 --model llama3.1-8b --chips 16 --tp 4 --pp 1";
  const Json base = Json::parse(run_cli(train + " --json").out);
  const auto r = run_cli(train + " --price 7.56 --tdp 2000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["inputs"]["overrides"]["price_usd_per_chip_hour"].get<double>(), 7.56);
  EXPECT_NEAR(j["cost_per_step_usd"].get<double>(), 2 * base["cost_per_step_usd"].get<double>(), 1e-9);
  EXPECT_GT(j["power_per_chip_w"].get<double>(), base["power_per_chip_w"].get<double>());
  EXPECT_FALSE(j["price_estimated"].get<bool>());
  ASSERT_EQ(j["overrides"].size(), 2u);
  EXPECT_NE(run_cli(train + " --price 7.56").out.find("override: --price: $7.56 per chip-hour"), std::string::npos);
  const std::string serve = "serve --system trn3-ultraserver-gen2 --model llama3.1-8b --precision fp8 --rate 2 "
                            "--requests 50 --in-len 256 --out-len 32";
  const auto s = run_cli(serve + " --price 7.56");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("--price: $7.56 per chip-hour used for trn3-ultraserver-gen2"), std::string::npos) << s.out;
  const auto cmp = run_cli("serve --compare --model llama3.1-8b --rate 2 --price 3");
  EXPECT_EQ(cmp.exit_code, 2);
  EXPECT_NE(cmp.err.find("--price: applies to the one system simulated"), std::string::npos) << cmp.err;
}

TEST(ClaimsCli, TextHasTheTable) {
  const auto a = run_cli("claims");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(a.out.find("published"), std::string::npos);
  EXPECT_NE(a.out.find("aws-ultraclusters-10x"), std::string::npos);
  EXPECT_NE(a.out.find("why:"), std::string::npos);
}

}  // namespace

// Verdicts follow their ranges (issue 45 case 4): an equality claim passes only when its range meets
// the published figure within the rounding of its last printed digit; a directional one is
// reproduced only when every case satisfies it; serving compares each chip at its fastest
// precision; the million-chip claim counts failures.
TEST(ClaimsCli, VerdictsFollowTheirRanges) {
  const auto r = xpusim::test::run_cli("claims --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& c : j["claims"]) {
    const double p = c["published_ratio"], lo = c["xpusim_ratio_range"]["low"], hi = c["xpusim_ratio_range"]["high"];
    const std::string v = c["verdict"], id = c["id"];
    if (c["published_relation"] == "greater than") {
      EXPECT_EQ(v, lo > p ? "reproduced" : hi > p ? "within range" : "not reproduced") << id;
      continue;
    }
    double unit = 1;  // the last printed digit of the published figure
    while (std::fabs(p / unit - std::round(p / unit)) > 1e-9) unit /= 10;
    const bool meets = lo <= p + unit / 2 && hi >= p - unit / 2;
    if (v != "not reproduced") EXPECT_TRUE(meets) << id << ": " << lo << " .. " << hi << " against " << p;
    else EXPECT_FALSE(meets) << id;
  }
  for (const auto& c : j["claims"]) {
    if (c["id"] == "seed-40pct-energy-efficiency") {
      EXPECT_EQ(c["verdict"], "not reproduced");
    }
    if (c["id"] == "seed-lower-inference-cost") {
      EXPECT_NE(c["cases"][0]["conditions"].get<std::string>().find("MXFP4 vs FP8"), std::string::npos) << c["cases"].dump();
    }
    if (c["id"] == "seed-1m-chips") {
      EXPECT_NE(c["metric"].get<std::string>().find("goodput"), std::string::npos);
    }
  }
}

// The gpt-oss claims carry the Trn3 forecast's software range as two more cases: the same Trn3
// run under the slowest validated Neuron stack and under GPU-grade serving software, against Trn2
// as it runs. Their ratios over the central one are the serve command's own software range.
TEST(ClaimsCli, TheGptOssClaimsShowTheTrn3SoftwareRange) {
  const auto claims = by_id(shipped());
  const auto r = run_cli("serve --system trn3-ultraserver-gen2 --model gpt-oss-120b --chips 16 --precision mxfp4 "
                         "--in-len 8192 --out-len 1024 --concurrency 1024 --requests 4096 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json serve = Json::parse(r.out);
  const Json& range = serve["software_range"];
  ASSERT_TRUE(range.is_object());
  const double central_tps = serve["throughput_tokens_per_s_per_chip"].get<double>();
  const double central_e2e = serve["e2e_latency_mean_s"].get<double>();
  auto case_ratio = [&](const std::string& id, const std::string& prefix) {
    for (const auto& k : claims.at(id)["cases"])
      if (k["conditions"].get<std::string>().rfind(prefix, 0) == 0) return k["xpusim_ratio"].get<double>();
    ADD_FAILURE() << id << " has no case " << prefix;
    return 0.0;
  };
  for (const std::string end : {"low", "high"}) {
    const std::string prefix = "Trn3 software range " + end + ": ";
    const double tput = claims.at("aws-3x-throughput-per-chip-gpt-oss")["xpusim_ratio"].get<double>();
    EXPECT_NEAR(case_ratio("aws-3x-throughput-per-chip-gpt-oss", prefix) / tput,
                range[end]["output_tokens_per_s_per_chip"].get<double>() / central_tps, 1e-9) << end;
    const double latency = claims.at("aws-4x-lower-response-time-gpt-oss")["xpusim_ratio"].get<double>();
    EXPECT_NEAR(case_ratio("aws-4x-lower-response-time-gpt-oss", prefix) / latency,
                central_e2e / range[end]["e2e_latency_mean_s"].get<double>(), 1e-9) << end;
  }
  // The claim's range spans the software range's cases.
  const Json& c = claims.at("aws-3x-throughput-per-chip-gpt-oss");
  EXPECT_LE(c["xpusim_ratio_range"]["low"].get<double>(), case_ratio("aws-3x-throughput-per-chip-gpt-oss", "Trn3 software range low: "));
  EXPECT_GE(c["xpusim_ratio_range"]["high"].get<double>(), case_ratio("aws-3x-throughput-per-chip-gpt-oss", "Trn3 software range high: "));
}
