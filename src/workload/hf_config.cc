// Hugging Face config.json → ModelSpec for every supported family.
//
// HF configs carry many keys we do not need (tokenizer ids, rope scaling, dropout...), so the
// reader is non-strict; every key we *do* read is type-checked and reported with its name.
// Families name the same quantity differently (n_embd / d_model / hidden_size); reconstructed
// files carry both the native and the llama-style name, and the two must agree.

#include "xpusim/workload/hf_config.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <set>

#include "xpusim/config/document.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"

namespace xpusim::workload {

namespace fs = std::filesystem;
using config::FieldReader;
using config::Json;

namespace {

const std::vector<std::string>& supported_types() {
  static const std::vector<std::string> v = {
      "cohere",      "cohere2",     "dbrx",
      "deepseek_v2", "deepseek_v3", "falcon", "gemma",   "gemma2",  "gemma3",   "gemma3_text", "gpt2",
      "gpt_oss",     "gptj",        "gpt_neox", "llama",  "llama4",  "llama4_text", "mistral", "mistral3", "mixtral",
      "mpt",         "nemotron",    "nemotron_h", "phi3", "qwen2",   "qwen2_moe", "qwen3",  "qwen3_moe",
      "qwen3_next", "jamba",      "mamba",  "falcon_mamba", "mamba2", "glm4_moe", "kimi_k2", "deepseek_v32",
      "qwen3_vl", "qwen3_vl_moe", "nemotron-nas"};
  return v;
}

/// Multimodal configs whose language model sits under `text_config` (the vision encoder is not
/// modelled), with the text model's type when `text_config` does not state it.
const std::string* text_model_type(const std::string& wrapper) {
  static const std::map<std::string, std::string> m = {
      {"gemma3", "gemma3_text"}, {"llama4", "llama4_text"}, {"mistral3", "mistral"},
      {"qwen3_vl", "qwen3_vl_text"}, {"qwen3_vl_moe", "qwen3_vl_moe_text"}};
  const auto it = m.find(wrapper);
  return it == m.end() ? nullptr : &it->second;
}

/// The architecture a multimodal model's language model shares with a text-only family: Qwen3-VL's
/// is Qwen3's (dense or MoE; its interleaved multimodal RoPE changes no cost). Other types are their own.
std::string text_architecture(const std::string& text_type) {
  if (text_type == "qwen3_vl_text") return "qwen3";
  if (text_type == "qwen3_vl_moe_text") return "qwen3_moe";
  return text_type;
}

bool is_gemma(const std::string& t) { return t == "gemma" || t == "gemma2" || t == "gemma3_text"; }
bool is_qwen(const std::string& t) { return t == "qwen2" || t == "qwen2_moe" || t == "qwen3" || t == "qwen3_moe"; }
bool is_cohere(const std::string& t) { return t == "cohere" || t == "cohere2"; }
/// Kimi K2 is DeepSeek-V3's architecture under its own model_type (DeepseekV3ForCausalLM);
/// DeepSeek-V3.2 adds sparse attention to it.
bool is_deepseek(const std::string& t) {
  return t == "deepseek_v2" || t == "deepseek_v3" || t == "kimi_k2" || t == "deepseek_v32";
}

void require_positive(core::Diagnostics& d, const std::string& field, long long v) {
  if (v <= 0) d.error(field, "must be positive", std::to_string(v), "an integer > 0");
}

/// The largest value accepted for an integer field of a config.json (config/limits.h).
long long field_limit(const std::string& key) {
  namespace L = core::limits;
  static const std::pair<std::vector<std::string>, long long> kTable[] = {
      {{"num_hidden_layers", "n_layer", "n_layers", "first_k_dense_replace", "decoder_sparse_step",
        "moe_layer_freq"}, L::kLayers},
      {{"num_attention_heads", "n_head", "n_heads", "num_key_value_heads", "num_kv_heads", "kv_n_heads",
        "index_n_heads"}, L::kHeads},
      {{"num_local_experts", "num_experts", "n_routed_experts", "n_shared_experts", "num_experts_per_tok",
        "experts_per_token", "n_group", "topk_group"}, L::kExperts},
      {{"vocab_size"}, L::kVocab},
      {{"intermediate_size", "n_inner", "ffn_hidden_size", "moe_intermediate_size", "intermediate_size_mlp",
        "shared_expert_intermediate_size"}, L::kIntermediate},
      {{"interleave_moe_layer_step", "sliding_window_pattern"}, L::kLayers},
      {{"max_position_embeddings", "n_positions", "max_seq_len", "sliding_window", "attention_chunk_size",
        "index_topk"},
       L::kPositions}};
  for (const auto& [keys, max] : kTable)
    for (const auto& k : keys)
      if (key == k) return max;
  return L::kHidden;  // hidden_size, head_dim, LoRA ranks, expansion_ratio
}

/// The smallest value accepted when the field is given: 1 for sizes where 0 means nothing
/// (an explicit head_dim, the routed experts of a MoE family, the context length).
long long field_min(const std::string& key) {
  for (const char* k : {"head_dim", "num_local_experts", "num_experts", "n_routed_experts", "max_position_embeddings",
                        "n_positions", "max_seq_len", "interleave_moe_layer_step", "sliding_window_pattern"})
    if (key == k) return 1;
  return 0;
}

/// An integer field within [field_min(key), field_limit(key)]; out-of-range values are
/// diagnosed (naming the field, the value and the range) and read as 0, so no later product or
/// narrowing sees them.
long long bounded_integer(FieldReader& r, const std::string& key) {
  const long long v = r.integer(key);
  const long long lo = field_min(key), hi = field_limit(key);
  if (v < lo || v > hi) {
    r.diagnostics().error(r.path_of(key), v < lo ? "below the smallest accepted value" : "exceeds the limit",
                          std::to_string(v), "an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return 0;
  }
  return v;
}

/// Reads the first present key of `names`; every other present alias must agree with it.
long long int_alias(FieldReader& r, std::initializer_list<const char*> names, long long fallback,
                    bool required) {
  const char* first = nullptr;
  long long value = fallback;
  for (const char* n : names) {
    if (!r.has(n)) {
      r.ignore(n);
      continue;
    }
    const long long v = bounded_integer(r, n);
    if (!first) {
      first = n;
      value = v;
    } else if (v != value) {
      r.diagnostics().error(r.path_of(n), "disagrees with '" + std::string(first) + "'",
                            std::to_string(v), std::to_string(value));
    }
  }
  if (!first && required) {
    std::vector<std::string> all(names.begin(), names.end());
    r.diagnostics().error(r.path_of(all.front()), "missing required field", "",
                          "an integer" + (all.size() > 1 ? " (also accepted: " +
                                                               core::join({all.begin() + 1, all.end()}) + ")"
                                                         : std::string()));
  }
  return value;
}

MlpKind mlp_from_act(const std::string& act, MlpKind gated_default) {
  if (act == "relu2" || act == "squared_relu" || act == "squared-relu") return MlpKind::SquaredRelu;
  if (act.rfind("gelu", 0) == 0 || act == "relu") return MlpKind::Gelu;
  return gated_default;  // silu / swiglu: gated (3 matrices) in the llama-style families
}

/// llama, mistral, mixtral, qwen2/3(_moe), deepseek_v2/v3, kimi_k2, glm4_moe, gpt_oss, nemotron,
/// gemma(2, 3), phi3, llama4. Shape, norms, activation and biases shared by every llama-style family.
void read_llama_shape(FieldReader& r, ModelSpec& m) {
  const std::string& t = m.family;
  m.hidden = int_alias(r, {"hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"num_attention_heads"}, 0, true));
  m.kv_heads = static_cast<int>(int_alias(r, {"num_key_value_heads"}, m.heads, false));
  m.vocab = int_alias(r, {"vocab_size"}, 0, true);
  m.max_position = int_alias(r, {"max_position_embeddings"}, 2048, false);
  // gpt-oss has only experts; Nemotron-NAS sizes each layer's MLP in block_configs.
  m.ffn = int_alias(r, {"intermediate_size"}, 0, t != "gpt_oss" && t != "nemotron-nas");
  m.head_dim = r.has("head_dim") ? bounded_integer(r, "head_dim") : 0;
  // GemmaConfig and CohereConfig tie by default.
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", is_gemma(t) || is_cohere(t));
  // Qwen2's q/k/v projections carry biases (no config key); gpt-oss biases everything.
  m.attn_bias = r.boolean_or("attention_bias", t == "gpt_oss" || t == "qwen2" || t == "qwen2_moe");
  // Qwen2's and GLM-4.5's attention_bias covers q, k and v; the output projection has none.
  m.attn_out_bias = m.attn_bias && t != "qwen2" && t != "qwen2_moe" && t != "glm4_moe";
  m.mlp_bias = r.boolean_or("mlp_bias", t == "gpt_oss");
  m.norm = t == "nemotron" || is_cohere(t) ? NormKind::LayerNorm : NormKind::RmsNorm;
  // Gemma 2 and 3 normalise before and after attention and the MLP; Cohere's attention and MLP
  // read one LayerNorm (without a bias) of the same input, in parallel.
  m.norms_per_layer = t == "gemma2" || t == "gemma3_text" ? 4 : is_cohere(t) ? 1 : 2;
  if (is_cohere(t)) {
    m.parallel_attn = true;
    m.norm_bias = false;
    r.ignore("logit_scale");  // a scalar on the logits
  }
  m.position = PosKind::Rope;
  r.ignore("hidden_activation");  // gemma: a gated GeLU, 3 matrices like SwiGLU
  const std::string act = r.str_or("hidden_act", t == "nemotron" ? "relu2" : "silu");
  m.mlp = t == "nemotron" ? mlp_from_act(act, MlpKind::SquaredRelu) : MlpKind::Gated;
  m.qk_norm = t == "qwen3" || t == "qwen3_moe" || t == "qwen3_next" || t == "gemma3_text" ||
              ((is_cohere(t) || t == "glm4_moe") && r.boolean_or("use_qk_norm", false));
}

/// layer_types: one "sliding_attention" or "full_attention" per layer.
std::vector<bool> read_layer_types(FieldReader& r, const Json& layer_types) {
  std::vector<bool> sliding;
  for (size_t i = 0; i < layer_types.size(); ++i) {
    const Json& e = layer_types[i];
    if (!e.is_string()) {
      r.diagnostics().error(r.path_of("layer_types") + "[" + std::to_string(i) + "]", "wrong type",
                            config::brief(e), "\"sliding_attention\" or \"full_attention\"");
      continue;
    }
    const std::string s = e.get<std::string>();
    if (s != "sliding_attention" && s != "full_attention") {
      r.diagnostics().error(r.path_of("layer_types") + "[" + std::to_string(i) + "]",
                            "unknown layer type", s, "\"sliding_attention\" or \"full_attention\"");
    }
    sliding.push_back(s == "sliding_attention");
  }
  return sliding;
}

/// The windowed layers when the config lists no layer_types: gpt-oss and gemma2 alternate
/// (even layers windowed), gemma3 windows all but every sliding_window_pattern-th layer, the
/// others (mistral, mixtral, phi3, qwen with use_sliding_window) window every layer.
std::vector<bool> default_sliding_layers(FieldReader& r, const ModelSpec& m) {
  const std::string& t = m.family;
  // Cohere 2 (Command A) windows three layers of four: every fourth attends globally.
  const long long pattern = t == "gemma3_text" ? int_alias(r, {"sliding_window_pattern"}, 6, false)
                            : t == "cohere2"   ? int_alias(r, {"sliding_window_pattern"}, 4, false)
                                               : 0;
  std::vector<bool> sliding;
  for (int i = 0; i < m.layers; ++i) {
    if (t == "gpt_oss" || t == "gemma2") sliding.push_back(i % 2 == 0);
    else if (pattern > 0) sliding.push_back((i + 1) % pattern != 0);
    else sliding.push_back(true);
  }
  return sliding;
}

/// Sliding windows: per layer_types when the config lists them, else default_sliding_layers;
/// qwen only with use_sliding_window.
void read_sliding_windows(FieldReader& r, ModelSpec& m) {
  const std::string& t = m.family;
  long long window = 0;
  if (r.has("sliding_window")) {
    window = bounded_integer(r, "sliding_window");
    if (window < 1)
      r.diagnostics().error(r.path_of("sliding_window"), "a sliding window of no tokens", std::to_string(window),
                            "a window >= 1 token, or null for full attention");
  } else {
    r.ignore("sliding_window");
  }
  if (is_qwen(t)) {
    if (!r.boolean_or("use_sliding_window", false)) window = 0;
    r.ignore("max_window_layers");
  }
  if (const Json* lt = r.array("layer_types", false)) {
    std::vector<bool> sliding = read_layer_types(r, *lt);
    if (window > 0) m.layer_is_sliding = sliding;
  } else if (window > 0) {
    m.layer_is_sliding = default_sliding_layers(r, m);
  }
  m.sliding_window = m.layer_is_sliding.empty() ? 0 : window;
}

/// Llama 4's chunked local attention: a query sees the keys of its own chunk of
/// attention_chunk_size tokens, on the layers with RoPE (no_rope_layers[i] = 1; by default all
/// but every 4th). Modelled as a sliding window of one chunk: the same keys up to one chunk of
/// context, at most twice the keys beyond it (docs/models.md).
void read_chunked_attention(FieldReader& r, ModelSpec& m) {
  const long long chunk = int_alias(r, {"attention_chunk_size"}, 0, false);
  if (chunk <= 0) return;
  std::vector<bool> rope;
  const Json* a = r.array("no_rope_layers", false);
  if (a && !a->empty()) {
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_number_integer()) {
        r.diagnostics().error(r.path_of("no_rope_layers") + "[" + std::to_string(i) + "]", "wrong type",
                              config::brief((*a)[i]), "0 or 1");
        continue;
      }
      rope.push_back((*a)[i].get<long long>() != 0);
    }
    if (static_cast<int>(rope.size()) != m.layers) {
      r.diagnostics().error(r.path_of("no_rope_layers"), "length differs from num_hidden_layers",
                            std::to_string(a->size()), std::to_string(m.layers));
      return;
    }
  } else {  // HF Llama4TextConfig's default when the list is absent or empty
    for (int i = 0; i < m.layers; ++i) rope.push_back((i + 1) % 4 != 0);
  }
  m.layer_is_sliding = rope;
  m.sliding_window = chunk;
  m.approximations.push_back("chunked attention (attention_chunk_size " + std::to_string(chunk) +
                             ") modelled as a sliding window of one chunk: at most twice the keys beyond one chunk");
}

void read_mixtral_style_moe(FieldReader& r, ModelSpec& m) {
  const std::string& t = m.family;
  m.moe.num_experts = static_cast<int>(int_alias(r, {"num_local_experts"}, 0, true));
  m.moe.experts_per_token =
      static_cast<int>(int_alias(r, {"num_experts_per_tok", "experts_per_token"}, 0, true));
  if (t == "gpt_oss") {
    m.moe.expert_ffn = int_alias(r, {"intermediate_size"}, 0, true);
    m.ffn = m.moe.expert_ffn;
    m.moe.router_bias = true;
  } else {
    m.moe.expert_ffn = m.ffn;
  }
}

/// qwen3_moe and qwen2_moe (which adds one gated shared expert of
/// shared_expert_intermediate_size).
void read_qwen_moe(FieldReader& r, ModelSpec& m) {
  m.moe.num_experts = static_cast<int>(int_alias(r, {"num_experts"}, 0, true));
  m.moe.experts_per_token = static_cast<int>(int_alias(r, {"num_experts_per_tok"}, 0, true));
  m.moe.expert_ffn = int_alias(r, {"moe_intermediate_size"}, 0, true);
  if (m.family == "qwen2_moe" || m.family == "qwen3_next") {
    m.moe.shared_ffn = int_alias(r, {"shared_expert_intermediate_size"}, 0, false);
    m.moe.shared_experts = m.moe.shared_ffn > 0 ? 1 : 0;
  }
  const long long step = int_alias(r, {"decoder_sparse_step"}, 1, false);
  std::set<long long> dense;
  if (const Json* a = r.array("mlp_only_layers", false)) {
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_number_integer()) {
        r.diagnostics().error(r.path_of("mlp_only_layers") + "[" + std::to_string(i) + "]",
                              "wrong type", config::brief((*a)[i]), "an integer");
        continue;
      }
      dense.insert((*a)[i].get<long long>());
    }
  }
  m.moe.layer_moe.resize(static_cast<size_t>(std::max(0, m.layers)));
  for (int i = 0; i < m.layers; ++i) {
    m.moe.layer_moe[i] = !dense.count(i) && step > 0 && (i + 1) % step == 0;
  }
  m.moe.layer_freq = static_cast<int>(step);
}

/// DeepSeek-style experts (deepseek_v2/v3, kimi_k2, glm4_moe): n_routed_experts of
/// moe_intermediate_size, n_shared_experts beside them, dense MLPs in the first_k_dense_replace
/// layers and then every moe_layer_freq-th layer a mixture of experts.
void read_deepseek_moe(FieldReader& r, ModelSpec& m) {
  m.moe.num_experts = static_cast<int>(int_alias(r, {"n_routed_experts"}, 0, true));
  m.moe.experts_per_token = static_cast<int>(int_alias(r, {"num_experts_per_tok"}, 0, true));
  m.moe.expert_ffn = int_alias(r, {"moe_intermediate_size"}, 0, true);
  m.moe.shared_experts = static_cast<int>(int_alias(r, {"n_shared_experts"}, 0, false));
  // DeepseekV3MLP(intermediate_size = moe_intermediate_size × n_shared_experts): one fused
  // shared expert; we keep shared_experts = n and shared_ffn = one expert's size.
  m.moe.shared_ffn = m.moe.expert_ffn;
  m.moe.first_dense_layers =
      static_cast<int>(int_alias(r, {"first_k_dense_replace"}, 0, false));
  m.moe.layer_freq = static_cast<int>(int_alias(r, {"moe_layer_freq"}, 1, false));
  m.moe.router_bias = r.str_or("topk_method", "noaux_tc") == "noaux_tc";  // e_score_correction_bias
  m.moe.groups = static_cast<int>(int_alias(r, {"n_group"}, 0, false));
  m.moe.group_limit = static_cast<int>(int_alias(r, {"topk_group"}, 0, false));
  m.moe.layer_moe.resize(static_cast<size_t>(std::max(0, m.layers)));
  for (int i = 0; i < m.layers; ++i) {
    m.moe.layer_moe[i] = m.moe.num_experts > 0 && i >= m.moe.first_dense_layers &&
                         m.moe.layer_freq > 0 && i % m.moe.layer_freq == 0;
  }
  if (m.moe.num_experts > 0) require_positive(r.diagnostics(), r.path_of("moe_layer_freq"), m.moe.layer_freq);
  if (m.moe.groups > 0 && m.moe.num_experts % m.moe.groups != 0)
    r.diagnostics().error(r.path_of("n_group"), "does not divide the routed experts", std::to_string(m.moe.groups),
                          "a divisor of n_routed_experts (" + std::to_string(m.moe.num_experts) + ")");
  if (m.moe.groups > 0 && m.moe.group_limit > m.moe.groups)
    r.diagnostics().error(r.path_of("topk_group"), "more groups than there are", std::to_string(m.moe.group_limit),
                          "at most n_group (" + std::to_string(m.moe.groups) + ")");
  if (m.moe.num_experts > 0 && m.layers > 0 && m.moe.first_dense_layers >= m.layers)
    r.diagnostics().error(r.path_of("first_k_dense_replace"), "leaves no mixture-of-experts layer",
                          std::to_string(m.moe.first_dense_layers),
                          "fewer than num_hidden_layers (" + std::to_string(m.layers) + ")");
}

/// Multi-head latent attention (deepseek_v2/v3, kimi_k2).
void read_mla(FieldReader& r, ModelSpec& m) {
  m.attention = AttnKind::Mla;
  m.mla.q_lora_rank = int_alias(r, {"q_lora_rank"}, 0, false);
  m.mla.kv_lora_rank = int_alias(r, {"kv_lora_rank"}, 0, true);
  m.mla.qk_nope_head_dim = int_alias(r, {"qk_nope_head_dim"}, 0, true);
  m.mla.qk_rope_head_dim = int_alias(r, {"qk_rope_head_dim"}, 0, true);
  m.mla.v_head_dim = int_alias(r, {"v_head_dim"}, 0, true);
  m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
  m.kv_heads = m.heads;
}

/// DeepSeek Sparse Attention (deepseek_v32): the lightning indexer's heads and head size, and the
/// keys each query keeps.
void read_sparse_attention(FieldReader& r, ModelSpec& m) {
  SparseAttentionSpec& a = m.dsa;
  a.topk = int_alias(r, {"index_topk"}, 0, true);
  a.index_heads = int_alias(r, {"index_n_heads"}, 0, true);
  a.index_head_dim = int_alias(r, {"index_head_dim"}, 0, true);
  for (const auto& [key, v] : {std::pair<const char*, long long>{"index_topk", a.topk},
                               {"index_n_heads", a.index_heads}, {"index_head_dim", a.index_head_dim}})
    if (r.has(key)) require_positive(r.diagnostics(), r.path_of(key), v);
}

/// Llama 4: routed experts and one shared expert, each of intermediate_size; dense layers of
/// intermediate_size_mlp; layer i is MoE iff it is in moe_layers, or else iff
/// (i + 1) mod interleave_moe_layer_step = 0 (HF Llama4TextConfig).
void read_llama4_moe(FieldReader& r, ModelSpec& m) {
  m.moe.num_experts = static_cast<int>(int_alias(r, {"num_local_experts"}, 0, true));
  m.moe.experts_per_token = static_cast<int>(int_alias(r, {"num_experts_per_tok"}, 1, false));
  m.moe.expert_ffn = m.ffn;
  m.moe.shared_experts = 1;
  m.moe.shared_ffn = m.ffn;
  m.ffn = int_alias(r, {"intermediate_size_mlp"}, m.ffn, false);
  const long long step = int_alias(r, {"interleave_moe_layer_step"}, 1, false);
  m.moe.layer_freq = static_cast<int>(step);
  m.moe.layer_moe.assign(static_cast<size_t>(std::max(0, m.layers)), false);
  if (const Json* a = r.array("moe_layers", false)) {
    for (size_t i = 0; i < a->size(); ++i) {
      const Json& e = (*a)[i];
      if (!e.is_number_integer() || e.get<long long>() < 0 || e.get<long long>() >= m.layers) {
        r.diagnostics().error(r.path_of("moe_layers") + "[" + std::to_string(i) + "]", "not a layer index",
                              config::brief(e), "an integer from 0 to " + std::to_string(m.layers - 1));
        continue;
      }
      m.moe.layer_moe[static_cast<size_t>(e.get<long long>())] = true;
    }
    return;
  }
  for (int i = 0; i < m.layers; ++i) m.moe.layer_moe[static_cast<size_t>(i)] = step > 0 && (i + 1) % step == 0;
}

/// Qwen3-Next: gated DeltaNet layers with every full_attention_interval-th layer (default 4) a
/// gated attention layer (or as layer_types lists them: "linear_attention", "full_attention"),
/// each followed by the MoE; partial RoPE on the attention layers.
void read_qwen3_next_layers(FieldReader& r, ModelSpec& m) {
  LinearAttentionSpec& la = m.linear;
  la.key_heads = int_alias(r, {"linear_num_key_heads"}, 0, true);
  la.value_heads = int_alias(r, {"linear_num_value_heads"}, 0, true);
  la.key_dim = int_alias(r, {"linear_key_head_dim"}, 0, true);
  la.value_dim = int_alias(r, {"linear_value_head_dim"}, 0, true);
  la.conv_kernel = int_alias(r, {"linear_conv_kernel_dim"}, 4, false);
  for (const auto& [key, v] : {std::pair<const char*, long long>{"linear_num_key_heads", la.key_heads},
                               {"linear_num_value_heads", la.value_heads}, {"linear_key_head_dim", la.key_dim},
                               {"linear_value_head_dim", la.value_dim}, {"linear_conv_kernel_dim", la.conv_kernel}})
    if (r.has(key)) require_positive(r.diagnostics(), r.path_of(key), v);
  if (la.key_heads > 0 && la.value_heads % la.key_heads != 0)
    r.diagnostics().error(r.path_of("linear_num_key_heads"), "does not divide linear_num_value_heads",
                          std::to_string(la.key_heads), "a divisor of " + std::to_string(la.value_heads));
  m.gated_attention = true;
  r.ignore("partial_rotary_factor");  // RoPE on a quarter of the head: elementwise, not counted apart
  std::vector<bool> full;
  if (const Json* lt = r.array("layer_types", false)) {
    for (size_t i = 0; i < lt->size(); ++i) {
      const Json& e = (*lt)[i];
      const std::string s = e.is_string() ? e.get<std::string>() : "";
      if (s != "linear_attention" && s != "full_attention")
        r.diagnostics().error(r.path_of("layer_types") + "[" + std::to_string(i) + "]", "unknown layer type",
                              config::brief(e), "\"linear_attention\" or \"full_attention\"");
      full.push_back(s == "full_attention");
    }
  } else {
    const long long interval = int_alias(r, {"full_attention_interval"}, 4, false);
    if (interval <= 0) require_positive(r.diagnostics(), r.path_of("full_attention_interval"), interval);
    for (int i = 0; i < m.layers; ++i) full.push_back(interval > 0 && (i + 1) % interval == 0);
  }
  if (static_cast<int>(full.size()) != m.layers) {
    r.diagnostics().error(r.path_of("layer_types"), "length differs from num_hidden_layers", std::to_string(full.size()),
                          std::to_string(m.layers));
    return;
  }
  for (bool f : full) m.layer_blocks.push_back(f ? LayerBlock::AttentionMlp : LayerBlock::LinearAttentionMlp);
  if (m.attention_layers() == 0)
    r.diagnostics().error(r.path_of("layer_types"), "has no full_attention layer", std::to_string(m.layers) + " layers",
                          "at least one attention layer");
}

void read_llama_style(FieldReader& r, ModelSpec& m) {
  const std::string& t = m.family;
  read_llama_shape(r, m);
  if (t == "llama4_text") read_chunked_attention(r, m);
  else if (t == "qwen3_next") read_qwen3_next_layers(r, m);
  else read_sliding_windows(r, m);
  if (t == "gpt_oss") m.attn_sinks = true;
  // Mixture of experts (and, for deepseek_v2/v3 and kimi_k2, multi-head latent attention).
  if (t == "mixtral" || t == "gpt_oss") {
    read_mixtral_style_moe(r, m);
  } else if (t == "qwen3_moe" || t == "qwen2_moe" || t == "qwen3_next") {
    read_qwen_moe(r, m);
  } else if (is_deepseek(t)) {
    read_deepseek_moe(r, m);
    read_mla(r, m);
    if (t == "deepseek_v32") read_sparse_attention(r, m);
  } else if (t == "glm4_moe") {
    // GLM-4.5: grouped-query attention with RoPE on partial_rotary_factor of each head
    // (elementwise, not counted apart) before DeepSeek-style experts.
    r.ignore("partial_rotary_factor");
    read_deepseek_moe(r, m);
  } else if (t == "llama4_text") {
    read_llama4_moe(r, m);
  }
  m.mtp_modules = static_cast<int>(int_alias(r, {"num_nextn_predict_layers"}, 0, false));
}

/// DeciLM's MLP width for an ffn_mult (_ffn_mult_to_intermediate_size): int(2·ffn_mult·hidden/3)
/// rounded up to a multiple of 256.
long long nas_ffn_width(double ffn_mult, long long hidden) {
  constexpr long long kMultiple = 256;
  const auto f = static_cast<long long>(2.0 * ffn_mult * static_cast<double>(hidden) / 3.0);
  return (f + kMultiple - 1) / kMultiple * kMultiple;
}

/// One part (attention or ffn) of a Nemotron-NAS block config: no_op, replace_with_linear, or the
/// part itself; the options this model does not cost (sparsify, sink tokens, a window) must be
/// absent or null.
enum class NasPart { Full, NoOp, Linear };
NasPart read_nas_part(FieldReader& p, const Json& part, std::initializer_list<const char*> unsupported) {
  const bool no_op = p.boolean_or("no_op", false), linear = p.boolean_or("replace_with_linear", false);
  if (no_op && linear)
    p.diagnostics().error(p.path_of("replace_with_linear"), "contradicts no_op", "true", "at most one of no_op and replace_with_linear");
  for (const char* key : unsupported) {
    p.ignore(key);
    if (p.has(key))
      p.diagnostics().error(p.path_of(key), "not supported", config::brief(part.at(key)),
                            "null (xpusim does not model this Nemotron-NAS option)");
  }
  return no_op ? NasPart::NoOp : linear ? NasPart::Linear : NasPart::Full;
}

/// KV heads of a Nemotron-NAS attention: heads / n_heads_in_group, which must divide them (0 after
/// a diagnostic).
int read_nas_kv_heads(FieldReader& a, const Json& attn, int heads) {
  const bool integer = a.has("n_heads_in_group") && attn.at("n_heads_in_group").is_number_integer();
  const long long group = a.integer("n_heads_in_group");  // a missing or non-integer one is diagnosed here
  if (!integer) return 0;
  if (group <= 0 || heads <= 0 || heads % group != 0) {
    a.diagnostics().error(a.path_of("n_heads_in_group"), "does not divide num_attention_heads", std::to_string(group),
                          "a positive divisor of " + std::to_string(heads));
    return 0;
  }
  return static_cast<int>(heads / group);
}

/// MLP width of a Nemotron-NAS ffn from its ffn_mult (0 after a diagnostic).
long long read_nas_ffn(FieldReader& f, const Json& ffn, long long hidden) {
  const bool number = f.has("ffn_mult") && ffn.at("ffn_mult").is_number();
  const double mult = f.number("ffn_mult");  // a missing or non-numeric one is diagnosed here
  if (!number) return 0;
  if (!(mult > 0.0) || mult > 1e3) {
    f.diagnostics().error(f.path_of("ffn_mult"), "out of range", config::brief(ffn.at("ffn_mult")), "a number in (0, 1000]");
    return 0;
  }
  return nas_ffn_width(mult, hidden);
}

/// One layer of block_configs: its shape, and whether it holds anything (a layer whose attention
/// and MLP are both no_op is the identity).
bool read_nas_block(FieldReader& b, const ModelSpec& m, LayerShape& shape) {
  const Json* attn = b.object("attention", true);
  const Json* ffn = b.object("ffn", true);
  if (!attn || !ffn) return false;
  FieldReader a(*attn, b.path_of("attention"), b.diagnostics(), false);
  FieldReader f(*ffn, b.path_of("ffn"), b.diagnostics(), false);
  const NasPart ap = read_nas_part(a, *attn, {"sparsify", "num_sink_tokens", "window_length"});
  const NasPart fp = read_nas_part(f, *ffn, {"sparsify"});
  if (ap == NasPart::Full) shape.kv_heads = read_nas_kv_heads(a, *attn, m.heads);
  else a.ignore("n_heads_in_group");
  if (fp == NasPart::Full) shape.ffn = read_nas_ffn(f, *ffn, m.hidden);
  else f.ignore("ffn_mult");
  shape.linear_mixer = ap == NasPart::Linear;
  shape.linear_mlp = fp == NasPart::Linear;
  return ap != NasPart::NoOp || fp != NasPart::NoOp;
}

LayerBlock nas_block_kind(const LayerShape& s) {
  const bool attention = s.kv_heads > 0, mlp = s.ffn > 0;
  return attention && mlp ? LayerBlock::AttentionMlp
         : attention      ? LayerBlock::Attention
         : mlp            ? LayerBlock::Mlp
                          : LayerBlock::Linear;
}

/// Nemotron-NAS (DeciLM: Llama-3.1-Nemotron-51B, Llama-3.3-Nemotron-Super-49B,
/// Llama-3.1-Nemotron-Ultra-253B): a Llama whose layers a neural architecture search reshaped.
/// block_configs gives each layer's attention (n_heads_in_group query heads per KV head, no_op or
/// replace_with_linear) and MLP (ffn_mult, no_op or replace_with_linear). A layer with neither part
/// is the identity and is left out.
void read_nemotron_nas(FieldReader& r, ModelSpec& m) {
  read_llama_shape(r, m);
  const Json* blocks = r.array("block_configs", true);
  if (!blocks) return;
  if (static_cast<int>(blocks->size()) != m.layers) {
    r.diagnostics().error(r.path_of("block_configs"), "length differs from num_hidden_layers",
                          std::to_string(blocks->size()), std::to_string(m.layers));
    return;
  }
  std::vector<LayerShape> shapes;
  for (size_t i = 0; i < blocks->size(); ++i) {
    const std::string where = r.path_of("block_configs") + "[" + std::to_string(i) + "]";
    if (!(*blocks)[i].is_object()) {
      r.diagnostics().error(where, "wrong type", config::brief((*blocks)[i]), "an object with attention and ffn");
      continue;
    }
    FieldReader b((*blocks)[i], where, r.diagnostics(), false);
    LayerShape shape;
    if (read_nas_block(b, m, shape)) shapes.push_back(shape);
  }
  if (!r.diagnostics().empty()) return;
  if (std::none_of(shapes.begin(), shapes.end(), [](const LayerShape& s) { return s.kv_heads > 0; })) {
    r.diagnostics().error(r.path_of("block_configs"), "has no attention layer", std::to_string(blocks->size()) + " blocks",
                          "at least one block whose attention is not no_op or replace_with_linear");
    return;
  }
  m.layers = static_cast<int>(shapes.size());
  m.layer_blocks.clear();
  for (const LayerShape& s : shapes) m.layer_blocks.push_back(nas_block_kind(s));
  m.layer_shapes = std::move(shapes);
  // The model-wide values describe its widest layers (messages, reports); layer_kv_heads(i) and
  // layer_ffn(i) are what the costs read.
  m.kv_heads = m.heads;
  int max_kv = 0;
  for (const LayerShape& s : m.layer_shapes) {
    max_kv = std::max(max_kv, s.kv_heads);
    m.ffn = std::max(m.ffn, s.ffn);
  }
  if (max_kv > 0) m.kv_heads = max_kv;
}

void read_gpt2(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"n_embd", "hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"n_layer", "num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"n_head", "num_attention_heads"}, 0, true));
  m.kv_heads = static_cast<int>(int_alias(r, {"num_key_value_heads"}, m.heads, false));
  m.ffn = int_alias(r, {"n_inner", "intermediate_size"}, 4 * m.hidden, false);
  m.vocab = int_alias(r, {"vocab_size"}, 50257, false);
  m.max_position = int_alias(r, {"n_positions", "max_position_embeddings"}, 1024, false);
  r.ignore("n_ctx");
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
  m.mlp = mlp_from_act(r.str_or("activation_function", "gelu_new"), MlpKind::Gelu);
  m.norm = NormKind::LayerNorm;
  m.position = PosKind::Learned;
  m.attn_bias = m.attn_out_bias = m.mlp_bias = true;
}

