// Trainium4 and GB300 in one NVLink Fusion domain (docs/fusion.md): heterogeneous disaggregated
// serving (serve --prefill-system/--decode-system) and mixed training (train --mix).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;
using Json = nlohmann::json;

namespace {

const std::string kTrn4 = "trn4-fusion-mixed-rack";
const std::string kGb300 = "gb300-fusion-mixed-rack";

std::string hetero_serve(const std::string& prefill, const std::string& decode) {
  return "serve --model llama3.1-8b --precision fp8 --tp 2 --prefill-system " + prefill + " --prefill-chips 4" +
         " --decode-system " + decode + " --decode-chips 4 --rate 20 --requests 100 --in-len 2048 --out-len 32";
}

Json json_of(const std::string& args) {
  auto r = run_cli(args + " --json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

TEST(FusionServe, KvMovesOverNvlinkFusionAtTheSlowerEndpointsRate) {
  const Json j = json_of(hetero_serve(kGb300, kTrn4));
  const Json& link = j["heterogeneous"]["kv_transfer"];
  EXPECT_EQ(link["fabric"], "nvlink-fusion");
  EXPECT_EQ(link["fusion_domain"], "trn4-gb300-fusion-rack");
  EXPECT_EQ(link["slower_system"], kGb300);  // NVLink 5, 1.8 TB/s vs Trainium4's 3.6 TB/s
  const double rate = link["rate_per_chip_per_direction_gb_s"].get<double>();
  EXPECT_LT(rate, 900.0);  // at most half of GB300's 1.8 TB/s (both directions)
  EXPECT_GT(rate, 450.0);
  // Every request's KV crosses once: prompt x bytes per token per chip x tp chips.
  const double per_token = link["bytes_per_token_per_chip"].get<double>();
  EXPECT_EQ(link["transfers"], 100);
  EXPECT_NEAR(link["bytes_total"].get<double>(), per_token * 2048 * 100 * 2, 1.0);
  const double expect_ms = link["latency_us"].get<double>() / 1e3 + per_token * 2048 / (rate * 1e9) * 1e3;
  EXPECT_NEAR(link["transfer_mean_ms"].get<double>(), expect_ms, 1e-9);
  // The other direction runs at the same, slower, rate.
  const Json back = json_of(hetero_serve(kTrn4, kGb300));
  EXPECT_DOUBLE_EQ(back["heterogeneous"]["kv_transfer"]["rate_per_chip_per_direction_gb_s"].get<double>(), rate);
}

TEST(FusionServe, PoolsReportTheirOwnChipsAndEnergyAndCostAddUp) {
  const Json j = json_of(hetero_serve(kGb300, kTrn4));
  const Json& pools = j["heterogeneous"]["pools"];
  ASSERT_EQ(pools.size(), 2u);
  EXPECT_EQ(pools[0]["role"], "prefill");
  EXPECT_EQ(pools[0]["system"], kGb300);
  EXPECT_EQ(pools[1]["system"], kTrn4);
  EXPECT_NE(pools[0]["framework"], pools[1]["framework"]);  // each chip's own serving stack
  double joules = 0, dollars = 0;
  for (const auto& p : pools) {
    EXPECT_GT(p["utilisation"].get<double>(), 0.0);
    EXPECT_LE(p["utilisation"].get<double>(), 1.0);
    joules += p["energy_j"].get<double>();
    dollars += p["cost_usd"].get<double>();
  }
  const double tokens = 100.0 * 32;
  EXPECT_NEAR(j["energy_j_per_output_token"].get<double>(), joules / tokens, 1e-9 * joules);
  EXPECT_NEAR(j["cost_usd_per_million_output_tokens"].get<double>(), dollars * 1e6 / tokens, 1e-9 * dollars * 1e6);
  EXPECT_EQ(j["chips"], 8);
}

TEST(FusionServe, SystemsOutsideOneFusionDomainUseTheScaleOutNetwork) {
  const Json j = json_of(hetero_serve("gb300-nvl72", "trn4-projected"));
  const Json& link = j["heterogeneous"]["kv_transfer"];
  EXPECT_EQ(link["fabric"], "scale-out");
  EXPECT_NE(link["why_not_fusion"].get<std::string>().find("do not share an NVLink Fusion domain"), std::string::npos);
  EXPECT_LT(link["rate_per_chip_per_direction_gb_s"].get<double>(), 100.0);  // 800 Gb/s NICs
  auto text = run_cli(hetero_serve("gb300-nvl72", "trn4-projected"));
  EXPECT_NE(text.out.find("KV cache over the scale-out network"), std::string::npos) << text.out;
}

TEST(FusionServe, BadInputNamesTheField) {
  auto unknown = run_cli(hetero_serve(kGb300, "trn4-fusion-mixed-rak"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("decode_system"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find(kTrn4), std::string::npos) << unknown.err;  // did you mean
  auto one = run_cli("serve --model llama3.1-8b --prefill-system " + kGb300 + " --prefill-chips 4 --decode-chips 4");
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("needs both systems"), std::string::npos) << one.err;
  auto uneven = run_cli("serve --model llama3.1-8b --tp 2 --prefill-system " + kGb300 + " --prefill-chips 4 " +
                        "--decode-system " + kTrn4 + " --decode-chips 3");
  EXPECT_EQ(uneven.exit_code, 2);
  EXPECT_NE(uneven.err.find("decode_chips"), std::string::npos) << uneven.err;
  auto both = run_cli("serve --model llama3.1-8b --system gb300-nvl72 --prefill-system " + kGb300 +
                      " --prefill-chips 4 --decode-system " + kTrn4 + " --decode-chips 4");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("either --system"), std::string::npos) << both.err;
}

std::string hetero_search(const std::string& extra = "") {
  return "serve --search --model llama3.1-8b --precision fp8 --rate 8 --requests 300 --in-len 2048 --out-len 64 "
         "--prefill-system " + kGb300 + " --decode-system " + kTrn4 + extra;
}

TEST(FusionServe, SearchFindsTheCheapestMixedDeploymentBesideEachKindAlone) {
  const Json j = json_of(hetero_search());
  EXPECT_EQ(j["command"], "serve --search");
  const Json& results = j["results"];
  ASSERT_EQ(results.size(), 3u);
  const Json& mixed = results[0];
  EXPECT_EQ(mixed["prefill_system"], kGb300);
  EXPECT_EQ(mixed["decode_system"], kTrn4);
  ASSERT_TRUE(mixed["found"].get<bool>());
  const Json& b = mixed["best"];
  EXPECT_TRUE(b["meets_slo"].get<bool>());
  EXPECT_EQ(b["chips"].get<long long>(), b["prefill_chips"].get<long long>() + b["decode_chips"].get<long long>());
  EXPECT_GT(b["cost_usd_per_hour"].get<double>(), 0.0);
  EXPECT_GE(b["prefill_engines_per_slice"].get<int>(), 1);
  EXPECT_EQ(results[1]["system"], kGb300);
  EXPECT_EQ(results[2]["system"], kTrn4);
  EXPECT_FALSE(results[1].contains("prefill_system"));
  auto text = run_cli(hetero_search());
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("decode " + std::to_string(b["decode_chips"].get<long long>()) + " x " + kTrn4),
            std::string::npos) << text.out;
  EXPECT_NE(text.out.find("$/h"), std::string::npos);
}

TEST(FusionServe, SearchChoosesThePoolsAndNamesWhatItCannotTake) {
  auto sized = run_cli(hetero_search(" --prefill-chips 4"));
  EXPECT_EQ(sized.exit_code, 2);
  EXPECT_NE(sized.err.find("prefill_chips"), std::string::npos) << sized.err;
  EXPECT_NE(sized.err.find("chosen by the search"), std::string::npos) << sized.err;
  auto staged = run_cli(hetero_search(" --pp 2"));
  EXPECT_EQ(staged.exit_code, 2);
  EXPECT_NE(staged.err.find("pp: the heterogeneous search runs one pipeline stage"), std::string::npos) << staged.err;
  auto one = run_cli("serve --search --model llama3.1-8b --rate 8 --prefill-system " + kGb300);
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("needs both systems"), std::string::npos) << one.err;
  auto compare = run_cli(hetero_search(" --compare"));
  EXPECT_EQ(compare.exit_code, 2);
  EXPECT_NE(compare.err.find("compare"), std::string::npos) << compare.err;
  // An SLO that no slice meets even unloaded: exit 1 with the reason.
  auto missed = run_cli(hetero_search(" --ttft-slo '1 ms'"));
  EXPECT_EQ(missed.exit_code, 1) << missed.err;
  EXPECT_NE(missed.out.find("misses the SLOs unloaded"), std::string::npos) << missed.out;
}

std::string mix(const std::string& parts, const std::string& extra = "") {
  return "train --model llama3.1-8b --tp 2 --dp 1 --micro-batch 1 --global-batch 16 --seq-len 4096 --mix " + parts +
         extra;
}

TEST(FusionTrain, LayersFollowMeasuredTimesAndActivationsCrossTheFusionLink) {
  const Json j = json_of(mix(kTrn4 + ":4," + kGb300 + ":4"));
  const Json& kinds = j["kinds"];
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0]["stages"], 2);
  EXPECT_EQ(kinds[1]["stages"], 2);
  int layers = 0;
  for (const auto& l : j["stage_layers"]) layers += l.get<int>();
  EXPECT_EQ(layers, 32);
  // Stages finish together: the kinds' stage times differ by less than one layer of the slower.
  const double t0 = kinds[0]["layer_time_ms"], t1 = kinds[1]["layer_time_ms"];
  const double s0 = kinds[0]["stage_time_ms"], s1 = kinds[1]["stage_time_ms"];
  EXPECT_LE(std::abs(s0 - s1), std::max(t0, t1) + 1e-9);
  const Json& link = j["activation_transfer"];
  EXPECT_EQ(link["fabric"], "nvlink-fusion");
  EXPECT_EQ(link["slower_system"], kGb300);
  // One micro-batch of 4,096 tokens x hidden 4,096 x 2 B, split over tp = 2.
  EXPECT_DOUBLE_EQ(link["bytes_per_crossing_per_chip"].get<double>(), 4096.0 * 4096 * 2 / 2);
  const double rate = link["rate_per_chip_per_direction_gb_s"].get<double>() * 1e9;
  EXPECT_NEAR(link["crossing_ms"].get<double>(),
              link["latency_us"].get<double>() / 1e3 + 4096.0 * 4096 / rate * 1e3, 1e-9);
  EXPECT_DOUBLE_EQ(link["bytes_per_step"].get<double>(), 2.0 * 16 * 4096.0 * 4096 * 2 / 2 * 2);
  EXPECT_GT(j["bubble_fraction"].get<double>(), 0.0);
  EXPECT_LT(j["bubble_fraction"].get<double>(), 1.0);
}

