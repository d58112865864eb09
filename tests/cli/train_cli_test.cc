// xpusim train / validate / demo end to end: JSON contract, trace output, determinism.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_json.h"
#include "cli_runner.h"

using xpusim::test::run_cli;

TEST(TrainCli, JsonHasUnitsInKeysAndPlan) {
  auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1 "
                   "--global-batch 64 --seq-len 4096 --precision fp8 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["step_time_s"].get<double>(), 0.0);
  EXPECT_GT(j["tokens_per_s_per_chip"].get<double>(), 0.0);
  EXPECT_GT(j["memory_per_chip_gib"]["total"].get<double>(), 0.0);
  EXPECT_EQ(j["plan"]["dp"].get<int>(), 8);  // dp = chips / (tp·pp·cp)
  EXPECT_EQ(j["executor"].get<std::string>(), "event");
  // tokens per step = global batch × seq.
  EXPECT_DOUBLE_EQ(j["tokens_per_step"].get<double>(), 64.0 * 4096.0);
}

namespace {

/// The Chrome trace `train --trace` writes for Llama-3.1-70B on 64 H100s (tp 8, pp 4).
nlohmann::json seventy_b_trace(const std::string& name) {
  const std::string path = ::testing::TempDir() + name;
  auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 4 "
                   "--global-batch 32 --seq-len 4096 --trace " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(path.c_str());
  return nlohmann::json::parse(ss.str());
}

}  // namespace

TEST(TrainCli, TraceIsChromeTraceJson) {
  const auto j = seventy_b_trace("xs_trace.json");
  ASSERT_TRUE(j.contains("traceEvents"));
  int complete = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") ++complete;
  // 4 stages × 8 micro-batches (32 / dp 2 / micro-batch 1... dp = 64/32 = 2 → 16) × F and B.
  EXPECT_GE(complete, 4 * 16 * 2);
}

TEST(TrainCli, TraceHasOperatorsWithArgsAndTheCommunicationStreams) {
  const auto j = seventy_b_trace("xs_trace_ops.json");
  std::set<std::string> threads, categories;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> spans;  // (pid, tid) -> whole F/B spans
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] != "X") continue;
    categories.insert(e["cat"].get<std::string>());
    if (e["cat"] == "forward" || e["cat"] == "backward")
      spans[{e["pid"].get<int>(), 0}].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  }
  for (const char* t : {"compute", "DP gradient buckets", "TP/SP collectives (exposed)", "PP send/recv"})
    EXPECT_TRUE(threads.count(t)) << t;
  for (const char* c : {"forward", "backward", "op", "tp", "pp", "comm"}) EXPECT_TRUE(categories.count(c)) << c;
  // Every operator carries its FLOPs and bytes and lies inside a whole span of its stage.
  int ops = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X" || e["cat"] != "op") continue;
    ++ops;
    ASSERT_TRUE(e.contains("args")) << e.dump();
    EXPECT_GE(e["args"]["flops"].get<double>(), 0.0);
    EXPECT_GT(e["args"]["hbm_bytes"].get<double>(), 0.0);
    const double t0 = e["ts"].get<double>(), t1 = t0 + e["dur"].get<double>();
    bool inside = false;
    for (const auto& [a, b] : spans[{e["pid"].get<int>(), 0}]) inside = inside || (t0 >= a - 1e-3 && t1 <= b + 1e-3);
    EXPECT_TRUE(inside) << e.dump();
  }
  EXPECT_GT(ops, 4 * 2 * 2 * 20);  // 4 stages, 2 detailed micro-batches, F and B, 20 layers per stage
}

