// Families read from real Hugging Face configs (the files as their model repositories publish
// them, trimmed of tokenizer and dtype keys): each is checked against its model card's parameter
// count and the layer layout its HF modelling code builds.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "config_text.h"

using namespace xpusim;
using workload::count_params;
using workload::ModelSpec;

namespace {

const std::string kFamilyModels = std::string(XS_TESTDATA_DIR) + "/models";

ModelSpec load_text(const std::string& name, const std::string& json) { return test::load_config_text(name, json); }

std::string config_error(const std::string& name, const std::string& json) { return test::config_text_error(name, json); }

// Qwen/Qwen2.5-7B config.json; model card: 7.61 B parameters, 6.53 B without embeddings.
const char* kQwen25_7b = R"({"architectures": ["Qwen2ForCausalLM"], "hidden_act": "silu", "hidden_size": 3584,
  "intermediate_size": 18944, "max_position_embeddings": 131072, "max_window_layers": 28, "model_type": "qwen2",
  "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": false, "use_sliding_window": false,
  "vocab_size": 152064})";

// google/gemma-2-9b config.json; model card: 9.24 B parameters (embeddings tied).
const char* kGemma2_9b = R"({"architectures": ["Gemma2ForCausalLM"], "attn_logit_softcapping": 50.0,
  "final_logit_softcapping": 30.0, "head_dim": 256, "hidden_act": "gelu_pytorch_tanh",
  "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 3584, "intermediate_size": 14336,
  "max_position_embeddings": 8192, "model_type": "gemma2", "num_attention_heads": 16, "num_hidden_layers": 42,
  "num_key_value_heads": 8, "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
  "sliding_window": 4096, "sliding_window_size": 4096, "vocab_size": 256000})";

// microsoft/Phi-3-mini-4k-instruct config.json; model card: 3.8 B (3.82 B in the HF viewer).
const char* kPhi3Mini = R"({"architectures": ["Phi3ForCausalLM"], "hidden_act": "silu", "hidden_size": 3072,
  "intermediate_size": 8192, "max_position_embeddings": 4096, "model_type": "phi3", "num_attention_heads": 32,
  "num_hidden_layers": 32, "num_key_value_heads": 32, "original_max_position_embeddings": 4096,
  "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 10000.0, "sliding_window": 2047,
  "tie_word_embeddings": false, "vocab_size": 32064})";

// deepseek-ai/DeepSeek-V2-Lite config.json; model card: 15.7 B total, 2.4 B activated
// (without the embedding; q_lora_rank null: queries are projected at full rank).
const char* kDeepseekV2Lite = R"({"architectures": ["DeepseekV2ForCausalLM"], "first_k_dense_replace": 1,
  "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 10944, "kv_lora_rank": 512,
  "max_position_embeddings": 163840, "model_type": "deepseek_v2", "moe_intermediate_size": 1408,
  "moe_layer_freq": 1, "n_group": 1, "n_routed_experts": 64, "n_shared_experts": 2, "norm_topk_prob": false,
  "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
  "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "routed_scaling_factor": 1.0,
  "scoring_func": "softmax", "tie_word_embeddings": false, "topk_group": 1, "topk_method": "greedy",
  "v_head_dim": 128, "vocab_size": 102400})";

// Qwen/Qwen1.5-MoE-A2.7B config.json; model card: 14.3 B in total, 2.7 B activated.
const char* kQwen15MoE = R"({"architectures": ["Qwen2MoeForCausalLM"], "decoder_sparse_step": 1,
  "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 5632, "max_position_embeddings": 8192,
  "model_type": "qwen2_moe", "moe_intermediate_size": 1408, "norm_topk_prob": false, "num_attention_heads": 16,
  "num_experts": 60, "num_experts_per_tok": 4, "num_hidden_layers": 24, "num_key_value_heads": 16,
  "shared_expert_intermediate_size": 5632, "sliding_window": 32768, "tie_word_embeddings": false,
  "use_sliding_window": false, "vocab_size": 151936})";

