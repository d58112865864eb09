#pragma once
// Transformer model description, normalised from a Hugging Face config.json of any supported
// family (llama, llama4, mistral/mixtral, qwen2/qwen3 and their MoE, deepseek_v2/v3, gemma 1-3,
// phi3, gpt_oss, gpt2/gptj/mpt/falcon/nemotron, cohere, dbrx, and the nemotron_h hybrids). Plain data; see workload/hf_config.h for the loader and workload/accounting.h for
// parameter, FLOP and byte counts.

#include <string>
#include <tuple>
#include <vector>

namespace xpusim::workload {

enum class MlpKind { Gelu, Gated, SquaredRelu };   ///< 2 matrices, 3 matrices (SwiGLU), 2
enum class NormKind { LayerNorm, RmsNorm };        ///< LayerNorm has a bias
enum class PosKind { Rope, Learned, Alibi, None };  ///< Learned adds max_pos × hidden params; None: NoPE
enum class AttnKind { Mha, Gqa, Mla };

/// What one layer (block) holds. A transformer layer is attention then an MLP; hybrid models
/// (Nemotron-H) interleave blocks that hold one of a Mamba-2 mixer, attention or an MLP; Qwen3-Next
/// layers are a gated DeltaNet (linear attention) or attention, each then an MLP; Jamba layers a
/// Mamba-1 mixer or attention, each then an MLP.
/// Nemotron-NAS layers may replace attention and the MLP by linear layers (LayerShape); a layer whose
/// only parts are such replacements is a `Linear` block.
enum class LayerBlock { AttentionMlp, Attention, Mlp, Mamba, LinearAttentionMlp, MambaMlp, Linear };

/// One layer's own sizes in a heterogeneous model: Nemotron-NAS (DeciLM `block_configs`, found by
/// neural architecture search) varies the KV heads and the MLP width per layer, and may replace a
/// layer's attention or its MLP by one hidden × hidden linear layer.
struct LayerShape {
  int kv_heads = 0;          ///< KV heads of the layer's attention (0: none)
  long long ffn = 0;         ///< the layer's MLP intermediate size (0: none)
  bool linear_mixer = false; ///< attention replaced by one hidden × hidden linear layer (no KV cache)
  bool linear_mlp = false;   ///< the MLP replaced by one hidden × hidden linear layer
  bool operator==(const LayerShape&) const = default;
  bool operator<(const LayerShape& o) const {
    return std::tie(kv_heads, ffn, linear_mixer, linear_mlp) < std::tie(o.kv_heads, o.ffn, o.linear_mixer, o.linear_mlp);
  }
};

/// Mamba mixer. Mamba-2 (Dao & Gu 2024, "state space duality"): in_proj to [z, x, B, C, dt], a
/// causal depthwise conv over [x, B, C], the chunked SSD scan, a gated RMSNorm and out_proj.
/// Mamba-1 (Gu & Dao 2023, Jamba): in_proj to [x, z], the conv over x, x_proj to [dt, B, C],
/// dt_proj, the selective scan (a state of `state` per channel), y·silu(z) and out_proj; it is
/// described here with one channel per head (heads = inner width, head_dim 1) and one B/C group.
struct MambaSpec {
  int version = 2;            ///< 1: Mamba-1 selective scan; 2: Mamba-2 SSD
  long long dt_rank = 0;      ///< Mamba-1: width of the low-rank dt projection
  long long heads = 0;        ///< SSM heads (mamba_num_heads)
  long long head_dim = 0;     ///< channels per head (mamba_head_dim); inner width = heads × head_dim
  long long state = 0;        ///< state size N per head (ssm_state_size)
  long long groups = 1;       ///< B/C groups shared by heads (n_groups)
  long long conv_kernel = 4;  ///< causal conv width (conv_kernel)
  long long chunk = 128;      ///< SSD chunk length (chunk_size)
  bool conv_bias = true;
  bool proj_bias = false;
  bool dt_bc_norms = false;   ///< Mamba-1 in Jamba: RMSNorms on dt, B and C
  long long inner() const { return heads * head_dim; }
  /// Channels of the causal conv: x, B and C (Mamba-1: x).
  long long conv_channels() const { return version == 1 ? inner() : inner() + 2 * groups * state; }
  /// Output width of in_proj: z, x, B, C and one dt per head (Mamba-1: x and z).
  long long in_proj_width() const { return version == 1 ? 2 * inner() : 2 * inner() + 2 * groups * state + heads; }
};

/// DeepSeek Sparse Attention (DeepSeek-V3.2, arXiv 2512.02556): a lightning indexer of
/// `index_heads` heads of `index_head_dim` (queries from the query latent, one shared key per token)
/// scores every earlier token, and each query's MLA attention reads only the `topk` best. The KV
/// cache keeps every token's latent and its indexer key.
struct SparseAttentionSpec {
  long long topk = 0;            ///< keys each query attends (index_topk); 0 = dense attention
  long long index_heads = 0;     ///< index_n_heads
  long long index_head_dim = 0;  ///< index_head_dim
  bool enabled() const { return topk > 0; }
};

struct MoeSpec {
  int num_experts = 0;            ///< routed experts per MoE layer (0 = dense model)
  int experts_per_token = 0;      ///< top-k
  long long expert_ffn = 0;       ///< intermediate size of one routed expert
  int shared_experts = 0;         ///< always-active experts
  long long shared_ffn = 0;       ///< intermediate size of one shared expert
  int first_dense_layers = 0;     ///< leading layers with a dense MLP (DeepSeek first_k_dense)
  int layer_freq = 1;             ///< every n-th layer (after the dense ones) is MoE
  bool router_bias = false;
  /// Node/group-limited routing (DeepSeek n_group/topk_group): each token's experts lie in at
  /// most this many expert groups, so it crosses the scale-out fabric at most this many times.
  /// 0 = unlimited.
  int group_limit = 0;
  int groups = 0;  ///< expert groups (n_group), 0 = none
  /// Per-layer MoE flags when the family states them explicitly (qwen3_moe mlp_only_layers and
  /// decoder_sparse_step, DeepSeek first_k_dense_replace + moe_layer_freq); empty = use
  /// first_dense_layers and layer_freq. Filled by the loader.
  std::vector<bool> layer_moe;
};

struct MlaSpec {
  long long q_lora_rank = 0;      ///< 0 = no low-rank query projection
  long long kv_lora_rank = 0;
  long long qk_nope_head_dim = 0;
  long long qk_rope_head_dim = 0;
  long long v_head_dim = 0;
};

/// Gated DeltaNet linear attention (Yang et al. 2024; Qwen3-Next): in_proj to q, k (key heads),
/// v, z (value heads) and one beta and alpha per value head, a causal depthwise conv over q, k, v,
/// the chunked gated delta rule, a gated RMSNorm and out_proj. Its recurrent state is a
/// key_dim × value_dim matrix per value head.
struct LinearAttentionSpec {
  long long key_heads = 0;     ///< linear_num_key_heads
  long long value_heads = 0;   ///< linear_num_value_heads
  long long key_dim = 0;       ///< linear_key_head_dim
  long long value_dim = 0;     ///< linear_value_head_dim
  long long conv_kernel = 4;   ///< linear_conv_kernel_dim
  long long chunk = 64;        ///< the chunked delta rule's chunk length (fla's chunk_gated_delta_rule)
  long long key_width() const { return key_heads * key_dim; }
  long long value_width() const { return value_heads * value_dim; }
  /// Channels of the causal conv: q, k and v.
  long long conv_channels() const { return 2 * key_width() + value_width(); }
  /// Output width of in_proj_qkvz and in_proj_ba: q, k, v, z and a beta and an alpha per value head.
  long long in_proj_width() const { return 2 * key_width() + 2 * value_width() + 2 * value_heads; }
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
  /// The config states the context (max_position_embeddings, n_positions or max_seq_len at its
  /// top level); otherwise max_position is the family's default.
  bool max_position_stated = false;
  bool tied_embeddings = false;
  MlpKind mlp = MlpKind::Gated;
  NormKind norm = NormKind::RmsNorm;
  PosKind position = PosKind::Rope;
  AttnKind attention = AttnKind::Gqa;
  bool attn_bias = false;      ///< q/k/v biases
  bool attn_out_bias = false;  ///< the output projection's bias (with attn_bias, but for Qwen2 and GLM-4.5)
  bool mlp_bias = false;
  bool qk_norm = false;        ///< per-head q/k RMSNorm (qwen3)
  bool parallel_attn = false;  ///< attention and MLP read the same input (falcon, gptj)
  bool attn_sinks = false;     ///< gpt-oss learned sinks (one scalar per head)
  /// Modules a quantized checkpoint keeps in bf16 whatever the plan's weight format
  /// (quantization_config.modules_to_not_convert: gpt-oss keeps its attention, router, embedding
  /// and LM head in bf16 beside the MXFP4 experts). Their GEMMs run in bf16 and their weights
  /// are stored and read at 2 bytes.
  struct Unquantized {
    bool attention = false;  ///< q/k/v/o (MLA: q_a, q_b, kv_a, kv_b, o) projections
    bool router = false;     ///< the MoE router
    bool embedding = false;
    bool lm_head = false;
    bool any() const { return attention || router || embedding || lm_head; }
  };
  Unquantized unquantized;
  MoeSpec moe;
  MlaSpec mla;
  SparseAttentionSpec dsa;     ///< DeepSeek Sparse Attention of every attention layer (deepseek_v32)
  long long sliding_window = 0;        ///< 0 = none
  std::vector<bool> layer_is_sliding;  ///< per layer (gpt-oss layer_types); empty = all full
  /// Per layer block kind (Nemotron-H hybrid_override_pattern); empty = every layer AttentionMlp.
  std::vector<LayerBlock> layer_blocks;
  /// Per layer sizes of a heterogeneous model (Nemotron-NAS); empty = every layer has kv_heads
  /// and ffn. Filled by the loader, one per layer, with layer_blocks.
  std::vector<LayerShape> layer_shapes;
  MambaSpec mamba;                     ///< the Mamba-2 mixer of LayerBlock::Mamba layers
  LinearAttentionSpec linear;          ///< the gated DeltaNet of LayerBlock::LinearAttentionMlp layers
  /// The query projection also yields a per-element sigmoid gate on the attention output
  /// (Qwen3-Next's gated attention): q_proj is twice as wide.
  bool gated_attention = false;
  // Added by the accounting work (additive; defaults keep the old meaning):
  bool norm_bias = true;       ///< LayerNorm carries a bias (MPT no_bias: false); RMSNorm never
  int norms_per_layer = 2;     ///< 1 for parallel blocks sharing one input norm (gptj, falcon-7b)
  bool lm_head_bias = false;   ///< gptj's LM head has a vocab-sized bias
  /// Multi-token-prediction modules the checkpoint ships (num_nextn_predict_layers; DeepSeek-V3: 1),
  /// beside the layers and not in the parameter counts; `serve --draft-model mtp` drafts with one.
  int mtp_modules = 0;
  /// This model is one MTP module drafting for its target (mtp_draft_model): each step also runs
  /// the module's own operators (workload::mtp_ops) before its layer.
  bool is_mtp_module = false;
  /// What of the config the model describes only approximately (Llama 4's chunked attention as a
  /// window, a multimodal wrapper's vision encoder left out), said wherever the model runs.
  std::vector<std::string> approximations;

