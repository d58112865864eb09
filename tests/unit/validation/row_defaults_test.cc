// Validation rows with unstated settings go through the one rule of defaults (engine/defaults.h),
// and MLPerf server rows are read in their fixed phrasing (docs/serving.md). Expected values are
// derived here from the stated rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>

#include "../shipped_data.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/validation/fit.h"
#include "xpusim/validation/row.h"
#include "xpusim/serve/simulator.h"
#include "xpusim/validation/row_scenario.h"
#include "xpusim/validation/summary.h"

namespace {

using namespace xpusim;

validation::Context context() {
  validation::Context ctx{&test::catalog(), std::string(XS_TESTDATA_DIR) + "/models", &test::shipped()};
  ctx.analytical_train = true;
  return ctx;
}

/// The value of the "setting: <name> N …" assumption, or -1.
long long setting(const validation::Prediction& p, const std::string& name) {
  const std::regex re("setting: " + name + " ([0-9,]+)");
  for (const auto& a : p.assumptions) {
    std::smatch m;
    if (std::regex_search(a, m, re)) {
      std::string d = m[1].str();
      d.erase(std::remove(d.begin(), d.end(), ','), d.end());
      return std::stoll(d);
    }
  }
  return -1;
}

/// Whether one of the prediction's assumptions contains `part`.
bool said(const validation::Prediction& p, const std::string& part) {
  return std::any_of(p.assumptions.begin(), p.assumptions.end(),
                     [&](const std::string& a) { return a.find(part) != std::string::npos; });
}

validation::Row pp35_row() {
  // A 2,240-GPU Megatron-LM run of the 530B model on pp 35 that states no global batch.
  validation::Row r;
  r.id = "test-pp35";
  r.kind = "train";
  r.system = "a100-80g-dgx";
  r.chips = 2240;
  r.model = "megatron-gpt-530b";
  r.precision = "bf16";
  r.seq_len = 2048;
  r.tp = 8, r.pp = 35, r.dp = 8, r.cp = 1, r.ep = 1;
  r.recompute = "full";
  r.metric = "mfu_pct";
  r.source_url = "https://arxiv.org/abs/2104.04473";
  return r;
}

TEST(RowDefaults, APipelinedRowWithoutABatchGetsTheCriticalBatchNotOneMicroBatch) {
  const auto p = validation::predict_train(pp35_row(), context());
  ASSERT_EQ(p.status, validation::Status::Ok) << p.reason;
  // >=100B parameters: 2^24 tokens / 2,048 = 8,192 sequences = 1,024 micro-batches per pipeline.
  EXPECT_EQ(setting(p, "global batch"), (1LL << 24) / 2048);
  EXPECT_GE(setting(p, "global batch") / 8, 35);
  EXPECT_EQ(setting(p, "micro-batch"), 1);
  // Every setting is stated with its origin.
  for (const char* name : {"global batch", "micro-batch", "virtual pipeline stages", "recompute",
                           "optimizer sharding"}) {
    bool found = false;
    for (const auto& a : p.assumptions)
      if (a.rfind(std::string("setting: ") + name, 0) == 0) found = a.find(" (") != std::string::npos;
    EXPECT_TRUE(found) << name;
  }
  EXPECT_GT(p.predicted, 20.0);  // pipelined, not one micro-batch through 35 stages
}

// A row that states tp and pp but not dp runs the layout they imply, dp = chips / (tp·pp·cp),
// exactly as the row that states all three; a row that states only some degrees keeps them and
// the search picks the rest.
TEST(RowDefaults, StatedDegreesAreKeptWhenTheLayoutIsIncomplete) {
  const auto full = validation::predict_train(pp35_row(), context());
  ASSERT_EQ(full.status, validation::Status::Ok) << full.reason;
  auto no_dp = pp35_row();
  no_dp.dp.reset();
  const auto implied = validation::predict_train(no_dp, context());
  ASSERT_EQ(implied.status, validation::Status::Ok) << implied.reason;
  EXPECT_DOUBLE_EQ(implied.predicted, full.predicted);
  EXPECT_NE(std::find(implied.assumptions.begin(), implied.assumptions.end(),
                      "dp = chips / (tp·pp·cp) = 8 (not stated)"),
            implied.assumptions.end());
  auto only_pp = pp35_row();
  only_pp.tp.reset();
  only_pp.dp.reset();
  const auto searched = validation::predict_train(only_pp, context());
  ASSERT_EQ(searched.status, validation::Status::Ok) << searched.reason;
  bool kept = false;
  for (const auto& a : searched.assumptions)
    kept = kept || (a.rfind("layout partly given", 0) == 0 && a.find(" pp=35 ") != std::string::npos);
  EXPECT_TRUE(kept);
}

// Time to train: the tokens to the target come from the notes, as "needed N tokens" or as
// "needed N samples" of seq_len tokens (MLPerf's count); the two phrasings of the same figure
// predict the same time, and a bare number is read as tokens and said so.
TEST(RowDefaults, TimeToTrainReadsTheTargetInTokensOrSamples) {
  auto row = pp35_row();
  row.metric = "time_to_train_min";
  row.notes = "the run needed 1,000 samples to reach the target";
  const auto samples = validation::predict_train(row, context());
  row.notes = "the run needed 2,048,000 tokens to reach the target";  // 1,000 × seq_len 2,048
  const auto tokens = validation::predict_train(row, context());
  ASSERT_EQ(samples.status, validation::Status::Ok) << samples.reason;
  ASSERT_EQ(tokens.status, validation::Status::Ok) << tokens.reason;
  EXPECT_DOUBLE_EQ(samples.predicted, tokens.predicted);
  EXPECT_TRUE(said(samples, "tokens to target 2,048,000 (the notes' 1,000 samples of 2048 tokens)"));
  row.notes = "the run needed 2,048,000 to reach the target";
  const auto bare = validation::predict_train(row, context());
  EXPECT_DOUBLE_EQ(bare.predicted, tokens.predicted);
  EXPECT_TRUE(said(bare, "read as tokens"));
  row.notes = "no target stated";
  EXPECT_EQ(validation::predict_train(row, context()).status, validation::Status::Unsupported);
}

/// A training row on H100 in fp8 with a stated global batch and micro-batch 1.
validation::Row h100_fp8_train_row(const std::string& id, long long chips, const std::string& model, long long seq_len,
                                   long long global_batch) {
  validation::Row r;
  r.id = id;
  r.kind = "train";
  r.system = "h100-sxm-dgx";
  r.chips = chips;
  r.model = model;
  r.precision = "fp8";
  r.seq_len = seq_len;
  r.global_batch_seqs = global_batch;
  r.micro_batch = 1;
  return r;
}

validation::Row lora_row(const std::string& notes) {
  // An MLPerf-style Llama-2-70B fine-tuning step on 8 H100 (tp 8, global batch 8 at 8,192 tokens).
  validation::Row r = h100_fp8_train_row("test-lora", 8, "llama2-70b", 8192, 8);
  r.tp = 8, r.pp = 1, r.dp = 1;
  r.metric = "step_time_s";
  r.value = 1.0;
  r.source_url = "https://github.com/mlcommons/training_results_v5.1";
  r.notes = notes;
  return r;
}

// A row whose notes name LoRA fine-tuning runs it so (frozen base weights, rank-r adapters) at the
// rank and on the weights the notes give, else at the documented defaults: MLPerf's benchmark
// configuration (rank 16 on the attention projections) when the notes name MLPerf, the megatron
// preset's (rank 32 on every linear layer) otherwise; a run compared "without LoRA" is full
// training. LoRA drops the base weight gradients, so the step is shorter than full training of
// the same layout, and more adapters cost more.
TEST(RowDefaults, LoraNamedInTheNotesRunsAdaptersOnFrozenWeights) {
  const auto full = validation::predict_train(lora_row("full fine-tuning; compared without LoRA"), context());
  const auto mlperf = validation::predict_train(lora_row("MLPerf Training v5.1 Llama-2-70B LoRA, GovReport"), context());
  const auto stated = validation::predict_train(lora_row("LoRA fine-tuning (rank 16, attention projections)"), context());
  const auto bridge = validation::predict_train(lora_row("Megatron-Bridge fine-tuning table: LoRA"), context());
  const auto r64 = validation::predict_train(lora_row("LoRA, r=64, attention projections"), context());
  for (const auto* p : {&full, &mlperf, &stated, &bridge, &r64}) ASSERT_EQ(p->status, validation::Status::Ok) << p->reason;
  EXPECT_FALSE(said(full, "LoRA"));
  EXPECT_TRUE(said(mlperf, "rank 16 (training.defaults.lora.mlperf_rank), adapters on attention "
                           "(training.defaults.lora.mlperf_all_linear)"));
  EXPECT_TRUE(said(stated, "rank 16 (notes), adapters on attention (notes)"));
  EXPECT_TRUE(said(bridge, "rank 32 (training.defaults.lora.rank), adapters on all-linear "
                           "(training.defaults.lora.all_linear)"));
  EXPECT_DOUBLE_EQ(mlperf.predicted, stated.predicted);
  EXPECT_LT(mlperf.predicted, 0.9 * full.predicted);
  EXPECT_GT(r64.predicted, stated.predicted);
  EXPECT_GT(bridge.predicted, stated.predicted);
  auto absurd = lora_row("LoRA rank 999999");
  EXPECT_EQ(validation::predict_train(absurd, context()).status, validation::Status::Unsupported);
}

TEST(RowDefaults, AStatedBatchIsKept) {
  auto row = pp35_row();
  row.global_batch_seqs = 8;  // one micro-batch per rank: the row says so
  const auto p = validation::predict_train(row, context());
  ASSERT_EQ(p.status, validation::Status::Ok) << p.reason;
  EXPECT_EQ(setting(p, "global batch"), 8);
}

validation::Row mlperf_server_row(const std::string& metric, const std::string& notes) {
  validation::Row r;
  r.id = "test-mlperf-server";
  r.kind = "infer";
  r.system = "h100-sxm-dgx";
  r.chips = 8;
  r.model = "llama2-70b";
  r.precision = "fp8";
  r.out_len = 290;
  r.mode = "server";
  r.metric = metric;
  r.notes = "MLPerf Inference v4.1 closed, TensorRT-LLM. OpenOrca. " + notes;
  return r;
}

/// An MLPerf DeepSeek-R1 server row on 8 B200 with DP attention and EP8 (notes as given).
validation::Row dsr1_dep8_row(const std::string& notes) {
  auto row = mlperf_server_row("throughput_tokens_per_s", notes);
  row.system = "b200-hgx";
  row.model = "deepseek-v3";
  row.precision = "nvfp4";
  row.ep = 8;
  return row;
}

TEST(MlperfServer, RateAndStatisticComeFromTheFixedPhrasing) {
  auto rs = validation::scenario_for_row(
      mlperf_server_row("ttft_ms", "TTFT statistic: p99; MLPerf server scenario: server (Poisson, 1,200.5 QPS)"),
      test::catalog());
  ASSERT_TRUE(rs) << rs.error();
  EXPECT_EQ(rs->scenario.load.arrival, serve::ArrivalKind::Poisson);
  EXPECT_DOUBLE_EQ(rs->scenario.load.rate_per_s, 1200.5);
  EXPECT_EQ(rs->metric, validation::RowMetric::TtftP99);
  rs = validation::scenario_for_row(
      mlperf_server_row("tpot_ms", "TPOT statistic: mean; server (Poisson, 75 QPS)"), test::catalog());
  ASSERT_TRUE(rs) << rs.error();
  EXPECT_EQ(rs->metric, validation::RowMetric::TpotMean);
  EXPECT_DOUBLE_EQ(rs->scenario.load.rate_per_s, 75.0);
}

// An offline row's throughput is taken over the whole run, so the prediction states the run's
// simulated length beside the sample count: an MLPerf Llama-2-70B offline row on 8 H100 (24,576
// samples of 290 output tokens, MLPerf's minimum count) lasts its output tokens over its
// predicted throughput.
TEST(MlperfOffline, ThePredictionStatesTheSimulatedRunsLength) {
  auto row = mlperf_server_row("throughput_tokens_per_s", "");
  row.mode = "offline";
  const auto p = validation::predict_row(row, context()).prediction;
  ASSERT_EQ(p.status, validation::Status::Ok) << p.reason;
  std::string count, length;
  for (const auto& a : p.assumptions) {
    if (a.rfind("MLPerf offline: ", 0) == 0) count = a;
    if (a.rfind("the simulated offline run lasts ", 0) == 0) length = a;
  }
  EXPECT_NE(count.find("24576 samples"), std::string::npos) << count;
  EXPECT_NE(count.find("at least 600 s"), std::string::npos) << count;
  ASSERT_FALSE(length.empty());
  const double stated = std::stod(length.substr(std::string("the simulated offline run lasts ").size()));
  EXPECT_NEAR(stated, 24576.0 * 290.0 / p.predicted, 0.01 * stated);
}

/// A closed-loop benchmark row of the silicon set's kind: Llama-3.1-8B fp8 on one H100, vLLM.
validation::Row closed_loop_row(long long clients) {
  auto r = mlperf_server_row("ttft_ms", "");
  r.id = "test-closed-loop";
  r.chips = 1;
  r.model = "llama3.1-8b";
  r.tp = 1;
  r.in_len = 1024;
  r.out_len = 1024;
  r.batch_or_concurrency = clients;
  r.notes = "closed-loop concurrency " + std::to_string(clients) + " clients; framework: vllm";
  return r;
}

// The run is as long as the benchmark's: each client's measured requests plus its warm-up, both
// read from the calibration, whatever the concurrency (no floor of the simulator's own).
TEST(ClosedLoopRow, HoldsTheBenchmarksRequestsPerClientAndItsWarmUp) {
  const std::string key = "serving.closed_loop.benchmark_requests_per_client";
  calib::Params params = test::shipped();
  const long long warmup = std::llround(params.number("serving.closed_loop.warmup_requests_per_client"));
  for (const long long clients : {1LL, 4LL, 16LL, 512LL}) {
    const auto rs = validation::scenario_for_row(closed_loop_row(clients), test::catalog());
    ASSERT_TRUE(rs) << rs.error();
    EXPECT_TRUE(rs->benchmark_loop);
    for (const double measured : {5.0, 10.0, 40.0}) {
      params.set(validation::with_value(params.get(key), measured));
      auto sized = *rs;
      validation::size_benchmark_loop(params, sized);
      EXPECT_EQ(sized.scenario.load.requests, clients * (std::llround(measured) + warmup)) << clients << " clients";
      const std::string& said = sized.assumptions.back();
      EXPECT_NE(said.find(key), std::string::npos) << said;
      EXPECT_NE(said.find(std::to_string(std::llround(measured)) + " measured per client"), std::string::npos) << said;
      const auto& range = params.get(key);
      EXPECT_NE(said.find("range " + range.range_low->text + ".." + range.range_high->text), std::string::npos) << said;
    }
  }
}

TEST(ClosedLoopRow, FewerThanOneMeasuredRequestPerClientIsAnInputErrorNamingTheKey) {
  const std::string key = "serving.closed_loop.benchmark_requests_per_client";
  calib::Params params = test::shipped();
  params.set(validation::with_value(params.get(key), 0.0));
  const auto rs = validation::scenario_for_row(closed_loop_row(8), test::catalog());
  ASSERT_TRUE(rs) << rs.error();
  auto sized = *rs;
  try {
    validation::size_benchmark_loop(params, sized);
    FAIL() << "no error for 0 requests per client";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
  }
}

// Rows of other loads keep the request count their own rule gives.
TEST(ClosedLoopRow, OtherLoadsAreNotSizedAsABenchmarkLoop) {
  const auto rs = validation::scenario_for_row(
      mlperf_server_row("ttft_ms", "TTFT statistic: mean; server (Poisson, 75 QPS)"), test::catalog());
  ASSERT_TRUE(rs) << rs.error();
  EXPECT_FALSE(rs->benchmark_loop);
  auto sized = *rs;
  validation::size_benchmark_loop(test::shipped(), sized);
  EXPECT_EQ(sized.scenario.load.requests, rs->scenario.load.requests);
}

TEST(MlperfServer, AMissingRateIsUnsupportedAndNamed) {
  const auto rs = validation::scenario_for_row(mlperf_server_row("ttft_ms", "TTFT statistic: mean; about 75 QPS"),
                                               test::catalog());
  ASSERT_FALSE(rs);
  EXPECT_NE(rs.error().find("'Poisson, <N> QPS'"), std::string::npos) << rs.error();
}

TEST(MlperfServer, AMissingStatisticIsUnsupportedAndNamed) {
  const auto rs = validation::scenario_for_row(mlperf_server_row("tpot_ms", "server (Poisson, 75 QPS); TPOT p99 40 ms"),
                                               test::catalog());
  ASSERT_FALSE(rs);
  EXPECT_NE(rs.error().find("'TPOT statistic: mean|p50|p90|p99'"), std::string::npos) << rs.error();
  // A throughput row needs no statistic.
  EXPECT_TRUE(validation::scenario_for_row(mlperf_server_row("throughput_tokens_per_s", "server (Poisson, 75 QPS)"),
                                           test::catalog()));
}

}  // namespace