TEST(TrainCli, SameInputsGiveByteIdenticalOutput) {
  const std::string args = "train --system trn3-ultraserver-gen2 --model deepseek-v3 --chips 1152 --json";
  auto a = run_cli(args), b = run_cli(args);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

TEST(TrainCli, MillionChipTrn3ClusterRuns) {
  auto r = run_cli("train --system trn3-ultraserver-gen2 --model llama3.1-405b --chips 1048576 "
                   "--tp 16 --pp 16 --vpp 2 --precision mxfp8 --global-batch 131072 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["chips"].get<long long>(), 1048576);
}

TEST(ValidateCli, JsonContractOnThePublicFile) {
  auto r = run_cli("validate --json");  // the project's copy in data/validation
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("rows") && j.contains("summary"));
  for (const auto& row : j["rows"]) {
    for (const char* k : {"id", "kind", "metric", "measured", "predicted", "error_pct", "status", "reason"})
      EXPECT_TRUE(row.contains(k)) << k;
    EXPECT_EQ(row["status"].get<std::string>(), "ok") << row["id"] << ": " << row["reason"];
  }
  for (const char* kind : {"train", "infer"}) {
    const auto& s = j["summary"][kind];
    for (const char* k : {"n", "ok", "median_abs_error_pct", "p90_abs_error_pct"}) EXPECT_TRUE(s.contains(k)) << k;
    EXPECT_EQ(s["n"], s["ok"]) << kind;
  }
}

// The demo's text (its JSON document: JsonConvention.DemoDocumentHoldsEverySection).
TEST(DemoCli, RunsWithNoInputAndPrintsEverySection) {
  auto r = run_cli("demo");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"trn3-ultraserver-gen2", "gb300-nvl72", "trn2-ultraserver", "llama3.1-405b",
                        "deepseek-v3", "A million chips", "1,048,464", "the most chips a plan employs", "A real trace"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

// Time to train = step time × (tokens ÷ tokens per step).
TEST(TrainCli, TimeToTrainIsStepsTimesStepTime) {
  auto r = run_cli("train --system gb300-nvl72 --model llama3.1-70b --chips 72 --tp 8 --pp 1 "
                   "--global-batch 72 --seq-len 8192 --train-tokens 1e11 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const double steps = 1e11 / j["tokens_per_step"].get<double>();
  EXPECT_NEAR(j["time_to_train_s"].get<double>(), steps * j["step_time_s"].get<double>(), 1e-6);
  EXPECT_NEAR(j["energy_to_train_j"].get<double>(), steps * j["energy_per_step_j"].get<double>(),
              1e-6 * j["energy_to_train_j"].get<double>());
}

TEST(TrainCli, PrecisionTheChipLacksIsBadInputUnlessFallbackIsAllowed) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1 "
                           "--global-batch 64 --seq-len 4096 --json ";
  auto refused = run_cli(base + "--precision nvfp4");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--precision"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("no nvfp4 peak"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("bf16, fp16, fp8"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--allow-fallback"), std::string::npos) << refused.err;
  // With the fallback, nvfp4 runs as fp8 and MFU is taken against the fp8 peak: the ratio
  // mfu / model TFLOP/s is 1/peak, so against a bf16 run it is peak_bf16 / peak_fp8 = 1/2 on H100.
  auto fell = run_cli(base + "--precision nvfp4 --allow-fallback");
  auto bf16 = run_cli(base + "--precision bf16");
  ASSERT_EQ(fell.exit_code, 0) << fell.err;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.err;
  const auto jf = nlohmann::json::parse(fell.out), jb = nlohmann::json::parse(bf16.out);
  EXPECT_EQ(jf["executed_precision"], "fp8");
  EXPECT_EQ(jb["executed_precision"], "bf16");
  const double ratio_f = jf["mfu_pct"].get<double>() / jf["model_tflops_per_chip"].get<double>();
  const double ratio_b = jb["mfu_pct"].get<double>() / jb["model_tflops_per_chip"].get<double>();
  EXPECT_NEAR(ratio_f / ratio_b, 0.5, 1e-3);
}

