// Hybrid models (Nemotron-H): Mamba-2, attention and MLP blocks, one kind per layer. Each expected
// value is derived here from the published shapes (data/models/README.md), not read back.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "config_text.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;
using workload::LayerBlock;
using workload::ModelSpec;

namespace {

const std::string kHybridModels = std::string(XS_TESTDATA_DIR) + "/models";

ModelSpec hybrid(const std::string& id) { return workload::load_model(id, kHybridModels); }

/// A Nemotron-H-shaped config of 4 layers ("M-*-" unless replaced) with `extra` keys merged in.
std::string hybrid_error(const std::string& pattern, const std::string& extra = "") {
  const std::string path = ::testing::TempDir() + "hybrid_bad.json";
  std::ofstream(path) << "{" +
                              test::members_with({{"model_type", R"("nemotron_h")"}, {"hidden_size", "256"},
                                                  {"num_hidden_layers", "4"}, {"num_attention_heads", "4"},
                                                  {"num_key_value_heads", "2"}, {"intermediate_size", "512"},
                                                  {"vocab_size", "1000"}, {"mamba_num_heads", "8"},
                                                  {"mamba_head_dim", "64"}, {"ssm_state_size", "16"}, {"n_groups", "2"}},
                                                 R"("hybrid_override_pattern": ")" + pattern + "\"" + extra) +
                              "}";
  try {
    workload::load_model(path, kHybridModels);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

bool mentions(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

// Nemotron-H-8B: 24 Mamba-2, 4 attention and 24 MLP layers. Per Mamba layer: in_proj 4096 ×
// (2·8192 + 2·8·128 + 128 = 18,560), out_proj 8192 × 4096, conv (8192 + 2048)·(4 + 1), dt_bias,
// A_log and D (3·128), the gated norm 8192 and the block's norm 4096: 109,640,064. Attention:
// 2·4096² + 2·4096·1024 + 4096 = 41,947,136. MLP (squared ReLU, two matrices): 2·4096·21,504 +
// 4096 = 176,164,864. Embedding and untied LM head 2·131,072·4096, final norm 4096. Total
// 8,100,852,736: the "8B" of the name.
TEST(Hybrid, NemotronH8bCountsEachBlockOnce) {
  const ModelSpec m = hybrid("nemotron-h-8b");
  ASSERT_EQ(m.layers, 52);
  int mamba = 0, attention = 0, mlp = 0;
  for (int i = 0; i < m.layers; ++i) {
    mamba += m.layer_block(i) == LayerBlock::Mamba;
    attention += m.layer_block(i) == LayerBlock::Attention;
    mlp += m.layer_block(i) == LayerBlock::Mlp;
  }
  EXPECT_EQ(mamba, 24);
  EXPECT_EQ(attention, 4);
  EXPECT_EQ(mlp, 24);
  EXPECT_EQ(m.attention_layers(), 4);
  EXPECT_EQ(m.mamba.in_proj_width(), 18560);
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 0).total(), 109640064.0);
  const auto p = workload::count_params(m);
  EXPECT_DOUBLE_EQ(p.total, 24 * 109640064.0 + 4 * 41947136.0 + 24 * 176164864.0 + 2 * 131072.0 * 4096 + 4096);
  EXPECT_DOUBLE_EQ(p.total, 8100852736.0);
  EXPECT_EQ(m.position, workload::PosKind::None);
}

// Nemotron-H-56B (118 layers: 54 Mamba-2 of 256 heads × 64 with state 256, 10 attention, 54 MLP
// of 32,768, hidden 8192): 56.3 B, the paper's 56B.
TEST(Hybrid, NemotronH56bIsFiftySixBillion) {
  const ModelSpec m = hybrid("nemotron-h-56b");
  EXPECT_EQ(m.attention_layers(), 10);
  EXPECT_NEAR(workload::count_params(m).total / 56.3e9, 1.0, 0.002);
}

// Only the 4 attention layers keep a KV cache: 4·2·8·128 elements per token. Every Mamba layer
// keeps 128·64·128 SSM state elements and (4 − 1)·10,240 conv inputs per sequence, whatever
// its length: 24 · 1,079,296 elements · 2 bytes in bf16.
TEST(Hybrid, KvCacheOnAttentionLayersAndAConstantMambaState) {
  const ModelSpec m = hybrid("nemotron-h-8b");
  EXPECT_DOUBLE_EQ(workload::kv_bytes_per_token(m, core::Dtype::Bf16).base(), 4 * 2 * 8 * 128 * 2.0);
  EXPECT_DOUBLE_EQ(workload::kv_bytes_for_context(m, core::Dtype::Bf16, 1000).base(), 1000 * 4 * 2 * 8 * 128 * 2.0);
  EXPECT_DOUBLE_EQ(workload::recurrent_state_bytes_per_layer(m, 0, core::Dtype::Bf16).base(), (128.0 * 64 * 128 + 3 * 10240) * 2);
  EXPECT_DOUBLE_EQ(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16).base(), 24 * 1079296.0 * 2);
  for (int i = 0; i < m.layers; ++i)
    EXPECT_EQ(m.layer_context(i, 5000), m.layer_block(i) == LayerBlock::Attention ? 5000 : 0) << i;
}