namespace {

// A row whose notes name DP attention with EP runs attention data-parallel whether its tp is
// empty or stated as 1 (the MLPerf configs state tp 1); a stated tp > 1 keeps tensor parallelism.
// The stacks are read from the notes: optimum-neuron and the vLLM Neuron plugin before NxDI.
TEST(RowLayout, DpAttentionWithTpEmptyOrOne) {
  auto row = dsr1_dep8_row("server (Poisson, 75 QPS); DP attention + EP8");
  for (const auto& tp : {std::optional<long long>{}, std::optional<long long>{1}, std::optional<long long>{8}}) {
    row.tp = tp;
    const auto rs = validation::scenario_for_row(row, test::catalog());
    ASSERT_TRUE(rs) << rs.error();
    EXPECT_EQ(rs->scenario.attention_dp, !tp || *tp == 1) << tp.value_or(0);
  }
}

// The ways sources write DP attention: the phrase either way round, TensorRT-LLM's
// enable_attention_dp set true, and its perf tables' DEP<n> columns; not TEP<n> (tensor-parallel
// attention), a false flag, or a word that merely starts with "dep".
TEST(RowLayout, DpAttentionIsReadInEachPhrasing) {
  const std::pair<const char*, bool> cases[] = {
      {"server (Poisson, 75 QPS); attention DP with EP8", true},
      {"server (Poisson, 75 QPS); attention data-parallel, experts EP8", true},
      {"server (Poisson, 75 QPS); enable_attention_dp: true, moe_expert_parallel_size 8", true},
      {"server (Poisson, 75 QPS); enable_attention_dp=True", true},
      {"server (Poisson, 75 QPS); column 'B200 DEP8 (FP4)'", true},
      {"server (Poisson, 75 QPS); column 'B200 TEP8 (FP4)'", false},
      {"server (Poisson, 75 QPS); enable_attention_dp: false", false},
      {"server (Poisson, 75 QPS); depth 8 of the MTP module, deployment 2", false}};
  for (const auto& [notes, dp] : cases) {
    const auto rs = validation::scenario_for_row(dsr1_dep8_row(notes), test::catalog());
    ASSERT_TRUE(rs) << rs.error();
    EXPECT_EQ(rs->scenario.attention_dp, dp) << notes;
  }
}

TEST(RowLayout, NeuronFrontEndsAreTheirOwnStacks) {
  auto row = mlperf_server_row("tpot_ms", "");
  row.system = "trn2-48xl";
  row.mode = "single-stream";
  row.in_len = 512;
  row.out_len = 128;
  const std::pair<const char*, serve::Framework> cases[] = {
      {"optimum-neuron 'optimum-cli neuron serve' (vLLM + NxD Inference backend)", serve::Framework::NeuronOptimum},
      {"vLLM Neuron plugin (Neuron SDK 2.31+)", serve::Framework::NeuronVllm},
      {"NxD Inference on one trn2.48xlarge; Neuron vLLM fork 0.7.2", serve::Framework::NeuronNxdi}};
  for (const auto& [notes, fw] : cases) {
    row.notes = notes;
    const auto rs = validation::scenario_for_row(row, test::catalog());
    ASSERT_TRUE(rs) << rs.error();
    ASSERT_TRUE(rs->scenario.framework.has_value()) << notes;
    EXPECT_EQ(*rs->scenario.framework, fw) << notes;
  }
}

}  // namespace