void read_gptj(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"n_embd", "hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"n_layer", "num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"n_head", "num_attention_heads"}, 0, true));
  m.kv_heads = m.heads;
  m.ffn = int_alias(r, {"n_inner", "intermediate_size"}, 4 * m.hidden, false);
  m.vocab = int_alias(r, {"vocab_size"}, 50400, false);
  m.max_position = int_alias(r, {"n_positions", "max_position_embeddings"}, 2048, false);
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.mlp = mlp_from_act(r.str_or("activation_function", "gelu_new"), MlpKind::Gelu);
  m.norm = NormKind::LayerNorm;
  m.position = PosKind::Rope;  // partial rotary (rotary_dim)
  m.attn_bias = false;         // q/k/v/out_proj have no bias
  m.mlp_bias = true;           // fc_in / fc_out do
  m.lm_head_bias = true;
  m.parallel_attn = true;
  m.norms_per_layer = 1;       // ln_1 feeds both attention and MLP
}

/// GPT-NeoX (EleutherAI: GPT-NeoX-20B, Pythia): fused query_key_value and its output dense with
/// biases (attention_bias, default true), dense_h_to_4h / dense_4h_to_h with biases, two
/// LayerNorms per layer (input and post-attention) under a parallel residual by default
/// (use_parallel_residual), partial rotary (rotary_pct: no cost of its own), untied embed_out
/// without a bias.
void read_gpt_neox(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"num_attention_heads"}, 0, true));
  m.kv_heads = m.heads;
  m.ffn = int_alias(r, {"intermediate_size"}, 4 * m.hidden, false);
  m.vocab = int_alias(r, {"vocab_size"}, 0, true);
  m.max_position = int_alias(r, {"max_position_embeddings"}, 2048, false);
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.mlp = mlp_from_act(r.str_or("hidden_act", "gelu"), MlpKind::Gelu);
  m.norm = NormKind::LayerNorm;
  m.position = PosKind::Rope;
  m.attn_bias = m.attn_out_bias = r.boolean_or("attention_bias", true);
  m.mlp_bias = true;
  m.parallel_attn = r.boolean_or("use_parallel_residual", true);
  m.norms_per_layer = 2;
}