// Each block's operators: a Mamba layer's in_proj (tensor-parallel over its heads and groups: at
// tp 2, 2·4096 + 2·4·128 + 64 = 9280 outputs), the SSD scan and out_proj, no attention; an
// attention layer has no RoPE (NoPE) and no MLP; an MLP layer has no attention.
TEST(Hybrid, LayerOpsFollowTheBlockKind) {
  const ModelSpec m = hybrid("nemotron-h-8b");
  workload::LayerShard s;
  s.seq = 4096;
  s.tp = 2;
  auto names = [&](int layer) {
    std::string all;
    for (const auto& op : workload::layer_ops(m, layer, s)) all += op.name + " ";
    return all;
  };
  ASSERT_EQ(m.layer_block(0), LayerBlock::Mamba);
  ASSERT_EQ(m.layer_block(1), LayerBlock::Mlp);
  ASSERT_EQ(m.layer_block(7), LayerBlock::Attention);
  EXPECT_EQ(names(0), "mamba_norm in_proj mamba_conv ssd_scan mamba_gate_norm out_proj mamba_residual ");
  EXPECT_EQ(names(1), "mlp_norm mlp_up mlp_act mlp_down mlp_residual ");
  EXPECT_EQ(names(7), "attn_norm qkv_proj attention o_proj attn_residual ");
  const auto ops = workload::layer_ops(m, 0, s);
  EXPECT_EQ(ops[1].n, 9280);
  EXPECT_EQ(ops[1].k, 4096);
  EXPECT_EQ(ops[5].k, 4096);  // out_proj reads this chip's 64 heads × 64
  const auto& scan = ops[3];
  ASSERT_EQ(scan.kind, workload::OpKind::Scan);
  EXPECT_EQ(scan.heads, 64);
  EXPECT_EQ(scan.kv_heads, 4);
  // 4096 tokens · 2 · (4 groups · 128 · 128 + 64 heads · (128·64 + 2·128·64)).
  EXPECT_DOUBLE_EQ(scan.flops(), 4096.0 * 2 * (4 * 128 * 128 + 64 * (128 * 64 + 2 * 128 * 64)));
}

// Model FLOPs per training token: 6 × the matmul weights + 3 × attention + 3 × the SSD scan (its
// backward twice its forward, as attention's). At seq 4096 the scan is 2·(8·128·128 + 128·
// (128·64 + 2·128·64)) per token per Mamba layer.
TEST(Hybrid, TrainFlopsCountTheScanLikeAttention) {
  const ModelSpec m = hybrid("nemotron-h-8b");
  const double scan = 2.0 * (8 * 128 * 128 + 128 * (128 * 64 + 2 * 128 * 64));
  EXPECT_DOUBLE_EQ(workload::mamba_scan_flops_per_token(m, 4096), scan);
  const double attn = 4 * workload::attention_flops_per_token(m, 7, workload::causal_mean_keys(4096, 0));
  const auto f = workload::train_flops_per_token(m, 4096, workload::RecomputeKind::None);
  EXPECT_NEAR(f.model, 6.0 * workload::count_params(m).matmul_active + 3.0 * attn + 3.0 * 24 * scan, 1.0);
  // Decode: the recurrent step, 2 multiply-adds per state element, instead of the scan.
  const double step = 4.0 * 128 * 64 * 128;
  EXPECT_NEAR(workload::decode_flops_per_token(m, 1000),
              2.0 * workload::count_params(m).matmul_active +
                  4 * workload::attention_flops_per_token(m, 7, 1000) + 24 * step, 1.0);
}

