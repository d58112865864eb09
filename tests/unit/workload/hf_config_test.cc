// Loader: family field names, derived shapes, and one test per diagnostic (with its text).

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "config_text.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;
using workload::AttnKind;
using workload::load_model;
using workload::MlpKind;
using workload::ModelSpec;
using workload::NormKind;
using workload::PosKind;

namespace {

const std::string kHfModels = std::string(XS_TESTDATA_DIR) + "/models";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

/// The InputError text of loading `path_or_id`, or "" when it loaded.
std::string load_error(const std::string& path_or_id, const std::string& dir = kHfModels) {
  try {
    load_model(path_or_id, dir);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST(HfConfig, ModelIdsAreTheSortedFileStems) {
  const auto ids = workload::model_ids(kHfModels);
  ASSERT_EQ(ids.size(), 76u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(ids.front(), "command-a");
}

TEST(HfConfig, LoadsByIdAndByPath) {
  const ModelSpec a = load_model("llama3.1-8b", kHfModels);
  const ModelSpec b = load_model(kHfModels + "/llama3.1-8b.json", kHfModels);
  EXPECT_EQ(a.id, "llama3.1-8b");
  EXPECT_EQ(b.id, "llama3.1-8b");
  EXPECT_EQ(a.hidden, b.hidden);
  EXPECT_EQ(a.family, "llama");
  EXPECT_EQ(a.head_dim, 4096 / 32);
  EXPECT_EQ(a.kv_heads, 8);
  EXPECT_EQ(a.attention, AttnKind::Gqa);
  EXPECT_EQ(a.mlp, MlpKind::Gated);
  EXPECT_EQ(a.norm, NormKind::RmsNorm);
  EXPECT_EQ(a.max_position, 131072);
}

TEST(HfConfig, Gpt2StyleNamesAndDefaults) {
  const ModelSpec m = load_model("gpt3-175b", kHfModels);
  EXPECT_EQ(m.hidden, 12288);
  EXPECT_EQ(m.layers, 96);
  EXPECT_EQ(m.ffn, 4 * 12288);
  EXPECT_EQ(m.position, PosKind::Learned);
  EXPECT_EQ(m.norm, NormKind::LayerNorm);
  EXPECT_EQ(m.mlp, MlpKind::Gelu);
  EXPECT_TRUE(m.attn_bias && m.mlp_bias && m.tied_embeddings);
  EXPECT_EQ(m.attention, AttnKind::Mha);
}

TEST(HfConfig, GptjIsParallelWithOneNormAndNoInnerSize) {
  const ModelSpec m = load_model("gpt-j-6b", kHfModels);
  EXPECT_EQ(m.ffn, 4 * 4096);  // n_inner: null → 4·n_embd
  EXPECT_TRUE(m.parallel_attn);
  EXPECT_EQ(m.norms_per_layer, 1);
  EXPECT_FALSE(m.attn_bias);
  EXPECT_TRUE(m.mlp_bias && m.lm_head_bias);
  EXPECT_FALSE(m.tied_embeddings);
}

TEST(HfConfig, MptUsesExpansionRatioAndNoBias) {
  const ModelSpec m = load_model("mpt-30b", kHfModels);
  EXPECT_EQ(m.hidden, 7168);
  EXPECT_EQ(m.heads, 56);
  EXPECT_EQ(m.ffn, 4 * 7168);
  EXPECT_FALSE(m.attn_bias || m.mlp_bias || m.norm_bias);
}

TEST(HfConfig, FalconNewDecoderArchitecture) {
  const ModelSpec m = load_model("falcon-180b", kHfModels);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 14848 / 232);
  EXPECT_TRUE(m.parallel_attn);
  EXPECT_EQ(m.norms_per_layer, 2);  // ln_attn and ln_mlp
  EXPECT_EQ(m.mlp, MlpKind::Gelu);
  EXPECT_TRUE(m.tied_embeddings);
}

TEST(HfConfig, NemotronSquaredReluAndExplicitHeadDim) {
  const ModelSpec m = load_model("nemotron4-340b", kHfModels);
  EXPECT_EQ(m.mlp, MlpKind::SquaredRelu);
  EXPECT_EQ(m.head_dim, 192);
  EXPECT_EQ(m.norm, NormKind::LayerNorm);
}

TEST(HfConfig, DeepseekV3MlaSharedExpertsAndFirstDenseLayers) {
  const ModelSpec m = load_model("deepseek-v3", kHfModels);
  EXPECT_EQ(m.attention, AttnKind::Mla);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.qk_head_dim(), 128 + 64);
  EXPECT_EQ(m.v_head_dim(), 128);
  EXPECT_EQ(m.moe.num_experts, 256);
  EXPECT_EQ(m.moe.experts_per_token, 8);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.first_dense_layers, 3);
  for (int i = 0; i < m.layers; ++i) EXPECT_EQ(m.layer_is_moe(i), i >= 3) << i;
}

TEST(HfConfig, GptOssAlternatingSlidingLayersSinksBiases) {
  const ModelSpec m = load_model("gpt-oss-120b", kHfModels);
  EXPECT_EQ(m.sliding_window, 128);
  ASSERT_EQ(m.layer_is_sliding.size(), 36u);
  for (int i = 0; i < m.layers; ++i) EXPECT_EQ(m.layer_sliding(i), i % 2 == 0) << i;
  EXPECT_EQ(m.layer_context(0, 4096), 128);
  EXPECT_EQ(m.layer_context(1, 4096), 4096);
  EXPECT_TRUE(m.attn_sinks && m.attn_bias && m.mlp_bias && m.moe.router_bias);
  EXPECT_EQ(m.moe.num_experts, 128);
  EXPECT_EQ(m.moe.experts_per_token, 4);
  EXPECT_EQ(m.head_dim, 64);
}

TEST(HfConfig, Qwen3MoeQkNormAndEveryLayerSparse) {
  const ModelSpec m = load_model("qwen3-30b-a3b", kHfModels);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_EQ(m.sliding_window, 0);  // use_sliding_window: false
  EXPECT_EQ(m.moe.expert_ffn, 768);
  for (int i = 0; i < m.layers; ++i) EXPECT_TRUE(m.layer_is_moe(i));
}

TEST(HfConfig, Qwen3MoeMlpOnlyLayersAndSparseStep) {
  const auto p = write_temp("qwen_step.json", R"({"model_type":"qwen3_moe","hidden_size":64,
    "num_hidden_layers":6,"num_attention_heads":4,"num_key_value_heads":2,"head_dim":16,
    "intermediate_size":128,"moe_intermediate_size":32,"num_experts":8,"num_experts_per_tok":2,
    "vocab_size":100,"decoder_sparse_step":2,"mlp_only_layers":[3]})");
  const ModelSpec m = load_model(p, kHfModels);
  // Sparse when (i+1) % step == 0 and i is not listed: layers 1 and 5 (3 is forced dense).
  const bool expect[] = {false, true, false, false, false, true};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(m.layer_is_moe(i), expect[i]) << i;
}

