// Memory per chip against the published formulas, derived in each test:
// - mixed-precision Adam: 2 (bf16 weights) + 2 (bf16 grads) + 12 (fp32 master + 2 moments)
//   = 16 B/param, sharded over dp·cp by ZeRO-1 (optimizer), -2 (+ grads), -3/FSDP (+ weights);
// - Korthikanti et al. 2022 activations per layer per micro-batch (bytes):
//   sbh(34 + 5as/h) without parallelism; sbh(10 + 24/t + 5as/(ht)) with TP;
//   sbh(34/t + 5as/(ht)) with TP+SP; sbh·34/t with selective recompute (or flash attention);
//   2sbh (2sbh/t with SP) with full recompute; 1F1B keeps pp micro-batches on the first stage,
//   interleaving multiplies by 1 + (pp−1)/(pp·vpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <string>

#include "xpusim/mapping/memory.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;
using mapping::Recompute;
using mapping::ServePlan;
using mapping::TrainPlan;
using mapping::Zero;
using workload::ModelSpec;

namespace {

// The memory model's assumed parameters, stated here (the shipped value lives in
// data/calibration/memory.yaml; these tests derive every figure from this one).
const mapping::MemoryParams kMem{core::gib(2.5)};

const std::string kModels = std::string(XS_TESTDATA_DIR) + "/models";

const ModelSpec& gpt22b() {
  static const ModelSpec m = workload::load_model("megatron-gpt-22b", kModels);
  return m;
}

double B(core::Bytes b) { return core::to_bytes(b); }
double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

}  // namespace

// ---- Weights, gradients, optimizer: 16 B/param and ZeRO sharding. ----

struct ZeroCase {
  const char* name;
  Zero zero;
  int tp, dp, cp;
  // Divisors of (weights, grads, optimizer) in units of "sharded over dp·cp".
  bool w, g, o;
};

class ZeroShardingTest : public ::testing::TestWithParam<ZeroCase> {};