// Bad patterns name the field, the value and what was expected.
TEST(Hybrid, PatternErrorsNameTheFieldAndTheExpectedKinds) {
  EXPECT_EQ(hybrid_error("M-*-"), "");
  const std::string length = hybrid_error("M-*");
  EXPECT_TRUE(mentions(length, "hybrid_override_pattern") && mentions(length, "num_hidden_layers")) << length;
  const std::string moe = hybrid_error("M-E-");
  EXPECT_TRUE(mentions(moe, "n_routed_experts") && mentions(moe, "missing")) << moe;
  const std::string unknown = hybrid_error("M-?-");
  EXPECT_TRUE(mentions(unknown, "position 2") && mentions(unknown, "'E' (mixture of experts)")) << unknown;
  EXPECT_EQ(hybrid_error("M-M-"), "");  // Mamba and MLP layers only: an SSM without attention
  const std::string none = hybrid_error("----");
  EXPECT_TRUE(mentions(none, "hybrid_override_pattern") && mentions(none, "no token mixer")) << none;
  const std::string groups = hybrid_error("M-*-", R"(, "n_groups": 3)");
  EXPECT_TRUE(mentions(groups, "n_groups") && mentions(groups, "mamba_num_heads")) << groups;
  const std::string state = hybrid_error("M-*-", R"(, "ssm_state_size": 0)");
  EXPECT_TRUE(mentions(state, "ssm_state_size") && mentions(state, "positive")) << state;
}

// Nemotron 3's 'E' blocks: routed squared-ReLU experts (two matrices each) with one shared expert
// and the router's score-correction bias. A 4-layer model "M*E-" of hidden 256: the E layer holds
// its norm 256, the router 256·16 + 16, 16 experts of 2·256·64 and a shared one of 2·256·128;
// one token uses 2 of the experts: active = total − 14·2·256·64.
TEST(Hybrid, MixtureOfExpertsBlocksRouteToSquaredReluExperts) {
  const std::string path = ::testing::TempDir() + "hybrid_moe.json";
  std::ofstream(path) << R"({"model_type": "nemotron_h", "hidden_size": 256, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512, "vocab_size": 1000,
    "mamba_num_heads": 8, "mamba_head_dim": 64, "ssm_state_size": 16, "n_groups": 2,
    "n_routed_experts": 16, "num_experts_per_tok": 2, "moe_intermediate_size": 64,
    "moe_shared_expert_intermediate_size": 128, "hybrid_override_pattern": "M*E-"})";
  const ModelSpec m = workload::load_model(path, kHybridModels);
  EXPECT_TRUE(m.layer_is_moe(2));
  for (int i : {0, 1, 3}) EXPECT_FALSE(m.layer_is_moe(i)) << i;
  EXPECT_EQ(m.layer_block(2), LayerBlock::Mlp);
  const auto e = workload::layer_params(m, 2);
  EXPECT_DOUBLE_EQ(e.total(), 256 + 256.0 * 16 + 16 + 16 * 2.0 * 256 * 64 + 2.0 * 256 * 128);
  EXPECT_DOUBLE_EQ(e.total() - e.active(), 14 * 2.0 * 256 * 64);
  const auto p = workload::count_params(m);
  EXPECT_DOUBLE_EQ(p.total - p.active, 14 * 2.0 * 256 * 64);
  workload::LayerShard s;
  s.seq = 128;
  bool experts = false;
  for (const auto& op : workload::layer_ops(m, 2, s)) experts = experts || op.is_expert();
  EXPECT_TRUE(experts);
}