TEST(HfConfig, MistralSlidingWindowAppliesToEveryLayer) {
  const auto p = write_temp("mistral.json", R"({"model_type":"mistral","hidden_size":64,
    "num_hidden_layers":3,"num_attention_heads":4,"num_key_value_heads":2,
    "intermediate_size":128,"vocab_size":100,"sliding_window":16})");
  const ModelSpec m = load_model(p, kHfModels);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.layer_context(i, 100), 16);
}

// ---- Diagnostics: one test per message. ----

TEST(HfConfigDiagnostics, UnknownIdListsIdsAndClosest) {
  const std::string e = load_error("llama3.1-8", kHfModels);
  EXPECT_TRUE(contains(e, "unknown model 'llama3.1-8'")) << e;
  EXPECT_TRUE(contains(e, "did you mean 'llama3.1-8b'?")) << e;
  EXPECT_TRUE(contains(e, "one of: command-a, command-r, dbrx, deepseek-v2-lite, deepseek-v3")) << e;
}

TEST(HfConfigDiagnostics, MissingFileNamesThePath) {
  const std::string e = load_error("/nonexistent/dir/config.json");
  EXPECT_TRUE(contains(e, "cannot open model file '/nonexistent/dir/config.json'")) << e;
}

TEST(HfConfigDiagnostics, WrongTypeNamesTheField) {
  const auto p = write_temp("wrong_type.json", R"({"model_type":"llama","hidden_size":"4096",
    "num_hidden_layers":2,"num_attention_heads":4,"intermediate_size":128,"vocab_size":100})");
  const std::string e = load_error(p);
  EXPECT_TRUE(contains(e, "hidden_size: wrong type (got '4096'; expected an integer)")) << e;
  EXPECT_TRUE(contains(e, p)) << e;  // the file is named
}