// meta-llama/Llama-4-Maverick-17B-128E config.json (the language model under text_config; the
// vision encoder is not modelled); model card: 17 B active, 400 B total.
const char* kLlama4Maverick = R"({"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
  "text_config": {"attention_chunk_size": 8192, "head_dim": 128, "hidden_act": "silu", "hidden_size": 5120,
    "interleave_moe_layer_step": 2, "intermediate_size": 8192, "intermediate_size_mlp": 16384,
    "max_position_embeddings": 1048576, "model_type": "llama4_text", "num_attention_heads": 40,
    "num_experts_per_tok": 1, "num_hidden_layers": 48, "num_key_value_heads": 8, "num_local_experts": 128,
    "rope_theta": 500000.0, "tie_word_embeddings": false, "use_qk_norm": false, "vocab_size": 202048},
  "vision_config": {"hidden_size": 1408, "num_hidden_layers": 34, "model_type": "llama4_vision_model"}})";

// CohereForAI/c4ai-command-r-v01 config.json; model card: 35 B parameters (embeddings tied).
const char* kCommandR = R"({"architectures": ["CohereForCausalLM"], "attention_bias": false, "bos_token_id": 5,
  "eos_token_id": 255001, "hidden_act": "silu", "hidden_size": 8192, "initializer_range": 0.02,
  "intermediate_size": 22528, "layer_norm_eps": 1e-05, "logit_scale": 0.0625, "max_position_embeddings": 8192,
  "model_type": "cohere", "num_attention_heads": 64, "num_hidden_layers": 40, "num_key_value_heads": 64,
  "pad_token_id": 0, "rope_theta": 8000000.0, "tie_word_embeddings": true, "use_cache": true,
  "use_qk_norm": false, "vocab_size": 256000})";

// CohereForAI/c4ai-command-a-03-2025 config.json; model card: 111 B parameters.
const char* kCommandA = R"({"architectures": ["Cohere2ForCausalLM"], "attention_bias": false, "head_dim": 128,
  "hidden_act": "silu", "hidden_size": 12288, "intermediate_size": 36864, "layer_norm_eps": 1e-05,
  "logit_scale": 0.25, "max_position_embeddings": 131072, "model_type": "cohere2", "num_attention_heads": 96,
  "num_hidden_layers": 64, "num_key_value_heads": 8, "rope_theta": 50000, "sliding_window": 4096,
  "sliding_window_pattern": 4, "tie_word_embeddings": true, "vocab_size": 256000})";

// databricks/dbrx-base config.json; model card: 132 B total, 36 B active.
const char* kDbrx = R"({"architectures": ["DbrxForCausalLM"], "attn_config": {"clip_qkv": 8, "kv_n_heads": 8,
  "rope_theta": 500000}, "d_model": 6144, "emb_pdrop": 0.0, "ffn_config": {"ffn_hidden_size": 10752,
  "moe_jitter_eps": 0, "moe_loss_weight": 0.05, "moe_num_experts": 16, "moe_top_k": 4},
  "initializer_range": 0.02, "max_seq_len": 32768, "model_type": "dbrx", "n_heads": 48, "n_layers": 40,
  "output_router_logits": false, "resid_pdrop": 0.0, "router_aux_loss_coef": 0.05,
  "tie_word_embeddings": false, "vocab_size": 100352})";

}  // namespace

TEST(HfFamilies, Qwen2HasQkvBiasesAndNoWindowWithoutUseSlidingWindow) {
  const ModelSpec m = load_text("qwen2.5-7b", kQwen25_7b);
  const auto p = count_params(m);
  EXPECT_NEAR(p.total / 7.61e9, 1.0, 0.005) << p.total;
  // Without the two embedding matrices: 6.53 B.
  EXPECT_NEAR((p.total - 2.0 * 152064 * 3584) / 6.53e9, 1.0, 0.005);
  EXPECT_TRUE(m.attn_bias);
  EXPECT_EQ(m.layer_context(0, 200000), 200000);  // sliding_window is inert here
}