// --async-tp (or plan.async_tp in a scenario file) is stated in the plan line and the JSON plan,
// and shortens a tensor-parallel step; without it the plan says async_tp false.
TEST(TrainCli, AsyncTensorParallelismIsAFlagAndAScenarioKeyStatedInThePlan) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 1 "
                           "--global-batch 64 --seq-len 8192 --precision fp8 ";
  auto plain = run_cli(base + "--json");
  auto async = run_cli(base + "--async-tp --json");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(async.exit_code, 0) << async.err;
  const auto jp = nlohmann::json::parse(plain.out), ja = nlohmann::json::parse(async.out);
  EXPECT_FALSE(jp["plan"]["async_tp"].get<bool>());
  EXPECT_TRUE(ja["plan"]["async_tp"].get<bool>());
  EXPECT_LT(ja["breakdown_s"]["tp_comm"].get<double>(), jp["breakdown_s"]["tp_comm"].get<double>());
  EXPECT_LT(ja["step_time_s"].get<double>(), jp["step_time_s"].get<double>());
  auto text = run_cli(base + "--async-tp");
  EXPECT_NE(text.out.find("precision=fp8 async-tp"), std::string::npos) << text.out;

  const std::string path = ::testing::TempDir() + "async_tp_scenario.yaml";
  std::ofstream(path) << "system: h100-sxm-dgx\nmodel: llama3.1-70b\nchips: 64\n"
                         "plan: {tp: 8, pp: 1, precision: fp8, async_tp: true}\n"
                         "workload: {global_batch: 64, seq_len: 8192}\n";
  auto file = run_cli("train --scenario " + path + " --json");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(nlohmann::json::parse(file.out)["step_time_s"], ja["step_time_s"]);
  std::ofstream(path) << "system: h100-sxm-dgx\nmodel: llama3.1-70b\nchips: 64\n"
                         "plan: {tp: 8, pp: 1, async_tp: sometimes}\n";
  auto bad = run_cli("train --scenario " + path);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("async_tp"), std::string::npos) << bad.err;
  // With tp 1 there is nothing to pipeline: the flag is refused, not ignored.
  auto no_tp = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1 --async-tp");
  EXPECT_EQ(no_tp.exit_code, 2);
  EXPECT_NE(no_tp.err.find("--async-tp"), std::string::npos) << no_tp.err;
  EXPECT_NE(no_tp.err.find("--tp > 1"), std::string::npos) << no_tp.err;
}