TEST(HfConfigDiagnostics, WrongTypesAreAllReportedAtOnce) {
  const auto p = write_temp("wrong_types.json", R"({"model_type":"llama","hidden_size":64.5,
    "num_hidden_layers":"two","num_attention_heads":4,"intermediate_size":128,"vocab_size":100,
    "tie_word_embeddings":"yes"})");
  const std::string e = load_error(p);
  EXPECT_TRUE(contains(e, "hidden_size: wrong type (got '64.5'; expected an integer)")) << e;
  EXPECT_TRUE(contains(e, "num_hidden_layers: wrong type (got 'two'; expected an integer)")) << e;
  EXPECT_TRUE(contains(e, "tie_word_embeddings: wrong type (got 'yes'; expected true or false)"))
      << e;
}

TEST(HfConfigDiagnostics, UnsupportedModelTypeListsSupported) {
  const auto p = write_temp("unsupported.json", R"({"model_type":"rwkv","hidden_size":64})");
  const std::string e = load_error(p);
  EXPECT_TRUE(contains(e, "model_type: unsupported model_type (got 'rwkv'")) << e;
  EXPECT_TRUE(contains(e, "expected one of: cohere, cohere2, dbrx, deepseek_v2, deepseek_v3, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2")) << e;
}

TEST(HfConfigDiagnostics, MissingModelType) {
  const auto p = write_temp("no_type.json", R"({"hidden_size":64})");
  EXPECT_TRUE(contains(load_error(p), "model_type: missing required field"));
}

TEST(HfConfigDiagnostics, MissingRequiredField) {
  const auto p = write_temp("no_hidden.json", R"({"model_type":"llama","num_hidden_layers":2,
    "num_attention_heads":4,"intermediate_size":128,"vocab_size":100})");
  EXPECT_TRUE(contains(load_error(p), "hidden_size: missing required field")) << load_error(p);
}

TEST(HfConfigDiagnostics, AliasesMustAgree) {
  const auto p = write_temp("alias.json", R"({"model_type":"gpt2","n_embd":64,"hidden_size":128,
    "n_layer":2,"n_head":4,"vocab_size":100})");
  EXPECT_TRUE(contains(load_error(p), "hidden_size: disagrees with 'n_embd' (got '128'; expected 64)"))
      << load_error(p);
}

TEST(HfConfigDiagnostics, KvHeadsMustDivideHeads) {
  const auto p = write_temp("kv.json", R"({"model_type":"llama","hidden_size":64,
    "num_hidden_layers":2,"num_attention_heads":4,"num_key_value_heads":3,
    "intermediate_size":128,"vocab_size":100})");
  EXPECT_TRUE(contains(load_error(p), "num_key_value_heads: does not divide num_attention_heads"))
      << load_error(p);
}

TEST(HfConfigDiagnostics, MalformedJsonIsAnInputError) {
  const auto p = write_temp("malformed.json", "{\"model_type\": \"llama\",,}");
  EXPECT_TRUE(contains(load_error(p), "malformed JSON")) << load_error(p);
}