// The training stack comes from the source, or from the stack the notes name when the source is
// a paper: AXLearn's rows (arXiv 2507.05411) run the axlearn preset, not Megatron's.
TEST(RowStack, AxlearnIsReadFromTheSourceOrTheNotes) {
  auto row = pp35_row();
  row.source_url = "https://arxiv.org/abs/2507.05411";
  row.notes = "AXLearn (Apple, JAX/XLA + Neuron), paper Table 3";
  EXPECT_EQ(validation::predict_train(row, context()).framework, "axlearn");
  row.notes.clear();
  EXPECT_EQ(validation::predict_train(row, context()).framework, "megatron");
  row.source_url = "https://github.com/apple/axlearn/blob/main/docs/perf.md";
  EXPECT_EQ(validation::predict_train(row, context()).framework, "axlearn");
}

// Async TP is read from the notes when they name it as a setting of the run; a note that names
// it only as the baseline ("829 without AsyncTP") leaves the plain TP of the stack. The async
// row predicts more throughput: its TP collectives hide behind their GEMMs.
TEST(RowStack, AsyncTensorParallelismIsReadFromTheNotes) {
  auto row = pp35_row();
  row.pp = 1, row.dp = 280;
  row.metric = "tokens_per_s_per_chip";
  auto has_async = [](const validation::Prediction& p) {
    return std::any_of(p.assumptions.begin(), p.assumptions.end(),
                       [](const std::string& a) { return a.find("async TP") != std::string::npos; });
  };
  row.notes = "Table 4, FSDP32 x TP8, compile, AsyncTP (829 without AsyncTP)";
  const auto with = validation::predict_train(row, context());
  ASSERT_EQ(with.status, validation::Status::Ok) << with.reason;
  EXPECT_TRUE(has_async(with));
  for (const char* notes : {"829 without AsyncTP", "without async TP", ""}) {
    row.notes = notes;
    const auto without = validation::predict_train(row, context());
    ASSERT_EQ(without.status, validation::Status::Ok) << without.reason;
    EXPECT_FALSE(has_async(without)) << notes;
    EXPECT_LT(without.predicted, with.predicted) << notes;
  }
  row.notes = "async-TP on";
  EXPECT_TRUE(has_async(validation::predict_train(row, context())));
}