// --lora-rank (or plan.lora_rank) runs LoRA fine-tuning, stated in the plan line and the JSON
// plan: Llama-2-70B on 8 H100 does not fit as full training and does as LoRA; a rank that is
// not a positive count, or above the hidden size, is bad input naming the flag.
TEST(TrainCli, LoraRankIsAFlagAndAScenarioKeyStatedInThePlan) {
  const std::string base = "train --system h100-sxm-dgx --model llama2-70b --chips 8 --tp 8 --pp 1 "
                           "--global-batch 8 --seq-len 8192 --precision fp8 ";
  auto lora = run_cli(base + "--lora-rank 16 --lora-targets attention --json");
  ASSERT_EQ(lora.exit_code, 0) << lora.err;
  const auto j = nlohmann::json::parse(lora.out);
  EXPECT_EQ(j["plan"]["lora_rank"].get<int>(), 16);
  EXPECT_EQ(j["plan"]["lora_targets"].get<std::string>(), "attention");
  EXPECT_TRUE(j["fits"].get<bool>()) << lora.out;
  auto full = run_cli(base + "--json");
  ASSERT_EQ(full.exit_code, 1) << full.err;  // timed, but out of memory
  const auto jf = nlohmann::json::parse(full.out);
  EXPECT_EQ(jf["plan"]["lora_rank"].get<int>(), 0);
  EXPECT_FALSE(jf["fits"].get<bool>()) << full.out;
  EXPECT_LT(j["step_time_s"].get<double>(), jf["step_time_s"].get<double>());
  auto text = run_cli(base + "--lora-rank 16");
  EXPECT_NE(text.out.find("precision=fp8 lora-rank=16 lora-targets=all-linear"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("adapters on all-linear (default: training.defaults.lora.all_linear)"), std::string::npos)
      << text.out;
  const std::string path = ::testing::TempDir() + "lora_scenario.yaml";
  std::ofstream(path) << "system: h100-sxm-dgx\nmodel: llama2-70b\nchips: 8\n"
                         "plan: {tp: 8, pp: 1, precision: fp8, lora_rank: 16, lora_targets: attention}\n"
                         "workload: {global_batch: 8, seq_len: 8192}\n";
  auto file = run_cli("train --scenario " + path + " --json");
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(nlohmann::json::parse(file.out)["step_time_s"], j["step_time_s"]);
  for (const char* bad : {"0", "-4", "65536"}) {
    auto r = run_cli(base + "--lora-rank " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--lora-rank"), std::string::npos) << r.err;
  }
  for (const char* bad : {"--lora-rank 16 --lora-targets attn", "--lora-targets attention"}) {
    auto r = run_cli(base + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--lora-targets"), std::string::npos) << r.err;
  }
}

// fuzz_flags: --train-tokens 1e37 with --runs cast 10^29 checkpoint intervals to an integer (UB)
// and would have looped for ever; past 10^8 intervals over all runs it is bad input naming the
// flag (1e37 is now beyond --train-tokens' own limit of 1e17: 1e17 tokens on 64 chips still
// make too many intervals), and an ordinary run still gives its Monte Carlo.
TEST(TrainCli, AMonteCarloOfTooManyCheckpointIntervalsIsBadInput) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-8b --chips 64 --tp 1 --pp 1 --runs 5 ";
  auto huge = run_cli(base + "--train-tokens 1e17");
  EXPECT_EQ(huge.exit_code, 2);
  EXPECT_NE(huge.err.find("--train-tokens: the Monte Carlo of the whole run would simulate"), std::string::npos)
      << huge.err;
  auto fine = run_cli(base + "--train-tokens 1e12 --json");
  ASSERT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(nlohmann::json::parse(fine.out)["goodput"]["monte_carlo"]["runs"].get<int>(), 5) << fine.out;
}

// A stated global batch that no micro-batch count splits is named as such, not blamed on the chips.
TEST(TrainCli, AGlobalBatchOfNoWholeMicroBatchesIsBadInput) {
  const auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 64 --global-batch 100 --micro-batch 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--global-batch: not a whole number of micro-batches (got '100'; expected a multiple of "
                       "--micro-batch (3))"),
            std::string::npos)
      << r.err;
}

// A MoE load imbalance stated by the user: the busiest of the ep ranks receives F × the mean
// tokens, so its expert GEMMs and its all-to-all take longer and the step waits for it. The
// model FLOPs per step are the model's (MFU falls); the all-to-all time scales by F up to its start-up
// latency. A capacity factor caps the load (or pads every expert to it). Bad values exit 2 naming the flag.
// --recompute-layers N (Megatron's block method) with --recompute full: between no recomputation
// and full in step time and memory, stated in the plan and the settings; refused without full
// recomputation, past the model's layers, or not positive. A scenario file's plan.recompute_layers
// gives the same run.
TEST(TrainCli, RecomputeLayersRecomputesSomeLayersAndIsStated) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 2 "
                           "--global-batch 256 --seq-len 8192 --precision fp8 --json";
  const auto none = xpusim::test::run_cli_json(base + " --recompute none");
  const auto full = xpusim::test::run_cli_json(base + " --recompute full");
  const auto half = xpusim::test::run_cli_json(base + " --recompute full --recompute-layers 20");
  ASSERT_FALSE(none.is_null() || full.is_null() || half.is_null());
  EXPECT_TRUE(full["plan"]["recompute_layers"].is_null());
  EXPECT_EQ(half["plan"]["recompute_layers"], 20);
  EXPECT_EQ(half["inputs"]["plan"]["recompute_layers"], 20);
  const auto step = [](const nlohmann::json& j) { return j["step_time_s"].get<double>(); };
  const auto act = [](const nlohmann::json& j) { return j["memory_per_chip_gib"]["activations"].get<double>(); };
  EXPECT_LT(step(none), step(half));
  EXPECT_LT(step(half), step(full));
  EXPECT_GT(act(none), act(half));
  EXPECT_GT(act(half), act(full));
  bool stated = false;
  for (const auto& s : half["settings"]) stated = stated || s.get<std::string>().rfind("recompute layers 20 (input)", 0) == 0;
  EXPECT_TRUE(stated) << half["settings"].dump();
  // Chosen by the rule (the framework's recompute_some_layers set in a calibration file), the
  // recompute line says so and no line calls it an input.
  const std::string flag = ::testing::TempDir() + "recompute_some_layers.yaml";
  std::ofstream(flag) << "training:\n  frameworks:\n    megatron:\n      recompute_some_layers:\n        value: true\n";
  const auto ruled = xpusim::test::run_cli_json(
      "train --system h100-sxm-dgx --model llama3.1-70b --chips 64 --tp 8 --pp 2 --global-batch 96 --micro-batch 3 "
      "--seq-len 8192 --json --calibration " + flag);
  ASSERT_FALSE(ruled.is_null());
  ASSERT_FALSE(ruled["plan"]["recompute_layers"].is_null());
  bool rule_line = false;
  for (const auto& s : ruled["settings"]) {
    const std::string line = s.get<std::string>();
    EXPECT_EQ(line.rfind("recompute layers", 0), std::string::npos) << line;
    rule_line = rule_line || (line.find("layers of each model chunk") != std::string::npos && line.find("(rule") != std::string::npos);
  }
  EXPECT_TRUE(rule_line) << ruled["settings"].dump();
  const auto text = xpusim::test::run_cli(base.substr(0, base.size() - 7) + " --recompute full --recompute-layers 20");
  EXPECT_NE(text.out.find("recompute=full (first 20 layers per chunk)"), std::string::npos) << text.out;
  const std::string scen = ::testing::TempDir() + "recompute_layers.yaml";
  std::ofstream(scen) << "system: h100-sxm-dgx\nmodel: llama3.1-70b\nchips: 64\nplan: {tp: 8, pp: 2, precision: fp8, "
                         "recompute: full, recompute_layers: 20}\nworkload: {global_batch: 256, seq_len: 8192}\n";
  const auto from_file = xpusim::test::run_cli_json("train --scenario " + scen + " --json");
  ASSERT_FALSE(from_file.is_null());
  EXPECT_EQ(step(from_file), step(half));
  for (const auto& [flags, message] : std::vector<std::pair<std::string, std::string>>{
           {" --recompute-layers 20", "--recompute-layers: applies only to full recomputation"},
           {" --recompute selective --recompute-layers 20", "--recompute-layers: applies only to full recomputation"},
           {" --recompute full --recompute-layers 81", "--recompute-layers: more recomputed layers than the model has"},
           {" --recompute full --recompute-layers 0", "--recompute-layers: must be a positive integer"}}) {
    const auto r = xpusim::test::run_cli(base + flags);
    EXPECT_EQ(r.exit_code, 2) << flags;
    EXPECT_NE(r.err.find(message), std::string::npos) << flags << ": " << r.err;
  }
}