namespace {

/// A llama config.json with `fields` (JSON members) in place of the base's members of those keys.
std::string llama_with(const std::string& name, const std::string& fields) {
  return write_temp(name + ".json", "{" + xpusim::test::members_with({{"model_type", "\"llama\""}, {"hidden_size", "4096"},
                                                                      {"intermediate_size", "14336"},
                                                                      {"max_position_embeddings", "8192"},
                                                                      {"num_attention_heads", "32"},
                                                                      {"num_hidden_layers", "32"},
                                                                      {"num_key_value_heads", "8"},
                                                                      {"vocab_size", "128256"}},
                                                                     fields) +
                                        "}");
}

TEST(HfConfigLimits, SizesAboveTheLimitsAreNamedWithTheValue) {
  const struct { const char* field; const char* value; } cases[] = {
      {"num_hidden_layers", "1000000000"},      {"num_hidden_layers", "4294967328"},  // 2^32 + 32 is not 32
      {"hidden_size", "1000000000000"},         {"num_attention_heads", "2147483648"},
      {"vocab_size", "1099511627776"},          {"intermediate_size", "1125899906842624"},
      {"max_position_embeddings", "4611686018427387904"}, {"head_dim", "100000000"},
  };
  for (const auto& c : cases) {
    const std::string msg = load_error(llama_with(std::string("lim_") + c.field, "\"" + std::string(c.field) + "\": " + c.value));
    EXPECT_TRUE(contains(msg, std::string(c.field) + ": exceeds the limit (got '" + c.value + "'")) << msg;
  }
}

TEST(HfConfigLimits, NumbersOutsideInt64AreNotCastBlindly) {
  for (const char* v : {"1e30", "1e999", "-1e999", "18446744073709551615"})
    EXPECT_NE(load_error(llama_with("range", std::string("\"num_hidden_layers\": ") + v)), "") << v;
}

TEST(HfConfigLimits, ZeroOrNegativeSizesAreRejected) {
  for (const char* f : {"\"head_dim\": 0", "\"head_dim\": -128", "\"max_position_embeddings\": 0",
                        "\"max_position_embeddings\": -1", "\"vocab_size\": -5"})
    EXPECT_NE(load_error(llama_with("neg", f)), "") << f;
}

TEST(HfConfigLimits, AMoeFamilyWithNoExpertsIsRejected) {
  const std::string mixtral = load_error(llama_with("moe0", R"("model_type": "mixtral", "num_local_experts": 0,
                                                             "num_experts_per_tok": 2)"));
  EXPECT_TRUE(contains(mixtral, "num_local_experts")) << mixtral;
  const std::string qwen = load_error(llama_with("qmoe0", R"("model_type": "qwen3_moe", "num_experts": 0,
                                                          "num_experts_per_tok": 2, "moe_intermediate_size": 768)"));
  EXPECT_TRUE(contains(qwen, "num_experts")) << qwen;
}

}  // namespace

// An id with a variant suffix that names the weights, not the shape (-instruct, -chat, -base,
// -hf, -it), reads the shipped model and says so; an id that is no variant of a shipped model is
// still unknown, named as given.
TEST(HfConfig, AVariantSuffixReadsTheShippedModelAndSaysSo) {
  const ModelSpec base = load_model("llama3.1-8b", kHfModels);
  const ModelSpec v = load_model("llama3.1-8b-instruct", kHfModels);
  EXPECT_EQ(v.id, "llama3.1-8b");
  EXPECT_EQ(v.hidden, base.hidden);
  EXPECT_EQ(v.layers, base.layers);
  ASSERT_FALSE(v.approximations.empty());
  EXPECT_EQ(v.approximations.front(), "'llama3.1-8b-instruct' read as the shipped 'llama3.1-8b': a variant of the same "
                                      "architecture (its suffix names the weights, not the shape)");
  EXPECT_TRUE(base.approximations.empty());
  EXPECT_EQ(load_model("mixtral-8x7b-instruct-hf", kHfModels).id, "mixtral-8x7b");  // suffixes stripped in turn
  const std::string e = load_error("llama3.1-9b-instruct", kHfModels);
  EXPECT_TRUE(contains(e, "unknown model 'llama3.1-9b-instruct'")) << e;
  EXPECT_TRUE(contains(load_error("instruct", kHfModels), "unknown model 'instruct'"));
}

namespace {

// quantization_config.modules_to_not_convert: the modules a quantized checkpoint keeps in bf16.
TEST(HfConfigQuantization, GptOssKeepsAttentionRouterEmbeddingAndHeadInBf16) {
  const ModelSpec m = load_model("gpt-oss-120b", kHfModels);
  EXPECT_TRUE(m.unquantized.attention);
  EXPECT_TRUE(m.unquantized.router);
  EXPECT_TRUE(m.unquantized.embedding);
  EXPECT_TRUE(m.unquantized.lm_head);
  // DeepSeek-V3's block-FP8 checkpoint lists none: every linear layer takes the plan's format.
  EXPECT_FALSE(load_model("deepseek-v3", kHfModels).unquantized.any());
  EXPECT_FALSE(load_model("llama3.1-8b", kHfModels).unquantized.any());
}

TEST(HfConfigQuantization, UnknownModulesAreStatedAndNonStringsRefused) {
  const ModelSpec m = load_model(llama_with("unq_some", R"("quantization_config": {"quant_method": "fp8",
      "modules_to_not_convert": ["lm_head", "model.layers.3.self_attn", "vision_tower.encoder.self_attn"]})"), kHfModels);
  EXPECT_TRUE(m.unquantized.lm_head);
  EXPECT_FALSE(m.unquantized.attention);  // one layer's, or a vision tower's, is not every layer's
  bool stated = false;
  for (const auto& note : m.approximations)
    stated = stated || (contains(note, "model.layers.3.self_attn, vision_tower.encoder.self_attn") &&
                        contains(note, "not modelled apart"));
  EXPECT_TRUE(stated);
  const std::string e = load_error(llama_with("unq_bad", R"("quantization_config": {"modules_to_not_convert": ["lm_head", 7]})"));
  EXPECT_TRUE(contains(e, "quantization_config.modules_to_not_convert")) << e;
  EXPECT_TRUE(contains(e, "not a string")) << e;
}

}  // namespace