void read_mpt(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"d_model", "hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"n_layers", "num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"n_heads", "num_attention_heads"}, 0, true));
  m.vocab = int_alias(r, {"vocab_size"}, 50368, false);
  m.max_position = int_alias(r, {"max_seq_len", "max_position_embeddings"}, 2048, false);
  const long long ratio = int_alias(r, {"expansion_ratio"}, 4, false);
  m.ffn = int_alias(r, {"intermediate_size"}, ratio * m.hidden, false);
  if (r.has("intermediate_size") && m.ffn != ratio * m.hidden) {
    r.diagnostics().error(r.path_of("intermediate_size"), "disagrees with expansion_ratio × d_model",
                          std::to_string(m.ffn), std::to_string(ratio * m.hidden));
  }
  bool alibi = false;
  long long kv = m.heads;
  if (const Json* ac = r.object("attn_config", false)) {
    FieldReader a(*ac, r.path_of("attn_config"), r.diagnostics(), false);
    alibi = a.boolean_or("alibi", false);
    const std::string type = a.str_or("attn_type", "multihead_attention");
    if (type == "multiquery_attention") kv = 1;
    else if (type == "grouped_query_attention") kv = a.has("kv_n_heads") ? bounded_integer(a, "kv_n_heads") : m.heads;
  }
  const long long kv_alias = int_alias(r, {"num_key_value_heads"}, kv, false);
  if (kv_alias != kv) {
    r.diagnostics().error(r.path_of("num_key_value_heads"), "disagrees with attn_config",
                          std::to_string(kv_alias), std::to_string(kv));
  }
  m.kv_heads = static_cast<int>(kv);
  const bool learned = r.boolean_or("learned_pos_emb", true);
  m.position = alibi ? PosKind::Alibi : (learned ? PosKind::Learned : PosKind::Alibi);
  const bool no_bias = r.boolean_or("no_bias", true);
  m.attn_bias = m.attn_out_bias = m.mlp_bias = !no_bias;
  m.norm = NormKind::LayerNorm;
  m.norm_bias = !no_bias;
  m.mlp = MlpKind::Gelu;
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
}