namespace {

// An MLPerf row on the DeepSeek-R1 data set draws its lengths in that data set's shape, not
// OpenOrca's: prompts within its 3,140-token maximum, outputs within 32k, and an output spread
// σ = √(2 ln(mean/median)) from the reference outputs' mean (4,043) and median (~2,200), while
// the drawn means stay the row's. An OpenOrca row keeps the calibration's spread.
TEST(RowLengths, TheDeepSeekR1DataSetHasItsOwnShape) {
  auto row = dsr1_dep8_row("");
  row.in_len = 804;
  row.out_len = 3657;
  row.notes = "MLPerf Inference v5.1 closed. in_len = 804 = mean input tokens of the MLPerf DeepSeek-R1 dataset; "
              "server (Poisson, 60 QPS); DP attention + EP8";
  const auto rs = validation::scenario_for_row(row, test::catalog());
  ASSERT_TRUE(rs) << rs.error();
  const auto& load = rs->scenario.load;
  EXPECT_EQ(load.max_drawn_in_len, 3140);
  EXPECT_EQ(load.max_drawn_out_len, 32768);
  ASSERT_TRUE(load.stated_output_sigma.has_value());
  EXPECT_NEAR(*load.stated_output_sigma, std::sqrt(2.0 * std::log(4043.0 / 2200.0)), 1e-12);
  serve::LoadSpec drawn = load;
  drawn.arrival = serve::ArrivalKind::Offline;
  drawn.requests = 4000;
  drawn.spread.input_sigma = 0.9;
  drawn.spread.output_sigma = *load.stated_output_sigma;
  double in_sum = 0, out_sum = 0;
  long long in_max = 0, out_max = 0;
  for (const auto& r : serve::generate_requests(drawn)) {
    in_sum += static_cast<double>(r.in_len), out_sum += static_cast<double>(r.out_len);
    in_max = std::max(in_max, r.in_len), out_max = std::max(out_max, r.out_len);
  }
  EXPECT_NEAR(in_sum / 4000, 804, 804 * 0.01);
  EXPECT_NEAR(out_sum / 4000, 3657, 3657 * 0.01);
  EXPECT_LE(in_max, 3140);
  EXPECT_LE(out_max, 32768);
  const auto orca = validation::scenario_for_row(
      mlperf_server_row("throughput_tokens_per_s", "server (Poisson, 75 QPS)"), test::catalog());
  ASSERT_TRUE(orca);
  EXPECT_FALSE(orca->scenario.load.stated_output_sigma.has_value());
  EXPECT_EQ(orca->scenario.load.max_drawn_out_len, 1024);
}

}  // namespace

