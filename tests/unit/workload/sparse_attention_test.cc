// DeepSeek Sparse Attention (DeepSeek-V3.2): DeepSeek-V3 plus a lightning indexer per layer that
// scores every earlier key, while each query's MLA attention reads only its top-k. Each expected
// value is derived here from the shapes of data/models/deepseek-v3.2.json, not read back.

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "config_text.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;
using workload::ModelSpec;

namespace {

const std::string kDsaModels = std::string(XS_TESTDATA_DIR) + "/models";

ModelSpec dsa_model(const std::string& id) { return workload::load_model(id, kDsaModels); }

// Shapes of DeepSeek-V3 and the indexer: 61 layers, 128 heads, MLA q/k head 192 and v head 128,
// query latent 1536, KV latent 512 + rope 64; the indexer 64 heads of 128, top 2048.
constexpr double kLayers = 61, kHidden = 7168, kHeads = 128, kQkV = 192 + 128, kQLatent = 1536;
constexpr double kIndexHeads = 64, kIndexDim = 128, kTopK = 2048;

/// The indexer's weights per layer: wq_b (query latent → 64·128), wk (hidden → 128),
/// weights_proj (hidden → 64) and its key's LayerNorm (weight and bias).
constexpr double kIndexerGemmParams = kQLatent * kIndexHeads * kIndexDim + kHidden * kIndexDim + kHidden * kIndexHeads;
constexpr double kIndexerParams = kIndexerGemmParams + 2 * kIndexDim;

std::string dsa_error(const std::string& json) { return test::config_text_error("dsa_bad", json); }

}  // namespace

TEST(SparseAttention, DeepseekV32IsDeepseekV3WithAnIndexerPerLayer) {
  const ModelSpec v3 = dsa_model("deepseek-v3"), v32 = dsa_model("deepseek-v3.2");
  ASSERT_TRUE(v32.dsa.enabled());
  EXPECT_FALSE(v3.dsa.enabled());
  EXPECT_EQ(v32.dsa.topk, 2048);
  EXPECT_EQ(v32.dsa.index_heads, 64);
  EXPECT_EQ(v32.dsa.index_head_dim, 128);
  const auto p3 = workload::count_params(v3), p32 = workload::count_params(v32);
  EXPECT_DOUBLE_EQ(p32.total - p3.total, kLayers * kIndexerParams);
  EXPECT_DOUBLE_EQ(p32.active - p3.active, kLayers * kIndexerParams);
  // The KV cache keeps every token's indexer key beside its latent.
  const auto kv3 = workload::kv_bytes_per_token(v3, core::Dtype::Fp8);
  const auto kv32 = workload::kv_bytes_per_token(v32, core::Dtype::Fp8);
  EXPECT_DOUBLE_EQ(core::to_bytes(kv32) - core::to_bytes(kv3), kLayers * kIndexDim);
  const long long ctx = 131072;
  EXPECT_DOUBLE_EQ(core::to_bytes(workload::kv_bytes_for_context(v32, core::Dtype::Fp8, ctx)),
                   core::to_bytes(kv32) * ctx);
}

// Decode at a 128k context: the MLA attention reads 2048 keys instead of every one, and the
// indexer scores all of them with 64 heads of 128 (QKᵀ alone); its projections add 2·params.
TEST(SparseAttention, DecodeAttendsTopKAndTheIndexerScoresEveryKey) {
  const ModelSpec v3 = dsa_model("deepseek-v3"), v32 = dsa_model("deepseek-v3.2");
  const double ctx = 131072;
  const double attention_saved = kLayers * 2 * kHeads * kQkV * (ctx - kTopK);
  const double indexer = kLayers * (2 * kIndexHeads * kIndexDim * ctx + 2 * kIndexerGemmParams);
  EXPECT_NEAR(workload::decode_flops_per_token(v32, 131072) - workload::decode_flops_per_token(v3, 131072),
              indexer - attention_saved, 1e-6 * indexer);
  // Below the top-k, every key is attended: only the indexer is added.
  EXPECT_NEAR(workload::decode_flops_per_token(v32, 1024) - workload::decode_flops_per_token(v3, 1024),
              kLayers * (2 * kIndexHeads * kIndexDim * 1024 + 2 * kIndexerGemmParams), 1e-3);
  for (int layer : {0, 60}) {
    EXPECT_EQ(v32.layer_attended_keys(layer, 131072), 2048);
    EXPECT_EQ(v32.layer_context(layer, 131072), 131072);  // every key is kept
  }
}

// A training sequence of 32k: each query attends min(position, 2048) keys, so the mean is
// (1/s)·(Σ_{i≤2048} i + (s − 2048)·2048); the indexer sees the causal mean (s + 1)/2.
TEST(SparseAttention, TrainingAttentionIsTheCappedCausalMean) {
  const ModelSpec v3 = dsa_model("deepseek-v3"), v32 = dsa_model("deepseek-v3.2");
  const double s = 32768;
  const double capped = (kTopK * (kTopK + 1) / 2 + (s - kTopK) * kTopK) / s, full = (s + 1) / 2;
  const auto none = workload::RecomputeKind::None;
  const double diff = workload::train_flops_per_token(v32, 32768, none).model -
                      workload::train_flops_per_token(v3, 32768, none).model;
  const double want = 3 * kLayers * (2 * kHeads * kQkV * (capped - full) + 2 * kIndexHeads * kIndexDim * full) +
                      6 * kLayers * kIndexerGemmParams;
  EXPECT_NEAR(diff / want, 1.0, 1e-9);
}

// The layer's operators: the indexer's three projections, its scores over every key and the
// top-k, and an MLA attention whose window is the top-k.
TEST(SparseAttention, LayerOpsCarryTheIndexer) {
  const ModelSpec v32 = dsa_model("deepseek-v3.2");
  workload::LayerShard s;
  s.batch = 1;
  s.seq = 8192;
  s.tp = 8;
  const auto ops = workload::layer_ops(v32, 5, s);
  const auto find = [&](const std::string& name) {
    return std::find_if(ops.begin(), ops.end(), [&](const workload::Op& o) { return o.name == name; });
  };
  ASSERT_NE(find("indexer_q"), ops.end());
  EXPECT_EQ(find("indexer_q")->n, 64 / 8 * 128);
  EXPECT_EQ(find("indexer_q")->k, 1536);
  ASSERT_NE(find("indexer_scores"), ops.end());
  EXPECT_EQ(find("indexer_scores")->d_v, 0);
  EXPECT_EQ(find("indexer_scores")->window, 0);
  EXPECT_EQ(find("attention")->window, 2048);
  EXPECT_NE(find("indexer_topk"), ops.end());
  // The operators' causal convention: q·(kv − q/2) pairs, here 8192²/2, 2·128 FLOPs each per head.
  EXPECT_DOUBLE_EQ(find("indexer_scores")->flops(), 8192.0 * 8192.0 / 2 * 2 * 8 * 128);
}

TEST(SparseAttention, AnIndexerWithoutItsSizesIsNamed) {
  const std::string base = R"({"model_type": "deepseek_v32", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128, "n_routed_experts": 4,
    "num_experts_per_tok": 2, "moe_intermediate_size": 32, "kv_lora_rank": 16, "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8, "v_head_dim": 8, "index_n_heads": 4, "index_head_dim": 8)";
  EXPECT_NE(dsa_error(base + "}").find("index_topk"), std::string::npos);
  EXPECT_NE(dsa_error(base + R"(, "index_topk": -1})").find("index_topk"), std::string::npos);
  EXPECT_EQ(dsa_error(base + R"(, "index_topk": 16})"), "");
}