/// Databricks DBRX: MPT-style names, attention and routed experts under attn_config and
/// ffn_config; every layer is a MoE of GLU experts (w1, v1, w2: three matrices), LayerNorm
/// without biases, no biases anywhere, RoPE.
void read_dbrx(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"d_model", "hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"n_layers", "num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"n_heads", "num_attention_heads"}, 0, true));
  m.vocab = int_alias(r, {"vocab_size"}, 0, true);
  m.max_position = int_alias(r, {"max_seq_len", "max_position_embeddings"}, 2048, false);
  m.kv_heads = m.heads;
  if (const Json* ac = r.object("attn_config", true)) {
    FieldReader a(*ac, r.path_of("attn_config"), r.diagnostics(), false);
    m.kv_heads = static_cast<int>(int_alias(a, {"kv_n_heads"}, m.heads, false));
  }
  if (const Json* fc = r.object("ffn_config", true)) {
    FieldReader f(*fc, r.path_of("ffn_config"), r.diagnostics(), false);
    m.moe.expert_ffn = int_alias(f, {"ffn_hidden_size"}, 0, true);
    m.moe.num_experts = static_cast<int>(int_alias(f, {"moe_num_experts"}, 0, true));
    m.moe.experts_per_token = static_cast<int>(int_alias(f, {"moe_top_k"}, 0, true));
  }
  m.ffn = m.moe.expert_ffn;
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.norm = NormKind::LayerNorm;
  m.norm_bias = false;
  m.attn_bias = m.mlp_bias = false;
  m.mlp = MlpKind::Gated;
  m.position = PosKind::Rope;
}