TEST(TrainCli, AMoeLoadImbalanceSlowsTheBusiestExpertRankAndIsStated) {
  const std::string base = "train --system h100-sxm-dgx --model qwen3-30b-a3b --chips 16 --tp 1 --pp 1 --ep 8 "
                           "--global-batch 512 --micro-batch 2 --seq-len 4096 --precision fp8 --json";
  const auto a = xpusim::test::run_cli_json(base), b = xpusim::test::run_cli_json(base + " --moe-load-imbalance 1.5");
  ASSERT_FALSE(a.is_null() || b.is_null());
  EXPECT_EQ(a["plan"]["moe_load_imbalance"], 1.0);
  EXPECT_EQ(b["plan"]["moe_load_imbalance"], 1.5);
  EXPECT_EQ(b["inputs"]["plan"]["moe_load_imbalance"], 1.5);
  // A scenario file's MoE keys are the flags' (they were read and then dropped).
  const std::string scen = ::testing::TempDir() + "train_moe_keys.yaml";
  std::ofstream(scen) << "plan: {moe_load_imbalance: 1.5, moe_capacity_factor: 1.25, moe_pad_to_capacity: true, "
                         "expert_tp: 1}\n";
  const auto from_file = xpusim::test::run_cli_json(base + " --scenario " + scen);
  const auto from_flags = xpusim::test::run_cli_json(
      base + " --moe-load-imbalance 1.5 --moe-capacity-factor 1.25 --moe-pad-to-capacity --expert-tp 1");
  ASSERT_FALSE(from_file.is_null() || from_flags.is_null());
  EXPECT_EQ(from_file["step_time_s"], from_flags["step_time_s"]);
  EXPECT_EQ(from_file["plan"], from_flags["plan"]);
  EXPECT_EQ(from_file["inputs"]["plan"], from_flags["inputs"]["plan"]);
  const auto model_tflop = [](const nlohmann::json& j) {  // per chip per step: the model's, not the busiest rank's
    return j["model_tflops_per_chip"].get<double>() * j["step_time_s"].get<double>();
  };
  EXPECT_NEAR(model_tflop(b) / model_tflop(a), 1.0, 1e-12);
  EXPECT_GT(b["step_time_s"].get<double>(), a["step_time_s"].get<double>());
  EXPECT_LT(b["mfu_pct"].get<double>(), a["mfu_pct"].get<double>());
  const double ep_ratio = b["breakdown_s"]["ep_comm"].get<double>() / a["breakdown_s"]["ep_comm"].get<double>();
  EXPECT_GT(ep_ratio, 1.45);
  EXPECT_LE(ep_ratio, 1.5);
  EXPECT_GT(b["activity_per_chip"]["flop_by_dtype"]["fp8"].get<double>(),
            a["activity_per_chip"]["flop_by_dtype"]["fp8"].get<double>());
  bool stated = false;
  for (const auto& s : b["settings"]) stated = stated || s.get<std::string>().rfind("MoE load imbalance 1.5 (input)", 0) == 0;
  EXPECT_TRUE(stated) << b["settings"].dump();
  // A capacity factor caps the busiest rank at cf x the mean: at 1.25 the all-to-all carries 1.25
  // of the balanced volume (the dropped tokens are not sent) and the step is between the two;
  // padding to capacity 1.25 costs the same without an imbalance.
  const auto capped = xpusim::test::run_cli_json(base + " --moe-load-imbalance 1.5 --moe-capacity-factor 1.25");
  const auto padded = xpusim::test::run_cli_json(base + " --moe-capacity-factor 1.25 --moe-pad-to-capacity");
  ASSERT_FALSE(capped.is_null() || padded.is_null());
  const double capped_ratio = capped["breakdown_s"]["ep_comm"].get<double>() / a["breakdown_s"]["ep_comm"].get<double>();
  EXPECT_GT(capped_ratio, 1.2);
  EXPECT_LE(capped_ratio, 1.25);
  EXPECT_GT(capped["step_time_s"].get<double>(), a["step_time_s"].get<double>());
  EXPECT_LT(capped["step_time_s"].get<double>(), b["step_time_s"].get<double>());
  EXPECT_DOUBLE_EQ(padded["step_time_s"].get<double>(), capped["step_time_s"].get<double>());
  EXPECT_EQ(capped["plan"]["moe_capacity_factor"], 1.25);
  EXPECT_EQ(padded["plan"]["moe_pad_to_capacity"], true);
  bool drops = false;
  for (const auto& s : capped["settings"])
    drops = drops || s.get<std::string>().find("at load imbalance 1.5 the busiest rank drops 16.7% of its routed tokens") !=
                         std::string::npos;
  EXPECT_TRUE(drops) << capped["settings"].dump();
  for (const auto& [args, message] :
       {std::pair{"--model qwen3-30b-a3b --chips 16 --moe-pad-to-capacity",
                  "--moe-pad-to-capacity: padding to capacity needs a capacity factor"},
        std::pair{"--model llama3.1-8b --chips 8 --moe-capacity-factor 1.25",
                  "--moe-capacity-factor: an expert capacity needs a mixture of experts"},
        std::pair{"--model qwen3-30b-a3b --chips 16 --moe-capacity-factor 100",
                  "--moe-capacity-factor: out of range (got '100'; expected above 0 and at most experts / top-k = 16"},
        std::pair{"--model llama3.1-8b --chips 8 --moe-load-imbalance 1.2",
                  "--moe-load-imbalance: a load imbalance over expert-parallel ranks needs a mixture of experts"},
        std::pair{"--model qwen3-30b-a3b --chips 16 --moe-load-imbalance 1.2",
                  "--moe-load-imbalance: the imbalance is over the expert-parallel ranks: state ep > 1"},
        std::pair{"--model qwen3-30b-a3b --chips 16 --ep 8 --moe-load-imbalance 9",
                  "--moe-load-imbalance: out of range: the busiest rank receives at least the mean and at most every "
                  "token (got '9'; expected from 1 to ep = 8)"},
        std::pair{"--model qwen3-30b-a3b --chips 16 --ep 8 --moe-load-imbalance 0.8", "(got '0.8'; expected from 1 to ep = 8)"}}) {
    const auto r = run_cli(std::string("train --system h100-sxm-dgx ") + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
}

// --expert-tp puts the experts on their own grid (Megatron-Core MoE parallel folding): ep 64 over
// tp 2 × dp 32 runs with expert tp 1 and is refused without it, the refusal naming the flag.
TEST(TrainCli, ExpertTpFoldsTheExpertsOntoTheirOwnGrid) {
  const std::string base = "train --system h100-sxm-dgx --model deepseek-v3 --chips 512 --tp 2 --pp 8 --ep 64 --vpp 4 "
                           "--global-batch 8192 --micro-batch 1 --precision fp8 --executor analytical";
  const auto folded = xpusim::test::run_cli_json(base + " --expert-tp 1 --json");
  ASSERT_FALSE(folded.is_null());
  EXPECT_EQ(folded["plan"]["expert_tp"], 1);
  EXPECT_EQ(folded["plan"]["ep"], 64);
  const auto refused = run_cli(base);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("ep = 64 does not divide dp·cp = 32 (with --expert-tp"), std::string::npos) << refused.err;
  const auto dense = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --expert-tp 1");
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_NE(dense.err.find("--expert-tp: expert tensor parallelism needs a mixture of experts"), std::string::npos)
      << dense.err;
}

// The plan search tries every sharding that lowers memory before it prunes a layout (issue 45,
// case 5): Llama-3.1-70B on 60 H100s has a plan with FSDP, so the search, whose ZeRO choices
// include FSDP, finds one at least as fast instead of asking for more chips.
TEST(TrainCli, SearchFindsThePlanThatOnlyFitsSharded) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-70b --chips 60 --json";
  const auto sharded = run_cli(base + " --zero fsdp");
  ASSERT_EQ(sharded.exit_code, 0) << sharded.err;
  const auto searched = run_cli(base);
  ASSERT_EQ(searched.exit_code, 0) << searched.err;
  const auto tokens_per_s = [](const std::string& out) { return nlohmann::json::parse(out)["tokens_per_s"].get<double>(); };
  EXPECT_GE(tokens_per_s(searched.out), tokens_per_s(sharded.out) * (1 - 1e-12));
}

