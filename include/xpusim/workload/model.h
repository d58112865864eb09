#pragma once
// Transformer model description, normalised from a Hugging Face config.json of any supported
// family (llama, mistral/mixtral, qwen3/qwen3_moe, deepseek_v3, gpt_oss, gpt2/gptj/mpt/falcon/
// nemotron). Plain data; see workload/hf_config.h for the loader and workload/accounting.h for
// parameter, FLOP and byte counts.

#include <string>
#include <vector>

namespace xpusim::workload {

enum class MlpKind { Gelu, Gated, SquaredRelu };   ///< 2 matrices, 3 matrices (SwiGLU), 2
enum class NormKind { LayerNorm, RmsNorm };        ///< LayerNorm has a bias
enum class PosKind { Rope, Learned, Alibi };       ///< Learned adds max_pos × hidden params
enum class AttnKind { Mha, Gqa, Mla };

struct MoeSpec {
  int num_experts = 0;            ///< routed experts per MoE layer (0 = dense model)
  int experts_per_token = 0;      ///< top-k
  long long expert_ffn = 0;       ///< intermediate size of one routed expert
  int shared_experts = 0;         ///< always-active experts
  long long shared_ffn = 0;       ///< intermediate size of one shared expert
  int first_dense_layers = 0;     ///< leading layers with a dense MLP (DeepSeek first_k_dense)
  int layer_freq = 1;             ///< every n-th layer (after the dense ones) is MoE
  bool router_bias = false;
};

struct MlaSpec {
  long long q_lora_rank = 0;      ///< 0 = no low-rank query projection
  long long kv_lora_rank = 0;
  long long qk_nope_head_dim = 0;
  long long qk_rope_head_dim = 0;
  long long v_head_dim = 0;
};

struct ModelSpec {
  std::string id;              ///< file stem, e.g. "llama3.1-405b"
  std::string family;          ///< HF model_type, e.g. "llama"
  std::string source_path;
  long long hidden = 0;
  int layers = 0;
  int heads = 0;
  int kv_heads = 0;
  long long head_dim = 0;
  long long ffn = 0;           ///< dense MLP intermediate size
  long long vocab = 0;
  long long max_position = 0;
  bool tied_embeddings = false;
  MlpKind mlp = MlpKind::Gated;
  NormKind norm = NormKind::RmsNorm;
  PosKind position = PosKind::Rope;
  AttnKind attention = AttnKind::Gqa;
  bool attn_bias = false;      ///< q/k/v/o biases
  bool mlp_bias = false;
  bool qk_norm = false;        ///< per-head q/k RMSNorm (qwen3)
  bool parallel_attn = false;  ///< attention and MLP read the same input (falcon, gptj)
  bool attn_sinks = false;     ///< gpt-oss learned sinks (one scalar per head)
  MoeSpec moe;
  MlaSpec mla;
  long long sliding_window = 0;        ///< 0 = none
  std::vector<bool> layer_is_sliding;  ///< per layer (gpt-oss layer_types); empty = all full

  bool is_moe() const { return moe.num_experts > 0; }
  /// Whether layer `i` (0-based) has a routed-expert MLP.
  bool layer_is_moe(int i) const;
};

}  // namespace xpusim::workload