// Energy and cost of the mixed step: each kind's chips for the whole step (at their own price,
// read back from `catalog --json`), the kinds' layers add up to the model's, and the totals
// are the sums over the kinds.
TEST(FusionTrain, EnergyAndCostAreEachKindsChipsOverTheMixedStep) {
  const Json j = json_of(mix(kTrn4 + ":4," + kGb300 + ":4"));
  const double step = j["step_time_s"].get<double>();
  double energy = 0, cost = 0;
  int layers = 0;
  for (const auto& k : j["kinds"]) {
    const auto cat = run_cli("catalog show " + k["system"].get<std::string>() + " --json");
    ASSERT_EQ(cat.exit_code, 0) << cat.err;
    const double price = Json::parse(cat.out)["system"]["price_per_chip_hour_usd"].get<double>();
    EXPECT_NEAR(k["cost_per_step_usd"].get<double>(), price * 4 * step / 3600.0, 1e-9) << k["system"];
    EXPECT_GT(k["power_per_chip_w"].get<double>(), 0.0);
    EXPECT_NEAR(k["energy_per_step_j"].get<double>(), k["power_per_chip_w"].get<double>() * 4 * step,
                1e-6 * k["energy_per_step_j"].get<double>());
    energy += k["energy_per_step_j"].get<double>();
    cost += k["cost_per_step_usd"].get<double>();
    layers += k["layers"].get<int>();
  }
  EXPECT_EQ(layers, 32);
  EXPECT_NEAR(j["energy_per_step_j"].get<double>(), energy, 1e-9 * energy);
  EXPECT_NEAR(j["cost_per_step_usd"].get<double>(), cost, 1e-12 + 1e-9 * cost);
  EXPECT_NEAR(j["energy_per_token_j"].get<double>(), energy / (16.0 * 4096), 1e-12);
}

