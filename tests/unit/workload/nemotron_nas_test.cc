// Nemotron-NAS (DeciLM block_configs): each layer's KV heads, MLP width and linear replacements.
// Expected counts are derived here, layer by layer, from the shapes the config states.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "config_text.h"

using namespace xpusim;
using workload::LayerBlock;
using workload::ModelSpec;

namespace {

const std::string kNasModels = std::string(XS_TESTDATA_DIR) + "/models";

using test::config_text_error;
using test::load_config_text;

std::string nas_config(const std::string& blocks, int layers, int heads = 16, int hidden = 1024) {
  return R"({"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas", "hidden_size": )" +
         std::to_string(hidden) + R"(, "num_attention_heads": )" + std::to_string(heads) + R"(, "num_hidden_layers": )" + std::to_string(layers) +
         R"(, "vocab_size": 32000, "intermediate_size": null, "num_key_value_heads": null, "hidden_act": "silu",
    "max_position_embeddings": 8192, "tie_word_embeddings": false, "block_configs": [)" + blocks + "]}";
}

// Five kinds of layer and an identity: attention (8 query heads per KV head) + MLP (ffn_mult
// 2.625), MLP only (1.3), attention only (4 per KV head), a linear layer in place of attention + MLP
// (5.25), attention (16 per KV head) + a linear layer in place of the MLP, and neither.
const std::string kMixed = nas_config(R"(
    {"attention": {"n_heads_in_group": 8, "no_op": false, "replace_with_linear": false, "sparsify": null,
                   "num_sink_tokens": null, "window_length": null}, "ffn": {"ffn_mult": 2.625, "no_op": false}},
    {"attention": {"no_op": true}, "ffn": {"ffn_mult": 1.3}},
    {"attention": {"n_heads_in_group": 4}, "ffn": {"no_op": true}},
    {"attention": {"replace_with_linear": true}, "ffn": {"ffn_mult": 5.25}},
    {"attention": {"n_heads_in_group": 16}, "ffn": {"replace_with_linear": true}},
    {"attention": {"no_op": true}, "ffn": {"no_op": true}})", 6);

}  // namespace

// DeciLM's width: int(2·ffn_mult·hidden/3) rounded up to a multiple of 256 (2.625 → 1,792 exactly,
// 1.3 → 887 → 1,024, 5.25 → 3,584); KV heads = heads / n_heads_in_group; the identity layer is left
// out.
TEST(NemotronNas, ReadsEachLayersShape) {
  const ModelSpec m = load_config_text("nas-mixed", kMixed);
  ASSERT_EQ(m.layers, 5);
  EXPECT_TRUE(m.heterogeneous());
  const LayerBlock blocks[] = {LayerBlock::AttentionMlp, LayerBlock::Mlp, LayerBlock::Attention, LayerBlock::Mlp,
                               LayerBlock::Attention};
  const int kv[] = {2, 0, 4, 0, 1};
  const long long ffn[] = {1792, 1024, 0, 3584, 0};
  // One norm before each part a layer has; a linear replacement is a row-parallel part.
  const int parts[] = {2, 1, 1, 2, 2};
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(m.layer_block(i), blocks[i]);
    EXPECT_EQ(m.layer_kv_heads(i), kv[i]);
    EXPECT_EQ(m.layer_ffn(i), ffn[i]);
    EXPECT_EQ(m.layer_linear_mixer(i), i == 3);
    EXPECT_EQ(m.layer_linear_mlp(i), i == 4);
    EXPECT_EQ(m.layer_norms(i), parts[i]);
    EXPECT_EQ(m.layer_tp_regions(i), parts[i]);
  }
}

// Parameters layer by layer (hidden h = 1,024, head dim 64, gated MLPs, RMSNorm, no biases): q and
// o are h², K and V 2·h·64·kv, an MLP 3·h·f, a linear replacement h², a norm h.
TEST(NemotronNas, CountsEachLayersParameters) {
  const ModelSpec m = load_config_text("nas-mixed", kMixed);
  const double h = 1024, hd = 64;
  const auto attention = [&](double kv) { return 2 * h * h + 2 * h * hd * kv; };
  const auto mlp = [&](double f) { return 3 * h * f; };
  const double layers[] = {attention(2) + mlp(1792) + 2 * h, mlp(1024) + h, attention(4) + h,
                           h * h + mlp(3584) + 2 * h, attention(1) + h * h + 2 * h};
  double want = 2 * 32000 * h + h;  // embedding, untied LM head, final norm
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(workload::layer_params(m, i).total(), layers[i]) << i;
    want += layers[i];
  }
  EXPECT_DOUBLE_EQ(workload::count_params(m).total, want);
  // KV cache: K and V of 2 + 4 + 1 heads of 64, bf16.
  EXPECT_DOUBLE_EQ(workload::kv_bytes_per_token(m, core::Dtype::Bf16).base(), 2.0 * 64 * (2 + 4 + 1) * 2);
  EXPECT_DOUBLE_EQ(workload::kv_elements_per_token_layer(m, 0, 2), 2.0 * 64 * 1);
  EXPECT_DOUBLE_EQ(workload::kv_elements_per_token_layer(m, 4, 2), 2.0 * 64 * 1);  // one head, replicated
  EXPECT_DOUBLE_EQ(workload::kv_elements_per_token_layer(m, 1, 2), 0.0);
}