// issue 45, case 5: `--top N` lists the search's next plans that fit, in its ranking, each with
// how much it lost to the chosen plan; with nothing left to search it is bad input.
TEST(TrainCli, TopListsTheRunnersUpInRankingOrder) {
  const std::string base = "train --system h100-sxm-dgx --model llama3.1-70b --chips 64 ";
  auto r = run_cli(base + "--top 4 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& up = doc["runners_up"];
  ASSERT_EQ(up.size(), 4u) << r.out.substr(0, 400);
  double previous = 1e300;
  for (const auto& u : up) {
    const double lost = u["lost_by_pct"].get<double>(), tps = u["tokens_per_s"].get<double>();
    EXPECT_LE(tps, previous);
    EXPECT_GE(lost, 0.0);
    // lost_by_pct derived from the two throughputs: the chosen plan's = tps / (1 - lost / 100).
    if (lost > 0) {
      EXPECT_NEAR(tps / (1.0 - lost / 100.0),
                  up[0]["tokens_per_s"].get<double>() / (1.0 - up[0]["lost_by_pct"].get<double>() / 100.0), 1e-6 * tps);
    }
    previous = tps;
  }
  auto text = run_cli(base + "--top 4");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("runners-up (of "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("% less throughput"), std::string::npos) << text.out;
  auto fixed = run_cli(base + "--tp 8 --pp 2 --top 4");
  EXPECT_EQ(fixed.exit_code, 2);
  EXPECT_NE(fixed.err.find("--top"), std::string::npos) << fixed.err;
}