/// The routed experts of a hybrid's 'E' blocks (Nemotron 3): DeepSeek-style names, squared-ReLU
/// experts (two matrices, like the dense MLP), one shared expert when its size is given, and the
/// router's score-correction bias.
void read_hybrid_moe(FieldReader& r, ModelSpec& m, const std::string& pattern) {
  MoeSpec& e = m.moe;
  e.num_experts = static_cast<int>(int_alias(r, {"n_routed_experts", "num_experts"}, 0, true));
  e.experts_per_token = static_cast<int>(int_alias(r, {"num_experts_per_tok"}, 0, true));
  e.expert_ffn = int_alias(r, {"moe_intermediate_size"}, 0, true);
  e.shared_ffn = int_alias(r, {"moe_shared_expert_intermediate_size", "shared_expert_intermediate_size"}, 0, false);
  e.shared_experts = static_cast<int>(int_alias(r, {"n_shared_experts"}, e.shared_ffn > 0 ? 1 : 0, false));
  e.router_bias = true;
  e.layer_moe.assign(pattern.size(), false);
  for (size_t i = 0; i < pattern.size(); ++i) e.layer_moe[i] = pattern[i] == 'E';
}

/// A state-space model has no positional limit: its context is bounded only by the simulator's
/// sequence limit.
constexpr long long kRecurrentMaxPosition = core::limits::kSequence;