TEST(HfFamilies, Gemma2TiesEmbeddingsAndWindowsEveryOtherLayer) {
  const ModelSpec m = load_text("gemma-2-9b", kGemma2_9b);
  EXPECT_NEAR(count_params(m).total / 9.24e9, 1.0, 0.005) << count_params(m).total;
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.mlp, workload::MlpKind::Gated);  // GeGLU: three matrices
  // HF Gemma2: layer i is sliding when (i + 1) is odd.
  EXPECT_EQ(m.layer_context(0, 10000), 4096);
  EXPECT_EQ(m.layer_context(1, 10000), 10000);
  EXPECT_EQ(m.layer_context(40, 10000), 4096);
}

TEST(HfFamilies, Phi3WindowsEveryLayer) {
  const ModelSpec m = load_text("phi-3-mini", kPhi3Mini);
  EXPECT_NEAR(count_params(m).total / 3.82e9, 1.0, 0.005) << count_params(m).total;
  for (int i : {0, 31}) EXPECT_EQ(m.layer_context(i, 4096), 2047);
}

TEST(HfFamilies, DeepseekV2LiteFullRankQueriesAndGreedyRouting) {
  const ModelSpec m = load_text("deepseek-v2-lite", kDeepseekV2Lite);
  const auto p = count_params(m);
  EXPECT_NEAR(p.total / 15.7e9, 1.0, 0.005) << p.total;
  // Activated without the input embedding: 2.4 B (the card rounds; within 3 %).
  EXPECT_NEAR((p.active - 102400.0 * 2048) / 2.4e9, 1.0, 0.03) << p.active;
  EXPECT_EQ(m.attention, workload::AttnKind::Mla);
  EXPECT_EQ(m.mla.q_lora_rank, 0);
  EXPECT_FALSE(m.moe.router_bias);  // greedy top-k, no correction bias
  EXPECT_FALSE(m.layer_is_moe(0));
  EXPECT_TRUE(m.layer_is_moe(1));
  EXPECT_TRUE(m.layer_is_moe(26));
}

TEST(HfFamilies, Qwen2MoeAddsOneSharedExpert) {
  const ModelSpec m = load_text("qwen1.5-moe-a2.7b", kQwen15MoE);
  const auto p = count_params(m);
  EXPECT_NEAR(p.total / 14.3e9, 1.0, 0.005) << p.total;
  EXPECT_NEAR(p.active / 2.7e9, 1.0, 0.01) << p.active;
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.shared_ffn, 5632);
  EXPECT_EQ(m.moe.expert_ffn, 1408);
}

TEST(HfFamilies, Llama4ReadsItsTextConfigInterleavesExpertsAndChunksAttention) {
  const ModelSpec m = load_text("llama-4-maverick", kLlama4Maverick);
  EXPECT_EQ(m.family, "llama4_text");
  const auto p = count_params(m);
  EXPECT_NEAR(p.total / 400e9, 1.0, 0.005) << p.total;
  EXPECT_NEAR(p.active / 17e9, 1.0, 0.015) << p.active;
  // interleave_moe_layer_step 2: layers 1, 3, …, 47 route; the others are dense MLPs of
  // intermediate_size_mlp; each MoE layer adds one shared expert of intermediate_size.
  for (int i = 0; i < 48; ++i) EXPECT_EQ(m.layer_is_moe(i), i % 2 == 1) << i;
  EXPECT_EQ(m.ffn, 16384);
  EXPECT_EQ(m.moe.expert_ffn, 8192);
  EXPECT_EQ(m.moe.shared_experts, 1);
  // Chunked attention on the RoPE layers (all but every 4th), as a window of one chunk.
  EXPECT_EQ(m.layer_context(0, 100000), 8192);
  EXPECT_EQ(m.layer_context(3, 100000), 100000);
  EXPECT_EQ(m.layer_context(2, 4000), 4000);
  // Both approximations are stated wherever the model runs (model show, train, serve, validate).
  ASSERT_EQ(m.approximations.size(), 2u);
  EXPECT_NE(m.approximations[0].find("the vision encoder is not modelled"), std::string::npos);
  EXPECT_NE(m.approximations[1].find("chunked attention (attention_chunk_size 8192)"), std::string::npos);
  EXPECT_TRUE(load_text("qwen2.5-7b", kQwen25_7b).approximations.empty());
}