namespace {

/// The framework preset a train row was predicted with ("framework preset NAME").
std::string preset(const validation::Prediction& p) {
  const std::string tag = "framework preset ";
  for (const auto& a : p.assumptions)
    if (a.rfind(tag, 0) == 0) return a.substr(tag.size());
  return "";
}

}  // namespace

// A paper that compares stacks is the source of each of their rows; the row's notes name its own
// stack first and its rivals after it. Each row gets the preset of the stack it names first, and
// the same row's prediction follows that preset's kernel factor: Megatron-LM (1.0) runs the same
// step faster than AXLearn (fitted below 1).
TEST(RowDefaults, APapersRowTakesThePresetOfTheStackItsNotesNameFirst) {
  validation::Row r;  // the public file's AXLearn H100 row, its notes rewritten below
  for (const auto& row : validation::read_csv(validation::default_public_file(XS_TESTDATA_DIR)))
    if (row.id == "tr-axlearn-h100-llama2-70b-512gpu") r = row;
  ASSERT_EQ(r.source_url, "https://arxiv.org/abs/2507.05411");
  const std::pair<const char*, const char*> cases[] = {
      {"AXLearn (Apple, JAX/XLA). Same table: Megatron-LM 7.8 s, PyTorch FSDP 10.6 s, MaxText 9.4 s", "axlearn"},
      {"Megatron-LM on 64xH100-8, a baseline of the AXLearn paper's Table 3", "megatron"},
      {"PyTorch FSDP on 64xH100-8, a baseline of the AXLearn paper's Table 3", "torchtitan"},
      {"MaxText on 64xH100-8, a baseline of the AXLearn paper's Table 3", "axlearn"},
      {"no stack named", "megatron"},
  };
  std::map<std::string, double> step;
  for (const auto& [notes, expected] : cases) {
    r.notes = notes;
    const auto p = validation::predict_train(r, context());
    ASSERT_EQ(p.status, validation::Status::Ok) << p.reason;
    EXPECT_EQ(preset(p), expected) << notes;
    step[expected] = p.predicted;
  }
  EXPECT_LT(step["megatron"], step["axlearn"] * 0.9);
}