TEST(FusionTrain, KindsOutsideOneDomainCrossOverScaleOut) {
  const Json j = json_of(mix("trn4-projected:4,gb300-nvl72:4"));
  EXPECT_EQ(j["activation_transfer"]["fabric"], "scale-out");
  EXPECT_FALSE(j["assumptions"].empty());
}

TEST(FusionTrain, InterleavedChunksCutTheBubbleAndCrossTheBoundaryMoreOften) {
  const std::string parts = kTrn4 + ":4," + kGb300 + ":4";
  const Json one = json_of(mix(parts));
  const Json two = json_of(mix(parts, " --vpp 2"));
  EXPECT_EQ(one["schedule"], "1f1b");
  EXPECT_EQ(two["schedule"], "interleaved");
  EXPECT_EQ(two["vpp"], 2);
  EXPECT_EQ(two["stage_layers"], one["stage_layers"]);  // the split balances stages, not chunks
  // Each stage's layers over its two chunks, the first taking the odd one.
  const Json& stages = two["stage_layers"];
  const Json& chunks = two["chunk_layers"];
  ASSERT_EQ(chunks.size(), stages.size());
  double largest_chunk_ms = 0;
  size_t stage = 0;
  for (const auto& kind : two["kinds"])
    for (int s = 0; s < kind["stages"].get<int>(); ++s, ++stage) {
      const int layers = stages[stage].get<int>();
      ASSERT_EQ(chunks[stage].size(), 2u);
      EXPECT_EQ(chunks[stage][0].get<int>(), (layers + 1) / 2);
      EXPECT_EQ(chunks[stage][0].get<int>() + chunks[stage][1].get<int>(), layers);
      largest_chunk_ms = std::max(largest_chunk_ms, chunks[stage][0].get<int>() * kind["layer_time_ms"].get<double>());
    }
  // The bubble is (stages - 1) of the slowest chunk; the steady state is unchanged.
  EXPECT_NEAR(two["breakdown_s"]["bubble"].get<double>(), 3 * largest_chunk_ms / 1e3, 1e-12);
  EXPECT_DOUBLE_EQ(two["breakdown_s"]["compute"].get<double>(), one["breakdown_s"]["compute"].get<double>());
  EXPECT_LT(two["step_time_s"].get<double>(), one["step_time_s"].get<double>());
  // A micro-batch crosses between the kinds 2 vpp - 1 = 3 times each way (twice forward, once
  // back as the chunks wrap round).
  EXPECT_EQ(two["crossings_per_micro_batch"], 3);
  EXPECT_DOUBLE_EQ(two["activation_transfer"]["bytes_per_step"].get<double>(),
                   3 * one["activation_transfer"]["bytes_per_step"].get<double>());
}