TEST(HfFamilies, Gemma3WrapperWindowsFiveLayersOfSix) {
  const ModelSpec m = load_text("gemma3-small", R"({"model_type": "gemma3", "text_config": {
    "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 12, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 16, "sliding_window": 32, "vocab_size": 100}})");
  EXPECT_EQ(m.family, "gemma3_text");
  EXPECT_TRUE(m.qk_norm);
  EXPECT_TRUE(m.tied_embeddings);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(m.layer_context(i, 100), (i + 1) % 6 == 0 ? 100 : 32) << i;
}

TEST(HfFamilies, AWrapperWithoutItsTextConfigIsNamed) {
  const std::string e = config_error("llama4-no-text", R"({"model_type": "llama4", "hidden_size": 64})");
  EXPECT_NE(e.find("text_config: missing required field"), std::string::npos) << e;
  const std::string nested = config_error("llama4-nested", R"({"model_type": "llama4",
    "text_config": {"model_type": "gemma3", "hidden_size": 64}})");
  EXPECT_NE(nested.find("text_config.model_type: a multimodal wrapper inside text_config"), std::string::npos) << nested;
}

TEST(HfFamilies, ALlama4NoRopeListOfTheWrongLengthIsNamed) {
  const std::string e = config_error("llama4-bad-rope", R"({"model_type": "llama4_text", "hidden_size": 64,
    "intermediate_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4, "vocab_size": 100,
    "num_local_experts": 4, "attention_chunk_size": 16, "no_rope_layers": [1, 1, 0]})");
  EXPECT_NE(e.find("no_rope_layers: length differs from num_hidden_layers (got '3'; expected 4)"), std::string::npos)
      << e;
}

// Command R: a parallel block (attention and MLP read one bias-free LayerNorm of the same input),
// tied embeddings: 40·(4·8192² + 3·8192·22,528 + 8192) + 256,000·8192 + 8192 = 34.98 B.
TEST(HfFamilies, CohereIsAParallelBlockWithOneBiasFreeLayerNorm) {
  const ModelSpec m = load_text("command-r", kCommandR);
  EXPECT_DOUBLE_EQ(count_params(m).total, 34980831232.0);
  EXPECT_TRUE(m.parallel_attn);
  EXPECT_EQ(m.norms_per_layer, 1);
  EXPECT_FALSE(m.norm_bias);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.qk_norm);
}

// Command A: three layers of four attend in a 4,096-token window, every fourth globally; 111 B.
TEST(HfFamilies, Cohere2WindowsThreeLayersOfFour) {
  const ModelSpec m = load_text("command-a", kCommandA);
  EXPECT_NEAR(count_params(m).total / 111e9, 1.0, 0.005) << count_params(m).total;
  for (int i : {0, 1, 2, 4}) EXPECT_EQ(m.layer_context(i, 65536), 4096) << i;
  for (int i : {3, 63}) EXPECT_EQ(m.layer_context(i, 65536), 65536) << i;
}

// DBRX: 16 GLU experts of 10,752, top 4, every layer; GQA with 8 KV heads under attn_config.
// Total 40·(2·6144² + 2·6144·1024 + 16·3·6144·10,752 + 6144·16 + 2·6144) + 2·100,352·6144 + 6144
// = 131.6 B, active (4 experts) 36.5 B: the card's 132 B and 36 B.
TEST(HfFamilies, DbrxReadsItsNestedAttentionAndExpertConfigs) {
  const ModelSpec m = load_text("dbrx", kDbrx);
  const auto p = count_params(m);
  EXPECT_DOUBLE_EQ(p.total, 131596523520.0);
  EXPECT_NEAR(p.active / 36.47e9, 1.0, 0.002) << p.active;
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.moe.num_experts, 16);
  EXPECT_EQ(m.moe.experts_per_token, 4);
  for (int i : {0, 39}) EXPECT_TRUE(m.layer_is_moe(i));
  EXPECT_NE(config_error("dbrx-no-ffn", R"({"model_type": "dbrx", "d_model": 64, "n_heads": 4, "n_layers": 2,
    "vocab_size": 100, "attn_config": {"kv_n_heads": 2}})").find("ffn_config"), std::string::npos);
}