/// A model without an attention layer (every layer a recurrent mixer or an MLP): no attention
/// heads, no KV cache.
void drop_attention(ModelSpec& m) {
  m.heads = 0;
  m.kv_heads = 0;
  m.head_dim = 0;
  m.attention = AttnKind::Mha;
}

/// The config's names of a Mamba-2 mixer's head width, head count and state size (Nemotron-H and
/// Mamba2Config spell them differently; n_groups, conv_kernel and chunk_size are shared).
struct Mamba2Keys {
  const char* head_dim;
  const char* heads;
  const char* state;
};

/// Every Mamba-2 size positive, and the groups dividing the heads; errors name the config's keys.
void check_mamba2_sizes(FieldReader& r, const MambaSpec& s, const Mamba2Keys& k) {
  const std::pair<const char*, long long> sizes[] = {{k.head_dim, s.head_dim},      {k.heads, s.heads},
                                                     {k.state, s.state},            {"n_groups", s.groups},
                                                     {"conv_kernel", s.conv_kernel}, {"chunk_size", s.chunk}};
  for (const auto& [key, v] : sizes) require_positive(r.diagnostics(), r.path_of(key), v);
  if (s.groups > 0 && s.heads % s.groups != 0)
    r.diagnostics().error(r.path_of("n_groups"), std::string("does not divide ") + k.heads, std::to_string(s.groups),
                          "a divisor of " + std::to_string(s.heads));
}

/// NVIDIA Nemotron-H (and Nemotron Nano 2): a hybrid of Mamba-2 mixers, attention and
/// squared-ReLU MLP blocks, one kind per layer as hybrid_override_pattern spells it ('M' Mamba-2,
/// '*' attention, '-' MLP, 'E' a mixture of experts in Nemotron 3); RMSNorm before every block; no positional encoding (the attention
/// layers are NoPE); untied embeddings by default.
void read_nemotron_h(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"num_hidden_layers"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"num_attention_heads"}, 0, true));
  m.kv_heads = static_cast<int>(int_alias(r, {"num_key_value_heads"}, m.heads, false));
  m.head_dim = int_alias(r, {"head_dim", "attention_head_dim"}, 0, false);
  m.vocab = int_alias(r, {"vocab_size"}, 0, true);
  m.max_position = int_alias(r, {"max_position_embeddings"}, 4096, false);
  m.ffn = int_alias(r, {"intermediate_size"}, 0, false);
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", false);
  m.attn_bias = m.attn_out_bias = r.boolean_or("attention_bias", false);
  m.mlp_bias = r.boolean_or("mlp_bias", false);
  m.norm = NormKind::RmsNorm;
  m.norms_per_layer = 1;
  m.position = PosKind::None;
  m.mlp = mlp_from_act(r.str_or("mlp_hidden_act", "relu2"), MlpKind::SquaredRelu);
  MambaSpec& s = m.mamba;
  s.head_dim = int_alias(r, {"mamba_head_dim"}, 64, false);
  const long long expand = int_alias(r, {"expand", "mamba_expand"}, 2, false);
  s.heads = int_alias(r, {"mamba_num_heads"}, s.head_dim > 0 ? expand * m.hidden / s.head_dim : 0, false);
  s.state = int_alias(r, {"ssm_state_size", "mamba_d_state"}, 128, false);
  s.groups = int_alias(r, {"n_groups", "mamba_n_groups"}, 8, false);
  s.conv_kernel = int_alias(r, {"conv_kernel", "mamba_d_conv"}, 4, false);
  s.chunk = int_alias(r, {"chunk_size", "mamba_chunk_size"}, 128, false);
  s.conv_bias = r.boolean_or("use_conv_bias", true);
  s.proj_bias = r.boolean_or("mamba_proj_bias", false);
  check_mamba2_sizes(r, s, {"mamba_head_dim", "mamba_num_heads", "ssm_state_size"});
  const std::string pattern = r.str("hybrid_override_pattern");
  if (pattern.empty()) return;  // missing or not a string: diagnosed by the reader
  if (static_cast<long long>(pattern.size()) != m.layers) {
    r.diagnostics().error(r.path_of("hybrid_override_pattern"), "length differs from num_hidden_layers",
                          std::to_string(pattern.size()), std::to_string(m.layers));
    return;
  }
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == 'M') m.layer_blocks.push_back(LayerBlock::Mamba);
    else if (c == '*') m.layer_blocks.push_back(LayerBlock::Attention);
    else if (c == '-' || c == 'E') m.layer_blocks.push_back(LayerBlock::Mlp);
    else {
      r.diagnostics().error(r.path_of("hybrid_override_pattern"), "unknown layer kind at position " + std::to_string(i),
                            std::string(1, c), "'M' (Mamba-2), '*' (attention), '-' (MLP) or 'E' (mixture of experts)");
      m.layer_blocks.clear();
      return;
    }
  }
  if (pattern.find('E') != std::string::npos) read_hybrid_moe(r, m, pattern);
  if (pattern.find('-') != std::string::npos && m.ffn <= 0)
    r.diagnostics().error(r.path_of("intermediate_size"), "missing or not positive", std::to_string(m.ffn),
                          "the dense MLP's size: hybrid_override_pattern has MLP layers ('-')");
  if (!m.has_recurrent() && m.attention_layers() == 0)
    r.diagnostics().error(r.path_of("hybrid_override_pattern"), "has no token mixer", pattern,
                          "at least one attention ('*') or Mamba ('M') layer");
  if (m.attention_layers() == 0) drop_attention(m);
}

/// Mamba-1's dt rank: an integer, or "auto" for ceil(hidden / 16) (Mamba's default).
long long read_dt_rank(FieldReader& r, const char* key, long long hidden) {
  const long long automatic = (hidden + 15) / 16;
  if (!r.has_string(key)) return int_alias(r, {key}, automatic, false);
  const std::string rank = r.str(key);
  if (rank != "auto") r.diagnostics().error(r.path_of(key), "not a rank", rank, "an integer or \"auto\"");
  return automatic;
}

/// AI21 Jamba: every layer a Mamba-1 mixer or (every attn_layer_period-th, from
/// attn_layer_offset) attention, each then a SwiGLU MLP that is a mixture of experts every
/// expert_layer_period-th layer (from expert_layer_offset); RMSNorm, no positional encoding.
void read_jamba(FieldReader& r, ModelSpec& m) {
  read_llama_shape(r, m);
  m.position = PosKind::None;
  m.moe.num_experts = static_cast<int>(int_alias(r, {"num_experts"}, 0, false));
  m.moe.experts_per_token = static_cast<int>(int_alias(r, {"num_experts_per_tok"}, 0, m.moe.num_experts > 0));
  m.moe.expert_ffn = m.ffn;
  const long long attn_period = int_alias(r, {"attn_layer_period"}, 8, false);
  const long long attn_offset = int_alias(r, {"attn_layer_offset"}, 4, false);
  const long long expert_period = int_alias(r, {"expert_layer_period"}, 2, false);
  const long long expert_offset = int_alias(r, {"expert_layer_offset"}, 1, false);
  for (const auto& [key, v] : {std::pair<const char*, long long>{"attn_layer_period", attn_period},
                               {"expert_layer_period", expert_period}})
    require_positive(r.diagnostics(), r.path_of(key), v);
  for (const auto& [key, offset, period] : {std::tuple<const char*, long long, long long>{"attn_layer_offset", attn_offset, attn_period},
                                            {"expert_layer_offset", expert_offset, expert_period}})
    if (period > 0 && (offset < 0 || offset >= period))
      r.diagnostics().error(r.path_of(key), "outside its period", std::to_string(offset),
                            "0 to " + std::to_string(period - 1) + " (the layer period is " + std::to_string(period) + ")");
  MambaSpec& s = m.mamba;
  s.version = 1;
  s.state = int_alias(r, {"mamba_d_state"}, 16, false);
  s.conv_kernel = int_alias(r, {"mamba_d_conv"}, 4, false);
  const long long expand = int_alias(r, {"mamba_expand"}, 2, false);
  s.heads = expand * m.hidden;  // one channel per "head"
  s.head_dim = 1;
  s.groups = 1;
  s.dt_rank = read_dt_rank(r, "mamba_dt_rank", m.hidden);
  s.conv_bias = r.boolean_or("mamba_conv_bias", true);
  s.proj_bias = r.boolean_or("mamba_proj_bias", false);
  s.dt_bc_norms = true;
  for (const auto& [key, v] : {std::pair<const char*, long long>{"mamba_d_state", s.state},
                               {"mamba_d_conv", s.conv_kernel}, {"mamba_expand", expand}, {"mamba_dt_rank", s.dt_rank}})
    require_positive(r.diagnostics(), r.path_of(key), v);
  if (attn_period <= 0 || expert_period <= 0) return;
  m.moe.layer_moe.assign(static_cast<size_t>(std::max(0, m.layers)), false);
  for (int i = 0; i < m.layers; ++i) {
    m.layer_blocks.push_back(i % attn_period == attn_offset ? LayerBlock::AttentionMlp : LayerBlock::MambaMlp);
    m.moe.layer_moe[static_cast<size_t>(i)] = m.moe.num_experts > 0 && i % expert_period == expert_offset;
  }
  if (m.attention_layers() == 0) drop_attention(m);
}