// A config whose every block is Llama-3.1-70B's layer (8 query heads per KV head, ffn_mult 5.25 →
// 28,672) is that model: the same parameters, FLOPs and KV cache.
TEST(NemotronNas, UniformBlocksAreTheirLlamaTwin) {
  std::string blocks;
  for (int i = 0; i < 80; ++i)
    blocks += std::string(i ? "," : "") + R"({"attention": {"n_heads_in_group": 8}, "ffn": {"ffn_mult": 5.25}})";
  const ModelSpec nas = load_config_text("nas-llama70", R"({"model_type": "nemotron-nas", "hidden_size": 8192,
    "num_attention_heads": 64, "num_hidden_layers": 80, "vocab_size": 128256, "max_position_embeddings": 131072,
    "rope_theta": 500000.0, "tie_word_embeddings": false, "block_configs": [)" + blocks + "]}");
  const ModelSpec llama = workload::load_model("llama3.1-70b", kNasModels);
  EXPECT_DOUBLE_EQ(workload::count_params(nas).total, workload::count_params(llama).total);
  EXPECT_DOUBLE_EQ(workload::kv_bytes_per_token(nas, core::Dtype::Bf16).base(),
                   workload::kv_bytes_per_token(llama, core::Dtype::Bf16).base());
  EXPECT_DOUBLE_EQ(workload::prefill_flops_per_token(nas, 4096), workload::prefill_flops_per_token(llama, 4096));
  EXPECT_DOUBLE_EQ(workload::train_flops_per_token(nas, 4096, workload::RecomputeKind::Full).hardware,
                   workload::train_flops_per_token(llama, 4096, workload::RecomputeKind::Full).hardware);
  EXPECT_EQ(nas.kv_heads, 8);
  EXPECT_EQ(nas.ffn, 28672);
}

// Tensor parallelism must split or replicate every layer's KV heads: 24 heads in groups of 3 and
// of 8 give 8 and 3 KV heads; tp 8 splits the first layer's 8 but neither divides nor is divided
// by the second's 3, and tp 3 the other way round.
TEST(NemotronNas, EveryLayersKvHeadsMeetTheTensorParallelism) {
  const ModelSpec m = load_config_text("nas-kv", nas_config(R"({"attention": {"n_heads_in_group": 3}, "ffn": {"ffn_mult": 1}},
    {"attention": {"n_heads_in_group": 8}, "ffn": {"ffn_mult": 1}})", 2, 24, 1536));
  EXPECT_EQ(workload::kv_heads_mismatching_tp(m, 8), 3);
  EXPECT_EQ(workload::kv_heads_mismatching_tp(m, 3), 8);
  EXPECT_EQ(workload::kv_heads_mismatching_tp(m, 1), 0);
  EXPECT_EQ(workload::kv_heads_mismatching_tp(m, 24), 0);  // both replicated
}

// Malformed block_configs name the field, the value and what was expected.
TEST(NemotronNas, BadBlockConfigsAreNamed) {
  const auto expect_error = [](const std::string& blocks, int layers, const std::string& field, const std::string& what) {
    const std::string e = config_text_error("nas-bad", nas_config(blocks, layers));
    EXPECT_NE(e.find(field), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  const std::string ok = R"({"attention": {"n_heads_in_group": 8}, "ffn": {"ffn_mult": 1}})";
  expect_error(ok, 2, "block_configs", "length differs from num_hidden_layers");
  expect_error(R"({"attention": {"n_heads_in_group": 3}, "ffn": {"ffn_mult": 1}})", 1,
               "block_configs[0].attention.n_heads_in_group", "does not divide num_attention_heads");
  expect_error(R"({"attention": {"n_heads_in_group": 8}, "ffn": {}})", 1, "block_configs[0].ffn.ffn_mult", "missing");
  expect_error(R"({"attention": {"n_heads_in_group": 8}, "ffn": {"ffn_mult": -2}})", 1, "block_configs[0].ffn.ffn_mult",
               "out of range");
  expect_error(R"({"attention": {"n_heads_in_group": 8, "window_length": 4096}, "ffn": {"ffn_mult": 1}})", 1,
               "block_configs[0].attention.window_length", "not supported");
  expect_error(R"({"attention": {"no_op": true, "replace_with_linear": true}, "ffn": {"ffn_mult": 1}})", 1,
               "block_configs[0].attention.replace_with_linear", "contradicts no_op");
  expect_error(R"({"attention": {"n_heads_in_group": 8}})", 1, "block_configs[0].ffn", "missing");
  expect_error(R"(7)", 1, "block_configs[0]", "wrong type");
  expect_error(R"({"attention": {"no_op": true}, "ffn": {"ffn_mult": 1}})", 1, "block_configs", "has no attention layer");
  EXPECT_NE(config_text_error("nas-none", R"({"model_type": "nemotron-nas", "hidden_size": 64, "num_attention_heads": 4,
    "num_hidden_layers": 1, "vocab_size": 100})").find("block_configs"), std::string::npos);
}