// GLM-4.5-Air (glm4_moe): GQA with biased q/k/v (96 heads of 128, 8 KV heads), a dense first
// layer and 45 layers of 128 experts of 1408 (top 8) with one shared expert, untied. Block by
// block: embeddings 2·151,552·4096; attention 46·(2·4096·12,288 + 2·4096·1024 + 12,288 + 2·1024
// + 4096 biases); norms 46·2·4096 + 4096; dense MLP 3·4096·10,944; experts
// 45·(129·3·4096·1408 + 4096·128 + 128) = 106,852,251,264: the card's 106 B (12 B active without
// the embeddings). The MTP layer (num_nextn_predict_layers 1) is not counted.
TEST(HfFamilies, Glm45AirIsGroupedQueryAttentionBeforeDeepseekStyleExperts) {
  const ModelSpec m = workload::load_model("glm-4.5-air", kFamilyModels);
  const auto p = count_params(m);
  EXPECT_DOUBLE_EQ(p.total, 106852251264.0);
  EXPECT_NEAR((p.active - 2.0 * 151552 * 4096) / 12e9, 1.0, 0.02) << p.active;
  EXPECT_EQ(m.attention, workload::AttnKind::Gqa);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_TRUE(m.attn_bias);
  EXPECT_FALSE(m.layer_is_moe(0));
  for (int i : {1, 45}) EXPECT_TRUE(m.layer_is_moe(i)) << i;
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_TRUE(m.moe.router_bias);  // e_score_correction_bias
  EXPECT_EQ(m.mtp_modules, 1);
}

// GLM-4.5: three dense layers, q/k norms (use_qk_norm); 352.8 B without its MTP layer, the
// card's 355 B with it, 32 B active.
TEST(HfFamilies, Glm45ReadsUseQkNormAndThreeDenseLayers) {
  const ModelSpec m = workload::load_model("glm-4.5", kFamilyModels);
  const auto p = count_params(m);
  EXPECT_NEAR(p.total / 352.8e9, 1.0, 0.001) << p.total;
  EXPECT_NEAR((p.active - 2.0 * 151552 * 5120) / 32e9, 1.0, 0.03) << p.active;
  EXPECT_TRUE(m.qk_norm);
  for (int i : {0, 2}) EXPECT_FALSE(m.layer_is_moe(i)) << i;
  EXPECT_TRUE(m.layer_is_moe(3));
}

// Kimi K2 is DeepSeek-V3's architecture (DeepseekV3ForCausalLM) under model_type kimi_k2, with
// 64 heads and 384 experts: 1.03 T total, 32 B active (the card's 1 T and 32 B).
TEST(HfFamilies, KimiK2IsDeepseekV3WithMoreExpertsAndHalfTheHeads) {
  const ModelSpec m = workload::load_model("kimi-k2", kFamilyModels);
  const auto p = count_params(m);
  EXPECT_NEAR(p.total / 1.0264e12, 1.0, 0.001) << p.total;
  EXPECT_NEAR(p.active / 32.9e9, 1.0, 0.01) << p.active;
  EXPECT_EQ(m.attention, workload::AttnKind::Mla);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.moe.num_experts, 384);
  EXPECT_EQ(m.moe.first_dense_layers, 1);
  EXPECT_EQ(m.mtp_modules, 0);
}