TEST(FusionTrain, SchedulesTheMixCannotRunAreBadInput) {
  const std::string parts = kTrn4 + ":4," + kGb300 + ":4";
  struct Case { std::string extra, field, says; };
  for (const Case& c : {Case{" --vpp 2 --schedule dualpipe", "--schedule", "not available with --mix"},
                        Case{" --schedule interleaved", "--vpp", "at least 2 virtual stages"},
                        Case{" --vpp 2 --schedule 1f1b", "--schedule", "one chunk per stage"},
                        Case{" --vpp 7", "--vpp", "fewer than its chunks"},
                        Case{" --vpp 9", "--vpp", "more virtual stages than layers"}}) {
    auto r = run_cli(mix(parts, c.extra));
    EXPECT_EQ(r.exit_code, 2) << c.extra;
    EXPECT_NE(r.err.find(c.field), std::string::npos) << c.extra << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.extra << ": " << r.err;
  }
  // 18 sequences = 18 micro-batches, not a multiple of the 4 stages.
  auto odd = run_cli("train --model llama3.1-8b --tp 2 --dp 1 --micro-batch 1 --global-batch 18 --seq-len 4096 "
                     "--vpp 2 --mix " + parts);
  EXPECT_EQ(odd.exit_code, 2);
  EXPECT_NE(odd.err.find("multiple of 4 micro-batches"), std::string::npos) << odd.err;
}