// Qwen3-Next-80B-A3B: 36 gated DeltaNet and 12 gated-attention layers (every fourth), each then
// a MoE of 512 SwiGLU experts of 512 (top 10) and a shared expert of 512. Per layer: the MoE's
// router 2048·512, experts 512·3·2048·512, shared 3·2048·512 and norm 2048 (1,614,809,088); a
// DeltaNet's in_proj 2048·(2·2048 + 2·4096 + 2·32), out_proj 4096·2048, conv 8192·4, dt_bias and
// A_log 2·32, gated norm 128, input norm 2048 (33,720,512); gated attention's q_proj with its gate
// 2048·2·16·256, k and v 2·2048·2·256, o_proj 4096·2048, q/k norms 2·256, input norm 2048
// (27,265,536). With the untied embeddings 2·151,936·2048 and the final norm: 79.67 B, of which
// 79.05 B without embeddings: the card's 80 B and "79 B non-embedding".
TEST(Hybrid, Qwen3NextCountsItsDeltaNetAndGatedAttentionLayers) {
  const ModelSpec m = hybrid("qwen3-next-80b-a3b");
  EXPECT_EQ(m.attention_layers(), 12);
  for (int i : {0, 1, 2, 4}) EXPECT_TRUE(m.layer_is_linear_attention(i)) << i;
  for (int i : {3, 47}) EXPECT_EQ(m.layer_block(i), LayerBlock::AttentionMlp) << i;
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 0).total(), 1614809088.0 + 33720512.0);
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 3).total(), 1614809088.0 + 27265536.0);
  const auto p = workload::count_params(m);
  EXPECT_DOUBLE_EQ(p.total, 79674292992.0);
  EXPECT_NEAR((p.total - p.embedding - p.lm_head) / 79e9, 1.0, 0.001);
  // State: 36 layers × (32 value heads × 128 × 128 + 3 × 8192 conv inputs) × 2 bytes; KV on 12
  // layers of 2 heads × 256.
  EXPECT_DOUBLE_EQ(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16).base(), 39518208.0);
  EXPECT_DOUBLE_EQ(workload::kv_bytes_per_token(m, core::Dtype::Bf16).base(), 12 * 2 * 2 * 256 * 2.0);
}

// The DeltaNet's operators at tp 2 (8 key and 16 value heads per chip): in_proj to 2·1024 +
// 2·2048 + 2·16 = 6176 outputs, the chunked delta rule (chunks of 64) with its FLOPs per token
// 2·(8·2·64·128 + 16·(64·(2·128 + 128) + 3·128·128)); gated attention's q_proj twice as wide
// plus its output gate.
TEST(Hybrid, Qwen3NextLayerOps) {
  const ModelSpec m = hybrid("qwen3-next-80b-a3b");
  workload::LayerShard s;
  s.seq = 4096;
  s.tp = 2;
  const auto ops = workload::layer_ops(m, 0, s);
  ASSERT_EQ(ops[1].name, "in_proj");
  EXPECT_EQ(ops[1].n, 6176);
  const auto& scan = ops[3];
  ASSERT_EQ(scan.name, "delta_rule_scan");
  EXPECT_EQ(scan.q_len, 64);
  EXPECT_DOUBLE_EQ(scan.flops(), 4096.0 * 2 * (8 * 2 * 64 * 128 + 16 * (64 * (2 * 128 + 128) + 3 * 128 * 128)));
  EXPECT_DOUBLE_EQ(workload::linear_attention_scan_flops_per_token(m, 4096) * 4096 / 2, scan.flops());
  std::string attention;
  for (const auto& op : workload::layer_ops(m, 3, s)) attention += op.name + " ";
  EXPECT_NE(attention.find("attention attn_gate o_proj"), std::string::npos) << attention;
  EXPECT_EQ(workload::layer_ops(m, 3, s)[1].n, (2 * 8 + 2 * 1) * 256);
}