// Qwen/Qwen3-VL-30B-A3B-Instruct's config.json, trimmed of its vision_config: the language model
// under text_config (qwen3_vl_moe_text) is Qwen3-30B-A3B's shape, so its count is that model's
// (the card's 31 B adds the vision encoder, which is not modelled); tie_word_embeddings sits at the
// top level. A small dense Qwen3-VL whose top level ties the embeddings counts its LM head once.
TEST(HfFamilies, Qwen3VlReadsItsLanguageModelAsQwen3) {
  const ModelSpec vl = load_text("qwen3-vl-30b-a3b", R"({"architectures": ["Qwen3VLMoeForConditionalGeneration"],
    "image_token_id": 151655, "model_type": "qwen3_vl_moe", "tie_word_embeddings": false,
    "text_config": {"attention_bias": false, "decoder_sparse_step": 1, "head_dim": 128, "hidden_act": "silu",
      "hidden_size": 2048, "intermediate_size": 6144, "max_position_embeddings": 262144, "mlp_only_layers": [],
      "model_type": "qwen3_vl_moe_text", "moe_intermediate_size": 768, "norm_topk_prob": true,
      "num_attention_heads": 32, "num_experts": 128, "num_experts_per_tok": 8, "num_hidden_layers": 48,
      "num_key_value_heads": 4, "rms_norm_eps": 1e-06, "rope_theta": 5000000, "vocab_size": 151936},
    "video_token_id": 151656})");
  const ModelSpec text = workload::load_model("qwen3-30b-a3b", kFamilyModels);
  EXPECT_EQ(vl.family, "qwen3_moe");
  EXPECT_TRUE(vl.qk_norm);
  EXPECT_DOUBLE_EQ(count_params(vl).total, count_params(text).total);
  EXPECT_FALSE(vl.approximations.empty());  // the vision encoder is left out, and said
  const char* dense = R"({"model_type": "qwen3_vl", "tie_word_embeddings": true, "text_config": {
    "model_type": "qwen3_vl_text", "hidden_size": 256, "intermediate_size": 512, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 64, "num_hidden_layers": 2, "vocab_size": 1000}})";
  const ModelSpec small = load_text("qwen3-vl-small", dense);
  EXPECT_EQ(small.family, "qwen3");
  EXPECT_TRUE(small.tied_embeddings);
  EXPECT_DOUBLE_EQ(count_params(small).lm_head, 0.0);
}

// A DeepSeek-style config whose dense layers are all its layers declares experts it never uses:
// a typo, named with the layer count.
TEST(HfFamilies, DenseLayersCoveringTheModelAreNamed) {
  const std::string e = config_error("dense-everywhere", R"({"model_type": "deepseek_v3", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "intermediate_size": 128,
    "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "kv_lora_rank": 16,
    "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8, "first_k_dense_replace": 2})");
  EXPECT_NE(e.find("first_k_dense_replace"), std::string::npos) << e;
  EXPECT_NE(e.find("no mixture-of-experts layer"), std::string::npos) << e;
}

// GPT-NeoX (model_type gpt_neox): the shipped GPT-NeoX-20B and Pythia-6.9B files. Pythia's paper
// (arXiv 2304.01373, Table 1) gives 6,857,302,016 parameters for Pythia-6.9B; per layer
// 4h² + 4h (fused qkv and dense, with biases) + 2·h·4h + 4h + h (the MLP with biases) + 2·2h
// (two LayerNorms), plus the untied embedding and embed_out (2·V·h) and the final LayerNorm.
TEST(HfFamilies, GptNeoxCountsItsBiasesTwoNormsAndAParallelResidual) {
  const ModelSpec p = workload::load_model("pythia-6.9b", kFamilyModels);
  EXPECT_EQ(p.family, "gpt_neox");
  const long long h = 4096, v = 50432, layers = 32;
  const long long per_layer = 4 * h * h + 4 * h + 2 * h * 4 * h + 4 * h + h + 2 * 2 * h;
  EXPECT_EQ(per_layer * layers + 2 * v * h + 2 * h, 6857302016LL);
  EXPECT_EQ(count_params(p).total, 6857302016.0);
  EXPECT_TRUE(p.parallel_attn);
  EXPECT_EQ(p.norms_per_layer, 2);
  EXPECT_TRUE(p.attn_bias && p.attn_out_bias && p.mlp_bias);
  EXPECT_FALSE(p.tied_embeddings);
  // GPT-NeoX-20B: the same rule at h 6,144, 44 layers (20.55 B; the card's 20 B).
  EXPECT_NEAR(count_params(workload::load_model("gpt-neox-20b", kFamilyModels)).total / 20.5546e9, 1.0, 1e-4);
  // use_parallel_residual false: attention then MLP, each closing a tensor-parallel region.
  const ModelSpec seq = load_text("neox-sequential", R"({"model_type": "gpt_neox", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "use_parallel_residual": false})");
  EXPECT_FALSE(seq.parallel_attn);
}