/// The common shape of a pure state-space model: hidden size, layers, vocabulary, RMSNorm before
/// each mixer, no positional encoding and no attention.
void read_ssm_shape(FieldReader& r, ModelSpec& m, bool tied_by_default) {
  m.hidden = int_alias(r, {"hidden_size", "d_model"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"num_hidden_layers", "n_layer"}, 0, true));
  m.vocab = int_alias(r, {"vocab_size"}, 0, true);
  m.max_position = int_alias(r, {"max_position_embeddings"}, kRecurrentMaxPosition, false);
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", tied_by_default);
  m.norm = NormKind::RmsNorm;
  m.norms_per_layer = 1;
  m.position = PosKind::None;
  m.layer_blocks.assign(static_cast<size_t>(std::max(0, m.layers)), LayerBlock::Mamba);
  drop_attention(m);
}

/// Mamba-1 (state-spaces/mamba-*-hf, `mamba`) and Falcon Mamba (`falcon_mamba`): every layer a
/// Mamba-1 mixer alone, no MLP. Falcon Mamba normalises dt, B and C with RMSNorms that carry no
/// weights (mixer_rms_eps), so they add no parameters.
void read_mamba(FieldReader& r, ModelSpec& m) {
  read_ssm_shape(r, m, m.family == "mamba");
  MambaSpec& s = m.mamba;
  s.version = 1;
  s.state = int_alias(r, {"state_size"}, 16, false);
  s.conv_kernel = int_alias(r, {"conv_kernel"}, 4, false);
  const long long expand = int_alias(r, {"expand"}, 2, false);
  // FalconMambaConfig writes expand 16 beside the intermediate_size the mixer uses.
  s.heads = int_alias(r, {"intermediate_size"}, expand * m.hidden, false);
  s.head_dim = 1;
  s.groups = 1;
  s.dt_rank = read_dt_rank(r, "time_step_rank", m.hidden);
  s.conv_bias = r.boolean_or("use_conv_bias", true);
  s.proj_bias = r.boolean_or("use_bias", false);
  for (const auto& [key, v] : {std::pair<const char*, long long>{"state_size", s.state}, {"conv_kernel", s.conv_kernel}})
    require_positive(r.diagnostics(), r.path_of(key), v);
  if (m.hidden <= 0) return;  // the widths below default from hidden_size, already diagnosed
  for (const auto& [key, v] : {std::pair<const char*, long long>{"intermediate_size", s.heads}, {"time_step_rank", s.dt_rank}})
    require_positive(r.diagnostics(), r.path_of(key), v);
}

/// Mamba-2 (`mamba2`, e.g. Mamba-Codestral): every layer a Mamba-2 mixer alone, no MLP.
void read_mamba2(FieldReader& r, ModelSpec& m) {
  read_ssm_shape(r, m, false);
  MambaSpec& s = m.mamba;
  s.head_dim = int_alias(r, {"head_dim"}, 64, false);
  const long long expand = int_alias(r, {"expand"}, 2, false);
  s.heads = int_alias(r, {"num_heads"}, s.head_dim > 0 ? expand * m.hidden / s.head_dim : 0, false);
  s.state = int_alias(r, {"state_size"}, 128, false);
  s.groups = int_alias(r, {"n_groups"}, 8, false);
  s.conv_kernel = int_alias(r, {"conv_kernel"}, 4, false);
  s.chunk = int_alias(r, {"chunk_size"}, 256, false);
  s.conv_bias = r.boolean_or("use_conv_bias", true);
  s.proj_bias = r.boolean_or("use_bias", false);
  check_mamba2_sizes(r, s, {"head_dim", "num_heads", "state_size"});
  if (s.heads > 0 && s.head_dim > 0 && m.hidden > 0 && s.heads * s.head_dim != expand * m.hidden)
    r.diagnostics().error(r.path_of("num_heads"), "num_heads × head_dim differs from expand × hidden_size",
                          std::to_string(s.heads) + " × " + std::to_string(s.head_dim),
                          std::to_string(expand * m.hidden) + " (the mixer's inner width)");
}

void read_falcon(FieldReader& r, ModelSpec& m) {
  m.hidden = int_alias(r, {"hidden_size"}, 0, true);
  m.layers = static_cast<int>(int_alias(r, {"num_hidden_layers", "n_layer"}, 0, true));
  m.heads = static_cast<int>(int_alias(r, {"num_attention_heads", "n_head"}, 0, true));
  m.vocab = int_alias(r, {"vocab_size"}, 65024, false);
  m.max_position = int_alias(r, {"max_position_embeddings"}, 2048, false);
  m.ffn = int_alias(r, {"ffn_hidden_size", "intermediate_size"}, 4 * m.hidden, false);
  const bool new_arch = r.boolean_or("new_decoder_architecture", false);
  const bool mqa = r.boolean_or("multi_query", true);
  const long long kv_default = new_arch ? m.heads : (mqa ? 1 : m.heads);
  m.kv_heads = static_cast<int>(int_alias(r, {"num_kv_heads", "num_key_value_heads"}, kv_default, false));
  if (!new_arch && r.has("num_kv_heads")) m.kv_heads = static_cast<int>(kv_default);
  m.parallel_attn = new_arch || r.boolean_or("parallel_attn", true);
  m.norms_per_layer = new_arch ? 2 : (m.parallel_attn ? 1 : 2);
  const bool bias = r.boolean_or("bias", false);
  m.attn_bias = m.attn_out_bias = m.mlp_bias = bias;
  m.norm = NormKind::LayerNorm;
  m.position = r.boolean_or("alibi", false) ? PosKind::Alibi : PosKind::Rope;
  m.mlp = MlpKind::Gelu;
  m.tied_embeddings = r.boolean_or("tie_word_embeddings", true);
}

/// The modules a quantized checkpoint keeps in bf16: quantization_config.modules_to_not_convert,
/// module-name patterns as Hugging Face writes them ("model.layers.*.self_attn", "lm_head").
/// Names it does not recognise (a single layer's module, a vision tower) are stated as
/// approximations, not silently dropped.
void read_unquantized_modules(FieldReader& r, ModelSpec& m) {
  const Json* qc = r.object("quantization_config", false);
  if (qc == nullptr) return;
  FieldReader q(*qc, r.path_of("quantization_config"), r.diagnostics(), /*strict=*/false);
  const Json* names = q.array("modules_to_not_convert", false);
  if (names == nullptr) return;
  std::vector<std::string> unread;
  for (const Json& v : *names) {
    if (!v.is_string()) {
      r.diagnostics().error(q.path_of("modules_to_not_convert"), "an entry is not a string", config::brief(v),
                            "module names such as \"model.layers.*.self_attn\"");
      continue;
    }
    const std::string s = v.get<std::string>();
    auto has = [&](const char* part) { return s.find(part) != std::string::npos; };
    const size_t at = s.find("layers.");
    const bool one_layer = at != std::string::npos && at + 7 < s.size() && std::isdigit(static_cast<unsigned char>(s[at + 7]));
    if (one_layer || has("vision") || has("visual") || has("audio")) unread.push_back(s);  // not every text layer
    else if (has("self_attn") || has(".attn") || has("attention")) m.unquantized.attention = true;
    else if (has("router") || (has("mlp.gate") && !has("gate_proj") && !has("gate_up"))) m.unquantized.router = true;
    else if (has("embed_tokens") || has("wte")) m.unquantized.embedding = true;
    else if (has("lm_head")) m.unquantized.lm_head = true;
    else unread.push_back(s);
  }
  if (!unread.empty())
    m.approximations.push_back("quantization_config.modules_to_not_convert: " + core::join(unread) +
                               " not modelled apart (their weights take the plan's format)");
}