// A row whose ep exceeds dp·cp (ep 64 over tp 2 × dp 32: DeepSeek-V3 on 512 H100) ran its
// experts on their own grid, as Megatron-Core's MoE parallel folding does: predicted with expert
// tp 1 and said so, where the plan check refused it before. An ep the whole grid cannot hold
// stays unsupported, naming the rule.
TEST(RowLayout, AnEpBeyondDataParallelismFoldsTheExpertsOntoTheirOwnGrid) {
  validation::Row r = h100_fp8_train_row("test-fold", 512, "deepseek-v3", 4096, 8192);
  r.tp = 2, r.pp = 8, r.dp = 32, r.cp = 1, r.ep = 64, r.vpp = 4;
  r.metric = "tokens_per_s_per_chip";
  r.value = 1000;
  r.source_url = "https://github.com/NVIDIA-NeMo/Megatron-Bridge";
  const auto folded = validation::predict_train(r, context());
  EXPECT_EQ(folded.status, validation::Status::Ok) << folded.reason;
  EXPECT_TRUE(said(folded, "MoE parallel folding: ep 64 exceeds dp·cp = 32, so the experts run on their own grid "
                           "(expert tp 1, expert data parallelism 1)"));
  r.chips = 256, r.dp = 16;  // tp·dp = 32 < ep 64: no grid holds it
  const auto refused = validation::predict_train(r, context());
  EXPECT_EQ(refused.status, validation::Status::Unsupported);
  EXPECT_NE(refused.reason.find("ep = 64 does not divide dp·cp = 16"), std::string::npos) << refused.reason;
  EXPECT_FALSE(said(refused, "MoE parallel folding"));
}