  bool is_moe() const { return moe.num_experts > 0; }
  /// What layer `i` (0-based) holds.
  LayerBlock layer_block(int i) const;
  bool layer_has_attention(int i) const;
  bool layer_has_mlp(int i) const;
  bool layer_is_mamba(int i) const {
    return layer_block(i) == LayerBlock::Mamba || layer_block(i) == LayerBlock::MambaMlp;
  }
  bool layer_is_linear_attention(int i) const { return layer_block(i) == LayerBlock::LinearAttentionMlp; }
  /// A layer whose mixer keeps a constant recurrent state instead of a KV cache (Mamba-2, DeltaNet).
  bool layer_is_recurrent(int i) const { return layer_is_mamba(i) || layer_is_linear_attention(i); }
  /// Whether any layer is recurrent (a hybrid model).
  bool has_recurrent() const;
  /// Layer `i`'s KV heads (its attention's; kv_heads unless the layers vary) and MLP width.
  int layer_kv_heads(int i) const;
  long long layer_ffn(int i) const;
  /// Layer `i`'s attention, or its MLP, replaced by one hidden × hidden linear layer (Nemotron-NAS).
  bool layer_linear_mixer(int i) const;
  bool layer_linear_mlp(int i) const;
  /// Whether layer `i` mixes tokens (attention, a recurrent mixer or its linear replacement) and
  /// whether it has an MLP part (an MLP or its linear replacement): each closes a TP region.
  bool layer_has_mixer_part(int i) const { return layer_has_attention(i) || layer_is_recurrent(i) || layer_linear_mixer(i); }
  bool layer_has_mlp_part(int i) const { return layer_has_mlp(i) || layer_linear_mlp(i); }
  /// Norms of layer `i`: norms_per_layer, or for a heterogeneous model one before each part it has.
  int layer_norms(int i) const;
  /// Layer `i`'s own sizes (a default LayerShape when the layers are uniform): what makes it differ
  /// from another layer of its block kind, which the per-kind caches key on.
  LayerShape layer_shape(int i) const;
  /// Whether the layers differ in KV heads, MLP width or linear replacements.
  bool heterogeneous() const { return !layer_shapes.empty(); }
  /// Row-parallel outputs of layer `i`, each closing a tensor-parallel region: 2 for a mixer then
  /// an MLP (1 when they run in parallel on one input), 1 for a hybrid's single-part block.
  int layer_tp_regions(int i) const;
  /// Whether any layer is a block of kind `b`.
  bool has_block(LayerBlock b) const;
  /// Layers with attention (that keep a KV cache).
  int attention_layers() const;
  /// Whether layer `i` (0-based) has a routed-expert MLP.
  bool layer_is_moe(int i) const;
  /// Whether layer `i` uses sliding-window attention (window = sliding_window).
  bool layer_sliding(int i) const;
  /// Layer `i`'s sliding window, 0 for a full-attention layer: the most tokens it keeps.
  long long layer_window(int i) const { return layer_sliding(i) ? sliding_window : 0; }
  /// Tokens layer `i` keeps in its KV cache when the context holds `context` tokens (the sliding
  /// window's cap); 0 for a layer without attention.
  long long layer_context(int i, long long context) const;
  /// Most keys one query of layer `i` attends: the sliding window, or sparse attention's top-k;
  /// 0 = every earlier key.
  long long layer_key_cap(int i) const;
  /// Keys one query of layer `i` attends when the context holds `context` tokens.
  long long layer_attended_keys(int i, long long context) const;
  /// Query/key head dimension (MLA: qk_nope + qk_rope) and value head dimension.
  long long qk_head_dim() const;
  long long v_head_dim() const;
};

/// The draft model of self-speculative decoding with the model's own MTP module: one layer, a copy
/// of the last layer's block, with the model's hidden size, vocabulary and shared LM head (its
/// embedding and head weights are the target's; workload::mtp_module_params is what it adds).
ModelSpec mtp_draft_model(const ModelSpec& m);

/// KV heads of the first attention layer whose KV heads and `tp` divide neither one another (0 if
/// none): tensor parallelism shards a layer's KV heads, or replicates them when tp exceeds them.
/// MLA has no KV heads to split.
int kv_heads_mismatching_tp(const ModelSpec& m, long long tp);

/// Whether tensor parallelism of degree `tp` splits every head-sharded part of the model evenly:
/// the attention heads, the Mamba heads and groups (Mamba-1: channels) and the linear-attention
/// key and value heads.
bool tp_divides(const ModelSpec& m, long long tp);
/// What `tp` must divide, for messages: e.g. "32 attention heads" or "128 Mamba heads and 8 groups".
std::string tp_divisors_text(const ModelSpec& m);

}  // namespace xpusim::workload