/// Reads the fields of m.family; a multimodal wrapper reads its text_config instead, and
/// m.family becomes the text model's type.
void read_family(FieldReader& r, ModelSpec& m) {
  const auto& types = supported_types();
  if (m.family.empty()) return;
  if (std::find(types.begin(), types.end(), m.family) == types.end()) {
    r.diagnostics().error(r.path_of("model_type"), "unsupported model_type", m.family,
                          "one of: " + core::join(types), core::did_you_mean(m.family, types));
  } else if (const std::string* text_type = text_model_type(m.family)) {
    const Json* text = r.object("text_config", true);
    if (!text) return;
    FieldReader t(*text, r.path_of("text_config"), r.diagnostics(), /*strict=*/false);
    m.approximations.push_back(m.family + ": the language model under text_config; the vision encoder is not modelled");
    m.family = t.str_or("model_type", *text_type);
    if (text_model_type(m.family)) {
      t.diagnostics().error(t.path_of("model_type"), "a multimodal wrapper inside text_config", m.family,
                            "the language model's type, e.g. " + *text_type);
      return;
    }
    m.family = text_architecture(m.family);
    read_family(t, m);
    // The wrapper's own tie_word_embeddings is what its model uses when text_config has none
    // (Qwen3-VL writes it at the top level).
    if (!t.has("tie_word_embeddings") && r.has("tie_word_embeddings"))
      m.tied_embeddings = r.boolean_or("tie_word_embeddings", m.tied_embeddings);
  } else if (m.family == "gpt2") {
    read_gpt2(r, m);
  } else if (m.family == "gptj") {
    read_gptj(r, m);
  } else if (m.family == "gpt_neox") {
    read_gpt_neox(r, m);
  } else if (m.family == "mpt") {
    read_mpt(r, m);
  } else if (m.family == "falcon") {
    read_falcon(r, m);
  } else if (m.family == "dbrx") {
    read_dbrx(r, m);
  } else if (m.family == "nemotron_h") {
    read_nemotron_h(r, m);
  } else if (m.family == "nemotron-nas") {
    read_nemotron_nas(r, m);
  } else if (m.family == "jamba") {
    read_jamba(r, m);
  } else if (m.family == "mamba" || m.family == "falcon_mamba") {
    read_mamba(r, m);
  } else if (m.family == "mamba2") {
    read_mamba2(r, m);
  } else {
    read_llama_style(r, m);
  }
}

std::string stem_of(const std::string& path) { return fs::path(path).stem().string(); }

}  // namespace

std::vector<std::string> model_ids(const std::string& models_dir) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (fs::directory_iterator it(models_dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".json") ids.push_back(it->path().stem().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

namespace {

/// A shipped id that `id` names with variant suffixes that leave the architecture as it is
/// (instruction-tuned, chat, base, HF-converted weights: "llama3.1-8b-instruct" is llama3.1-8b),
/// stripped one at a time; empty when none is shipped.
std::string shipped_variant_of(const std::string& id, const std::string& models_dir) {
  static const std::vector<std::string> suffixes = {"-instruct", "-chat", "-base", "-hf", "-it"};
  std::string stem = id;
  for (bool stripped = true; stripped;) {
    stripped = false;
    for (const auto& s : suffixes)
      if (stem.size() > s.size() && stem.compare(stem.size() - s.size(), s.size(), s) == 0) {
        stem.resize(stem.size() - s.size());
        stripped = true;
        std::error_code ec;
        if (fs::is_regular_file(fs::path(models_dir) / (stem + ".json"), ec)) return stem;
      }
  }
  return "";
}

/// The config file a model argument names: an existing file, else `models_dir/<id>.json`, else
/// the shipped model it names with a variant suffix (`variant_of` says which); an unknown id
/// lists the shipped ones.
std::string resolve_model_path(const std::string& path_or_id, const std::string& models_dir, std::string& variant_of) {
  std::error_code ec;
  if (fs::is_regular_file(path_or_id, ec)) return path_or_id;
  const bool looks_like_path = path_or_id.find('/') != std::string::npos ||
                               (path_or_id.size() > 5 && path_or_id.compare(path_or_id.size() - 5, 5, ".json") == 0);
  if (looks_like_path)
    core::fail("", "cannot open model file '" + path_or_id + "'", path_or_id, "an existing config.json or a model id");
  std::string path = (fs::path(models_dir) / (path_or_id + ".json")).string();
  if (!fs::is_regular_file(path, ec) && !(variant_of = shipped_variant_of(path_or_id, models_dir)).empty())
    return (fs::path(models_dir) / (variant_of + ".json")).string();
  if (!fs::is_regular_file(path, ec)) {
    const auto ids = model_ids(models_dir);
    core::fail("", "unknown model '" + path_or_id + "'", path_or_id,
               ids.empty() ? "a path to a config.json (no models in '" + models_dir + "')" : "one of: " + core::join(ids),
               core::did_you_mean(path_or_id, ids));
  }
  return path;
}

/// The shape every family must have once read: positive sizes, heads that divide the hidden
/// size and one another, a valid MoE routing and a layer-type list of the right length.
void check_shape(ModelSpec& m, core::Diagnostics& diags) {
  // A model of recurrent mixers (and MLPs) only has no attention heads to check.
  const bool attention = m.layer_blocks.empty() || m.attention_layers() > 0;
  bool mlp = false;
  for (int i = 0; i < m.layers && !mlp; ++i) mlp = m.layer_has_mlp(i);
  require_positive(diags, "hidden_size", m.hidden);
  require_positive(diags, "num_hidden_layers", m.layers);
  if (attention) {
    require_positive(diags, "num_attention_heads", m.heads);
    require_positive(diags, "num_key_value_heads", m.kv_heads);
  }
  require_positive(diags, "vocab_size", m.vocab);
  if (mlp && m.ffn <= 0 && !m.is_moe()) require_positive(diags, "intermediate_size", m.ffn);
  if (!diags.empty() || !attention) return;
  if (m.head_dim <= 0) {
    if (m.hidden % m.heads != 0) {
      diags.error("num_attention_heads", "does not divide hidden_size", std::to_string(m.heads),
                  "a divisor of " + std::to_string(m.hidden) + " (or an explicit head_dim)");
    }
    m.head_dim = m.hidden / m.heads;
  }
  if (m.attention != AttnKind::Mla) {
    if (m.heads % m.kv_heads != 0) {
      diags.error("num_key_value_heads", "does not divide num_attention_heads", std::to_string(m.kv_heads),
                  "a divisor of " + std::to_string(m.heads));
    }
    m.attention = m.kv_heads == m.heads ? AttnKind::Mha : AttnKind::Gqa;
  }
  if (m.is_moe()) {
    require_positive(diags, "num_experts_per_tok", m.moe.experts_per_token);
    if (m.moe.experts_per_token > m.moe.num_experts) {
      diags.error("num_experts_per_tok", "exceeds the number of experts", std::to_string(m.moe.experts_per_token),
                  "at most " + std::to_string(m.moe.num_experts));
    }
    require_positive(diags, "moe_intermediate_size", m.moe.expert_ffn);
  }
  if (!m.layer_is_sliding.empty() && static_cast<int>(m.layer_is_sliding.size()) != m.layers) {
    diags.error("layer_types", "length differs from num_hidden_layers", std::to_string(m.layer_is_sliding.size()),
                std::to_string(m.layers));
  }
}

}  // namespace

ModelSpec load_model(const std::string& path_or_id, const std::string& models_dir) {
  std::string variant_of;
  const std::string path = resolve_model_path(path_or_id, models_dir, variant_of);
  const Json doc = config::load_document(path);
  core::Diagnostics diags;
  if (!doc.is_object()) {
    diags.error("", "a model config must be a JSON object", config::brief(doc));
    diags.set_file(path);
    diags.throw_if_any();
  }
  FieldReader r(doc, "", diags, /*strict=*/false);
  ModelSpec m;
  m.id = stem_of(path);
  m.source_path = path;
  m.family = r.str("model_type");
  read_family(r, m);
  read_unquantized_modules(r, m);
  m.max_position_stated = doc.contains("max_position_embeddings") || doc.contains("n_positions") ||
                          doc.contains("max_seq_len");
  if (diags.empty()) check_shape(m, diags);
  diags.set_file(path);
  diags.throw_if_any();
  if (!variant_of.empty())
    m.approximations.insert(m.approximations.begin(), "'" + path_or_id + "' read as the shipped '" + variant_of +
                                                          "': a variant of the same architecture (its suffix names "
                                                          "the weights, not the shape)");
  return m;
}

}  // namespace xpusim::workload