TEST(FusionTrain, BadMixIsBadInput) {
  for (const std::string& bad : {kTrn4, kTrn4 + ":4", kTrn4 + ":x," + kGb300 + ":4", kTrn4 + ":4," + kTrn4 + ":4",
                                 kTrn4 + ":4," + kGb300 + ":4,gb300-nvl72:4"}) {
    auto r = run_cli(mix(bad));
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--mix"), std::string::npos) << bad << ": " << r.err;
  }
  auto unknown = run_cli(mix("trn4-fusion-mixed-rak:4," + kGb300 + ":4"));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find(kTrn4), std::string::npos) << unknown.err;
  auto uneven = run_cli(mix(kTrn4 + ":3," + kGb300 + ":4"));
  EXPECT_EQ(uneven.exit_code, 2);
  EXPECT_NE(uneven.err.find("multiple of tp x dp x cp (2)"), std::string::npos) << uneven.err;
  auto with_system = run_cli(mix(kTrn4 + ":4," + kGb300 + ":4", " --system gb300-nvl72"));
  EXPECT_EQ(with_system.exit_code, 2);
  EXPECT_NE(with_system.err.find("not with --mix"), std::string::npos) << with_system.err;
}

}  // namespace

// Without --tp and --dp the mixed pipeline searches its group (issue 45 case 9: one stage per chip
// asked for more stages than layers): every candidate group that fits is tried and the fastest is
// kept and stated; it beats the tp 1 x dp 1 pipeline of 128 stages, which cannot run at all.
TEST(FusionTrain, WithoutAPlanTheMixedPipelineSearchesOne) {
  const auto r = run_cli("train --mix trn4-projected:64,gb300-nvl72:64 --model llama3.1-70b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  const long long group = j["tp"].get<long long>() * j["dp"].get<long long>();
  EXPECT_EQ(64 % group, 0);
  EXPECT_LE(128 / group, 80);  // at most one stage per layer
  EXPECT_NE(j["assumptions"].dump().find("plan searched"), std::string::npos) << j["assumptions"].dump();
  const auto stated = run_cli("train --mix trn4-projected:64,gb300-nvl72:64 --model llama3.1-70b --json --tp " +
                              std::to_string(j["tp"].get<long long>()) + " --dp " + std::to_string(j["dp"].get<long long>()));
  ASSERT_EQ(stated.exit_code, 0) << stated.err;
  EXPECT_DOUBLE_EQ(Json::parse(stated.out)["tokens_per_s"].get<double>(), j["tokens_per_s"].get<double>());
  EXPECT_NE(run_cli("train --mix trn4-projected:64,gb300-nvl72:64 --model llama3.1-70b --tp 1 --dp 1").exit_code, 0);
}