TEST_P(ZeroShardingTest, SixteenBytesPerParamShardedByStage) {
  const ZeroCase c = GetParam();
  const ModelSpec m = workload::load_model("llama3-8b", kModels);
  TrainPlan p;
  p.tp = c.tp, p.dp = c.dp, p.cp = c.cp, p.zero = c.zero;
  p.global_batch = c.dp;
  const double n = workload::count_params(m).total / c.tp;  // pp = 1: the chip holds all layers
  const double D = double(c.dp) * c.cp;
  const auto mem = mapping::train_memory_per_chip(m, p, kMem);
  EXPECT_NEAR(rel(B(mem.weights), 2 * n / (c.w ? D : 1)), 0, 1e-12);
  EXPECT_NEAR(rel(B(mem.gradients), 2 * n / (c.g ? D : 1)), 0, 1e-12);
  EXPECT_NEAR(rel(B(mem.optimizer), 12 * n / (c.o ? D : 1)), 0, 1e-12);
  if (c.zero == Zero::None) {
    EXPECT_NEAR(rel(B(mem.weights + mem.gradients + mem.optimizer), 16 * n), 0, 1e-12);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Stages, ZeroShardingTest,
    ::testing::Values(ZeroCase{"none", Zero::None, 1, 8, 1, false, false, false},
                      ZeroCase{"zero1", Zero::Zero1, 1, 8, 1, false, false, true},
                      ZeroCase{"zero2", Zero::Zero2, 2, 4, 1, false, true, true},
                      ZeroCase{"zero3", Zero::Zero3, 1, 16, 1, true, true, true},
                      ZeroCase{"fsdp", Zero::Fsdp, 1, 64, 1, true, true, true},
                      ZeroCase{"zero1_cp", Zero::Zero1, 4, 2, 2, false, false, true}),
    [](const ::testing::TestParamInfo<ZeroCase>& i) { return std::string(i.param.name); });

TEST(TrainMemory, Zero3AddsGatherBuffersOfTwoLayers) {
  const ModelSpec& m = gpt22b();
  TrainPlan p;
  p.dp = 8, p.global_batch = 8, p.zero = Zero::Zero3;
  const double layer = workload::layer_params(m, 0).total();
  EXPECT_DOUBLE_EQ(B(mapping::train_memory_per_chip(m, p, kMem).workspace),
                   B(kMem.workspace) + 2 * 2 * layer);
  p.zero = Zero::Zero1;
  EXPECT_DOUBLE_EQ(B(mapping::train_memory_per_chip(m, p, kMem).workspace), B(kMem.workspace));
}

// Experts are sharded ep-ways (and over expert-TP = tp); their grads and optimizer states are
// sharded over the expert-data-parallel group dp·cp·tp/(ep·etp) = dp·cp/ep.
TEST(TrainMemory, ExpertsShardedOverEpAndOptimizerOverDpCpOverEp) {
  const ModelSpec m = workload::load_model("qwen3-30b-a3b", kModels);
  TrainPlan p;
  p.tp = 2, p.dp = 8, p.cp = 2, p.ep = 4, p.zero = Zero::Zero1, p.global_batch = 8;
  const auto pc = workload::count_params(m);
  const double dense = (pc.total - pc.routed_total) / p.tp;
  const double experts = pc.routed_total / (p.ep * p.tp);
  const double ddp = 8.0 * 2, edp = 8.0 * 2 / 4;
  const auto mem = mapping::train_memory_per_chip(m, p, kMem);
  EXPECT_NEAR(rel(B(mem.weights), 2 * (dense + experts)), 0, 1e-12);
  EXPECT_NEAR(rel(B(mem.gradients), 2 * (dense + experts)), 0, 1e-12);
  EXPECT_NEAR(rel(B(mem.optimizer), 12 * (dense / ddp + experts / edp)), 0, 1e-12);
}

// ---- Activations (Korthikanti et al. 2022). ----

struct ActCase {
  const char* name;
  int tp, cp;
  bool sp, flash;
  Recompute rc;
  long long s, b;
};

/// The published per-layer formula for the case (GPT: a heads, hidden h).
double korthikanti(const ActCase& c, double a, double h) {
  const double s = double(c.s) / c.cp, b = double(c.b), t = c.tp;
  const double sbh = s * b * h;
  const double scores = c.flash ? 0.0 : 5 * a * s / (h * t);
  switch (c.rc) {
    case Recompute::Full: return 2 * sbh / (c.sp ? t : 1);
    case Recompute::Selective: return c.sp ? sbh * 34 / t : sbh * (10 + 24 / t);
    case Recompute::None: return c.sp ? sbh * (34 / t + scores) : sbh * (10 + 24 / t + scores);
  }
  return 0;
}

class ActivationTest : public ::testing::TestWithParam<ActCase> {};

TEST_P(ActivationTest, PerLayerMatchesKorthikanti) {
  const ActCase c = GetParam();
  const ModelSpec& m = gpt22b();
  TrainPlan p;
  p.tp = c.tp, p.cp = c.cp, p.sequence_parallel = c.sp, p.flash_attention = c.flash;
  p.recompute = c.rc, p.seq_len = c.s, p.micro_batch = c.b;
  EXPECT_NEAR(rel(B(mapping::activation_bytes_per_layer(m, p, 0)), korthikanti(c, m.heads, m.hidden)), 0,
              1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    Korthikanti, ActivationTest,
    ::testing::Values(
        ActCase{"no_parallelism", 1, 1, false, false, Recompute::None, 2048, 1},       // 34 + 5as/h
        ActCase{"tp8", 8, 1, false, false, Recompute::None, 2048, 1},                  // 10 + 24/t + ...
        ActCase{"tp8_sp", 8, 1, true, false, Recompute::None, 2048, 4},                // 34/t + 5as/(ht)
        ActCase{"tp8_sp_selective", 8, 1, true, false, Recompute::Selective, 2048, 1}, // 34/t
        ActCase{"tp8_selective_no_sp", 8, 1, false, false, Recompute::Selective, 2048, 1},
        ActCase{"tp8_sp_full", 8, 1, true, false, Recompute::Full, 2048, 1},           // 2sbh/t
        ActCase{"tp4_full_no_sp", 4, 1, false, false, Recompute::Full, 2048, 2},       // 2sbh
        ActCase{"tp8_sp_flash", 8, 1, true, true, Recompute::None, 4096, 1},           // flash: 34/t
        ActCase{"cp2_divides_s", 4, 2, true, false, Recompute::None, 8192, 1}),
    [](const ::testing::TestParamInfo<ActCase>& i) { return std::string(i.param.name); });

// Whole-model activations, pp = 1: L layers + embedding dropout mask sbh/t + output layer
// 4sbh/t·(1 + v/h) (final-norm and LM-head inputs, fp32 logits), Korthikanti Sec. 4.3.
TEST(TrainMemory, ActivationsOfOneStageIncludeEmbeddingAndLogits) {
  const ModelSpec& m = gpt22b();
  TrainPlan p;
  p.tp = 8, p.dp = 1, p.seq_len = 2048, p.micro_batch = 1, p.global_batch = 4;
  p.flash_attention = false;
  const double sbh = 2048.0 * m.hidden, t = 8, a = m.heads, h = m.hidden, v = m.vocab;
  const double layer = sbh * (34 / t + 5 * a * 2048 / (h * t));
  const double expect = m.layers * layer + sbh / t + 4 * sbh / t * (1 + v / h);
  EXPECT_NEAR(rel(B(mapping::train_memory_per_chip(m, p, kMem).activations), expect), 0, 1e-12);
}

// 1F1B: stage r holds min(m, pp − r) micro-batches of its L/pp layers, so stage 0 holds L
// layers' worth (Korthikanti); interleaving: × (1 + (pp−1)/(pp·vpp)) on stage 0 (Megatron).
struct PipeCase {
  const char* name;
  int pp, vpp;
  long long micro_batches;
  double layer_microbatches;  ///< derived in the table from the formula, in layers of activations
};

class PipelineActivationTest : public ::testing::TestWithParam<PipeCase> {};

TEST_P(PipelineActivationTest, FirstStageHoldsMicroBatchesInFlight) {
  const PipeCase c = GetParam();
  const ModelSpec& m = gpt22b();  // 48 layers
  TrainPlan p;
  p.tp = 8, p.pp = c.pp, p.vpp = c.vpp, p.seq_len = 2048, p.micro_batch = 1;
  p.global_batch = c.micro_batches, p.recompute = Recompute::Selective;
  const double sbh = 2048.0 * m.hidden, t = 8;
  const double in_flight_mb = std::min<double>(c.micro_batches, c.pp);
  const double expect = c.layer_microbatches * sbh * 34 / t + in_flight_mb * sbh / t;
  const auto mem = mapping::train_memory_of_stage(m, p, 0, kMem);
  EXPECT_NEAR(rel(B(mem.activations), expect), 0, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, PipelineActivationTest,
    ::testing::Values(PipeCase{"pp4_1f1b", 4, 1, 64, 48.0},                       // (L/p)·p = L
                      PipeCase{"pp8_1f1b", 8, 1, 64, 48.0},
                      PipeCase{"pp8_few_microbatches", 8, 1, 3, 48.0 / 8 * 3},   // min(m, p) = 3
                      PipeCase{"pp4_vpp2", 4, 2, 64, 48.0 * (1 + 3.0 / 8)},      // L(1+(p−1)/(pv))
                      PipeCase{"pp4_vpp3", 4, 3, 64, 48.0 * (1 + 3.0 / 12)},
                      PipeCase{"pp2_vpp4", 2, 4, 64, 48.0 * (1 + 1.0 / 8)}),
    [](const ::testing::TestParamInfo<PipeCase>& i) { return std::string(i.param.name); });

TEST(TrainMemory, FullRecomputeKeepsLayerInputsPlusOneLayerBeingRecomputed) {
  const ModelSpec& m = gpt22b();
  TrainPlan p;
  p.tp = 4, p.pp = 1, p.seq_len = 2048, p.micro_batch = 2, p.global_batch = 2;
  p.recompute = Recompute::Full, p.flash_attention = true;
  const double sbh = 2048.0 * 2 * m.hidden, t = 4, v = m.vocab, h = m.hidden;
  const double expect = m.layers * 2 * sbh / t + sbh * 34 / t + sbh / t + 4 * sbh / t * (1 + v / h);
  EXPECT_NEAR(rel(B(mapping::train_memory_per_chip(m, p, kMem).activations), expect), 0, 1e-12);
}

// Megatron's block method (--recompute-num-layers N): the first N layers of each model chunk keep
// only their input (2sbh/t), the others all their activations (34sbh/t with SP and flash
// attention), and one recomputed layer's activations are held while it reruns. With vpp the
// chunks are virtual stages: 4 layers each for 48 layers over pp 4 × vpp 3, so N = 3 recomputes
// 3 of every 4.
TEST(TrainMemory, RecomputeLayersRecomputesTheFirstLayersOfEachChunk) {
  const ModelSpec& m = gpt22b();  // 48 layers
  TrainPlan p;
  p.tp = 4, p.pp = 1, p.seq_len = 2048, p.micro_batch = 2, p.global_batch = 2;
  p.recompute = Recompute::Full, p.flash_attention = true;
  p.recompute_layers = 10;
  const double sbh = 2048.0 * 2 * m.hidden, t = 4, v = m.vocab, h = m.hidden;
  const double expect = 10 * 2 * sbh / t + 38 * sbh * 34 / t + sbh * 34 / t + sbh / t + 4 * sbh / t * (1 + v / h);
  EXPECT_NEAR(rel(B(mapping::train_memory_per_chip(m, p, kMem).activations), expect), 0, 1e-12);
  for (int l : {0, 9}) EXPECT_NEAR(B(mapping::activation_bytes_per_layer(m, p, l)), 2 * sbh / t, 1e-6) << l;
  for (int l : {10, 47}) EXPECT_NEAR(B(mapping::activation_bytes_per_layer(m, p, l)), 34 * sbh / t, 1e-6) << l;
  EXPECT_DOUBLE_EQ(mapping::recomputed_layer_share(p, m.layers), 10.0 / 48);
  // Chunks of stages: pp 2 has two chunks of 24, and the first 10 of each are recomputed.
  p.pp = 2;
  EXPECT_TRUE(mapping::recomputes_layer(p, m.layers, 33));
  EXPECT_FALSE(mapping::recomputes_layer(p, m.layers, 34));
  EXPECT_DOUBLE_EQ(mapping::recomputed_layer_share(p, m.layers), 20.0 / 48);
  EXPECT_EQ(mapping::most_layers_per_chunk(p, m.layers), 24);
  // Virtual stages: pp 4 × vpp 3 → chunks of 4 layers; layer 4k+3 is the one kept.
  p.pp = 4, p.vpp = 3, p.recompute_layers = 3;
  for (int l = 0; l < m.layers; ++l) EXPECT_EQ(mapping::recomputes_layer(p, m.layers, l), l % 4 != 3) << l;
  EXPECT_DOUBLE_EQ(mapping::recomputed_layer_share(p, m.layers), 0.75);
  EXPECT_EQ(mapping::most_layers_per_chunk(p, m.layers), 4);
  // A count of at least a chunk's layers is full recomputation; without full recomputation the
  // field is refused.
  p.recompute_layers = 4;
  EXPECT_DOUBLE_EQ(mapping::recomputed_layer_share(p, m.layers), 1.0);
  p.recompute = Recompute::Selective;
  EXPECT_FALSE(mapping::check_train_plan(p, m, p.chips()).has_value());
}

// MoE layers: the MLP's inner tensors scale by top-k × expert_ffn (plus k permuted inputs).
TEST(TrainMemory, MoeLayerActivationsScaleWithTopK) {
  const ModelSpec m = workload::load_model("mixtral-8x7b", kModels);
  TrainPlan p;
  p.tp = 1, p.seq_len = 4096, p.micro_batch = 1, p.recompute = Recompute::Selective;
  const double h = m.hidden, f = m.moe.expert_ffn, k = m.moe.experts_per_token;
  const double sbh = 4096.0 * h;
  // Attention (GQA): replicated 3 + 2·(q + k + v + o)/h; MLP: 3 + 4E/h (fp32 router logits)
  // + 2k + k·6f/h (gated: fc1 output 4f, fc2 input 2f); two norms 4.
  const double q = 32.0 * 128, kv = 8.0 * 128;
  const double units = 3 + 2 * (q + kv + kv + q) / h + 3 + 4 * 8 / h + 2 * k + k * 6 * f / h + 4;
  EXPECT_NEAR(rel(B(mapping::activation_bytes_per_layer(m, p, 0)), sbh * units), 0, 1e-12);
}

// Projections-only remat (AXLearn): a layer keeps its input 2sbh (split by t with SP) and the
// outputs of its QKV GEMM 2·(q + k + v)·sb and its gated up-projection 2·2f·sb, both split by t.
// Llama-2-70B: h 8192, 64 heads of 128, 8 KV heads, f 28672.
TEST(TrainMemory, ProjectionsOnlyRematKeepsInputQkvAndUpOutputs) {
  const ModelSpec m = workload::load_model("llama2-70b", kModels);
  for (const int t : {1, 4}) {
    TrainPlan p;
    p.tp = t, p.seq_len = 4096, p.micro_batch = 1, p.sequence_parallel = true;
    p.recompute = Recompute::Selective;
    p.selective = mapping::SelectiveScope::AllButProjections;
    const double h = m.hidden, sb = 4096.0;
    const double q = 64.0 * 128, kv = 8.0 * 128, f = m.ffn;
    const double expect = 2 * sb * h / t + 2 * sb * (q + 2 * kv) / t + 2 * sb * 2 * f / t;
    EXPECT_NEAR(rel(B(mapping::activation_bytes_per_layer(m, p, 0)), expect), 0, 1e-12) << t;
    // Less than Megatron's selective recompute keeps, more than full recompute's layer input.
    TrainPlan megatron = p;
    megatron.selective = mapping::SelectiveScope::AttentionCore;
    EXPECT_LT(expect, B(mapping::activation_bytes_per_layer(m, megatron, 0)));
    TrainPlan full = p;
    full.recompute = Recompute::Full;
    EXPECT_GT(expect, B(mapping::activation_bytes_per_layer(m, full, 0)));
  }
}

TEST(TrainMemory, MostLoadedStageIsReported) {
  const ModelSpec m = workload::load_model("nemotron4-340b", kModels);  // 256k vocab, untied
  TrainPlan p;
  p.tp = 8, p.pp = 12, p.dp = 1, p.global_batch = 64, p.seq_len = 4096;
  p.recompute = Recompute::Selective;
  const auto best = mapping::train_memory_per_chip(m, p, kMem);
  for (int r = 0; r < p.pp; ++r) {
    EXPECT_LE(B(mapping::train_memory_of_stage(m, p, r, kMem).total()), B(best.total())) << r;
  }
  EXPECT_DOUBLE_EQ(B(mapping::train_memory_of_stage(m, p, best.stage, kMem).total()), B(best.total()));
}

TEST(StageLayers, ContiguousAndInterleaved) {
  EXPECT_EQ(mapping::stage_layers(10, 4, 1, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(mapping::stage_layers(10, 4, 1, 3), (std::vector<int>{8, 9}));
  EXPECT_EQ(mapping::stage_layers(8, 2, 2, 1), (std::vector<int>{2, 3, 6, 7}));
}

// ---- Serving. ----

// KV per token per chip: 2·ceil(kv_heads/tp)·head_dim per layer of the stage (replicated when
// tp exceeds the kv heads); MLA caches kv_lora_rank + qk_rope_head_dim, replicated over tp.
TEST(ServeMemory, KvBytesPerTokenPerChip) {
  struct Case { const char* id; int tp, pp; core::Dtype dt; double expect; };
  const Case cases[] = {
      {"llama3.1-70b", 1, 1, core::Dtype::Bf16, 2.0 * 8 * 128 * 80 * 2},
      {"llama3.1-70b", 8, 1, core::Dtype::Bf16, 2.0 * 1 * 128 * 80 * 2},
      {"llama3.1-70b", 16, 1, core::Dtype::Bf16, 2.0 * 1 * 128 * 80 * 2},  // replicated heads
      {"llama3.1-70b", 4, 2, core::Dtype::Fp8, 2.0 * 2 * 128 * 40 * 1},
      {"deepseek-v3", 8, 1, core::Dtype::Bf16, (512.0 + 64) * 61 * 2},
  };
  for (const Case& c : cases) {
    const ModelSpec m = workload::load_model(c.id, kModels);
    ServePlan p;
    p.tp = c.tp, p.pp = c.pp, p.kv_dtype = c.dt;
    EXPECT_DOUBLE_EQ(B(mapping::kv_bytes_per_token_per_chip(m, p)), c.expect) << c.id << " tp" << c.tp;
  }
}

TEST(ServeMemory, WeightsAndKvOfDenseReplica) {
  const ModelSpec m = workload::load_model("llama3.1-70b", kModels);
  ServePlan p;
  p.tp = 8, p.weight_dtype = core::Dtype::Fp8;
  const long long seqs = 32, ctx = 8192;
  const auto mem = mapping::serve_memory_per_chip(m, p, seqs, ctx, kMem);
  EXPECT_NEAR(rel(B(mem.weights), workload::count_params(m).total / 8), 0, 1e-12);
  EXPECT_DOUBLE_EQ(B(mem.kv_cache), seqs * ctx * B(mapping::kv_bytes_per_token_per_chip(m, p)));
  EXPECT_DOUBLE_EQ(B(mem.workspace), B(kMem.workspace));
}

// gpt-oss-120b's checkpoint keeps attention, router, embedding and LM head in bf16: on one chip
// at MXFP4 its weights are the checkpoint's bytes (workload::weight_bytes, derived in
// accounting_test); at TP 4 its dense part splits four ways, the experts by max(tp, ep).
TEST(ServeMemory, CheckpointBf16ModulesAtTwoBytes) {
  const ModelSpec m = workload::load_model("gpt-oss-120b", kModels);
  ServePlan p;
  p.tp = 1, p.weight_dtype = core::Dtype::Mxfp4;
  const double one = B(mapping::serve_memory_per_chip(m, p, 1, 1024, kMem).weights);
  EXPECT_NEAR(rel(one, B(workload::weight_bytes(m, core::Dtype::Mxfp4))), 0, 1e-12);
  p.tp = 4;
  const double unq = workload::unquantized_params(m), routed = workload::count_params(m).routed_total;
  const double mx = core::bytes_per_element(core::Dtype::Mxfp4);
  const double four = ((workload::count_params(m).total - routed - unq) * mx + unq * 2.0) / 4 + routed * mx / 4;
  EXPECT_NEAR(rel(B(mapping::serve_memory_per_chip(m, p, 1, 1024, kMem).weights), four), 0, 1e-12);
}

TEST(ServeMemory, SlidingLayersCapTheCache) {
  const ModelSpec m = workload::load_model("gpt-oss-120b", kModels);
  ServePlan p;
  p.tp = 1;
  const long long ctx = 32768;
  const double per_layer_token = 2.0 * 8 * 64 * 2;
  const auto mem = mapping::serve_memory_per_chip(m, p, 1, ctx, kMem);
  EXPECT_DOUBLE_EQ(B(mem.kv_cache), (18.0 * 128 + 18.0 * ctx) * per_layer_token);
}

// ---- Plan checks: one per reason, with the message text. ----

struct CheckCase {
  const char* name;
  const char* model;
  TrainPlan plan;
  int chips;
  const char* reason;  ///< "" = feasible
};

class CheckPlanTest : public ::testing::TestWithParam<CheckCase> {};

TEST_P(CheckPlanTest, ReasonText) {
  const CheckCase& c = GetParam();
  const ModelSpec m = workload::load_model(c.model, kModels);
  const auto r = mapping::check_train_plan(c.plan, m, c.chips);
  if (std::string(c.reason).empty()) {
    EXPECT_TRUE(r.has_value()) << r.error();
  } else {
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().find(c.reason), std::string::npos) << r.error();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Reasons, CheckPlanTest,
    ::testing::Values(
        CheckCase{"ok", "llama3.1-70b", {.tp = 8, .pp = 4, .dp = 4, .global_batch = 64}, 128, ""},
        CheckCase{"chips", "llama3.1-70b", {.tp = 8, .pp = 4, .dp = 4, .global_batch = 64}, 64,
                  "tp·pp·cp·dp = 8·4·1·4 = 128 but the system has 64 chips"},
        CheckCase{"tp_heads", "megatron-gpt-22b", {.tp = 3, .global_batch = 3}, 3,
                  "tp = 3 does not divide the 64 attention heads"},
        CheckCase{"pp_layers", "llama3.1-8b", {.pp = 64, .global_batch = 1}, 64,
                  "pp = 64 exceeds the 32 layers"},
        CheckCase{"ep_dense", "llama3.1-8b", {.dp = 8, .ep = 8, .global_batch = 8}, 8,
                  "ep = 8 but the model has no experts"},
        CheckCase{"ep_experts", "mixtral-8x7b", {.dp = 12, .ep = 3, .global_batch = 12}, 12,
                  "ep = 3 does not divide the 8 experts"},
        CheckCase{"ep_dpcp", "qwen3-30b-a3b", {.dp = 2, .ep = 8, .global_batch = 2}, 2,
                  "ep = 8 does not divide dp·cp = 2"},
        CheckCase{"batch", "llama3.1-8b", {.dp = 4, .micro_batch = 2, .global_batch = 12}, 4,
                  "global batch 12 is not divisible by dp·micro_batch = 8"},
        CheckCase{"seq_cp", "llama3.1-8b", {.dp = 1, .cp = 4, .global_batch = 1, .seq_len = 4100}, 4,
                  "seq_len 4100 is not divisible by 2·cp = 8"},
        CheckCase{"vpp", "llama3.1-8b", {.pp = 8, .vpp = 5, .global_batch = 8}, 8,
                  "interleaving needs at least pp·vpp = 40 layers (the model has 32)"},
        CheckCase{"degree", "llama3.1-8b", {.tp = 0}, 0, "tp = 0 must be at least 1"}),
    [](const ::testing::TestParamInfo<CheckCase>& i) { return std::string(i.param.name); });

TEST(Plan, Names) {
  EXPECT_EQ(mapping::zero_name(Zero::Zero3), "3");
  EXPECT_EQ(mapping::zero_name(Zero::Fsdp), "fsdp");
  EXPECT_EQ(mapping::recompute_name(Recompute::Selective), "selective");
}