// Jamba 1.5 Mini: 28 Mamba-1 and 4 attention layers (every 8th from 4), each then a SwiGLU MLP,
// a mixture of 16 experts (top 2) in every odd layer. A Mamba-1 mixer: in_proj 4096·2·8192,
// x_proj 8192·(256 + 2·16), dt_proj 256·8192 and its bias 8192, out_proj 8192·4096, the conv
// 8192·(4 + 1), A_log 8192·16, D 8192, the dt/B/C norms 256 + 2·16, and its input norm 4096:
// 105,312,544. MLP 3·4096·14,336 + 4096; MoE 16 of them and the router 4096·16; attention 2·4096²
// + 2·4096·1024 + 4096. With the untied embeddings 2·65,536·4096: 51.57 B total, 12.11 B active
// (the card's 52 B and 12 B).
TEST(Hybrid, JambaCountsItsMamba1Layers) {
  const ModelSpec m = hybrid("jamba-1.5-mini");
  EXPECT_EQ(m.mamba.version, 1);
  EXPECT_EQ(m.attention_layers(), 4);
  for (int i : {4, 12, 20, 28}) EXPECT_EQ(m.layer_block(i), LayerBlock::AttentionMlp) << i;
  EXPECT_EQ(m.layer_block(0), LayerBlock::MambaMlp);
  EXPECT_TRUE(m.layer_is_moe(1));
  EXPECT_FALSE(m.layer_is_moe(0));
  const double mlp = 3.0 * 4096 * 14336 + 4096, moe = 16 * 3.0 * 4096 * 14336 + 4096.0 * 16 + 4096;
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 0).total(), 105312544.0 + mlp);
  const auto p = workload::count_params(m);
  EXPECT_DOUBLE_EQ(p.total, 2 * 65536.0 * 4096 + 4096 + 28 * 105312544.0 + 4 * 41947136.0 + 16 * mlp + 16 * moe);
  EXPECT_DOUBLE_EQ(p.total, 51570323328.0);
  EXPECT_DOUBLE_EQ(p.active, 12110311296.0);
  // The state: 28 layers × 8192 channels × (16 + 3 conv inputs) × 2 bytes.
  EXPECT_DOUBLE_EQ(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16).base(), 28 * 8192.0 * 19 * 2);
}

// A Mamba-1 layer's operators at tp 2 (4096 channels per chip): in_proj to x and z, the conv, x_proj
// to dt, B and C, dt_proj, the selective scan (8 FLOPs per channel and state element per token) and
// out_proj; "auto" dt rank is ceil(hidden / 16), another word is refused.
TEST(Hybrid, Mamba1LayerOpsAndDtRank) {
  const ModelSpec m = hybrid("jamba-1.5-mini");
  workload::LayerShard s;
  s.seq = 1024;
  s.tp = 2;
  std::string names;
  for (const auto& op : workload::layer_ops(m, 0, s)) names += op.name + " ";
  EXPECT_EQ(names.substr(0, names.find(" mlp_norm")),
            "mamba_norm in_proj mamba_conv x_proj dt_proj selective_scan mamba_gate out_proj mamba_residual");
  const auto ops = workload::layer_ops(m, 0, s);
  EXPECT_EQ(ops[1].n, 8192);
  EXPECT_EQ(ops[3].n, 256 + 32);
  EXPECT_EQ(ops[3].k, 4096);
  EXPECT_DOUBLE_EQ(ops[5].flops(), 1024.0 * 4096 * 16 * 8);
  const std::string path = ::testing::TempDir() + "jamba_auto.json";
  std::ofstream(path) << R"({"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 1024, "vocab_size": 1000, "mamba_dt_rank": "auto"})";
  EXPECT_EQ(workload::load_model(path, kHybridModels).mamba.dt_rank, 256);
  std::ofstream(path) << R"({"model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 1024, "vocab_size": 1000, "mamba_dt_rank": "big"})";
  try {
    workload::load_model(path, kHybridModels);
    ADD_FAILURE() << "a dt rank of 'big' was accepted";
  } catch (const core::InputError& e) {
    EXPECT_TRUE(mentions(e.what(), "mamba_dt_rank") && mentions(e.what(), "auto")) << e.what();
  }
}