namespace {

// A configuration's TTFT and TPOT rows describe one serve run: run_all simulates it once and reads
// both figures from it, the same figures each row gets alone; another configuration runs apart.
TEST(ServeRunCache, RowsOfOneConfigurationShareOneRun) {
  const auto all = validation::read_csv(std::string(XS_TESTDATA_DIR) + "/validation/aic-silicon.csv");
  std::vector<validation::Row> rows;
  for (const auto& r : all)
    if (r.id.rfind("in-aic-h100-sxm-dgx-llama3.1-8b-", 0) == 0 && rows.size() < 4) rows.push_back(r);
  ASSERT_EQ(rows.size(), 4u);  // two configurations, a TTFT and a TPOT row each
  ASSERT_EQ(rows[0].id.substr(0, rows[0].id.size() - 4), rows[1].id.substr(0, rows[1].id.size() - 4));
  validation::ServeRunCache runs;
  validation::Context ctx = context();
  ctx.serve_runs = &runs;
  const auto shared = validation::run_all(rows, ctx);
  EXPECT_EQ(runs.runs(), 2u);
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto alone = validation::predict_row(rows[i], context());
    ASSERT_EQ(alone.prediction.status, validation::Status::Ok) << alone.prediction.reason;
    EXPECT_EQ(shared[i].prediction.predicted, alone.prediction.predicted) << rows[i].id;
    EXPECT_EQ(shared[i].prediction.assumptions, alone.prediction.assumptions) << rows[i].id;
  }
}

}  // namespace
