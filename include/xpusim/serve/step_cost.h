#pragma once
// Cost of one engine iteration (a "step") of one model replica: the linear layers of every
// token in the step (compute/ ChipModel per operator), attention over each sequence's context
// (prefill: causal pairs at the flash-attention rate; decode: the KV cache streamed from HBM),
// the tensor/expert/pipeline-parallel collectives per layer (net/ collective_cost on the
// system's real topology), the LM head for sequences that sample, and the framework's fixed
// per-step and per-layer overheads. Linear-layer and collective costs depend only on the token
// count and are memoised per count, so a step costs O(1) after warm-up.

#include <memory>
#include <vector>

#include "xpusim/compute/chip_model.h"
#include "xpusim/core/dtype.h"
#include "xpusim/core/result.h"
#include "xpusim/core/units.h"
#include "xpusim/hw/spec.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/serve/framework.h"
#include "xpusim/workload/model.h"
#include "xpusim/workload/ops.h"

namespace xpusim::net {
class Topology;
struct CollectiveCost;
}  // namespace xpusim::net

namespace xpusim::serve {

/// Where one replica runs and how it is split.
struct ReplicaPlan {
  mapping::ServePlan plan;        ///< tp, pp, ep and the weight / KV / math dtypes
  /// DP attention (SGLang/DeepSeek style): every chip runs attention for its own sequences
  /// (tp = 1) while the experts are sharded ep-ways over the ep chips; each chip is then an
  /// engine of its own whose MoE layers exchange tokens with the other ep-1 chips.
  bool attention_dp = false;
  /// Chips one engine spans (tp × pp, or 1 with attention_dp).
  int engine_chips() const { return attention_dp ? 1 : plan.tp * plan.pp; }
  /// Chips the collectives of one engine span (ep with attention_dp).
  int group_chips() const { return attention_dp ? plan.ep : plan.tp * plan.pp; }
};

/// The work of one step, aggregated over its sequences.
struct StepWork {
  long long prefill_tokens = 0;  ///< prompt tokens processed in this step (all chunks)
  double prefill_pairs = 0;      ///< Σ over chunks q·(p + q/2): causal query-key pairs
  /// The same pairs with each query's keys capped at sparse attention's top-k (prefill_pairs
  /// for a model without sparse attention).
  double prefill_attended_pairs = 0;
  long long prefill_seqs = 0;    ///< chunks in the step
  long long sampled_prefills = 0;  ///< chunks that end their prompt (produce a first token)
  long long decode_seqs = 0;     ///< sequences decoding in this step
  double decode_context = 0;     ///< Σ context (tokens in the KV cache) of decoding sequences
  long long decode_q = 1;        ///< tokens per decoding sequence (1 + draft length when verifying)
};

/// Causal query-key pairs of a prompt chunk of `q` tokens after `done` earlier ones, each query
/// seeing at most `key_cap` keys (0 = every earlier key, q·(done + q/2)).
double chunk_pairs(double done, double q, long long key_cap);
/// A prompt chunk added to a step: its tokens and its pairs, full and capped at `key_cap`.
void add_prefill_chunk(double done, double q, long long key_cap, StepWork& w);

/// Breakdown of one step's time (the parts add up to `total`).
struct StepCost {
  core::Seconds total;
  core::Seconds linear;     ///< GEMMs, norms, activations, LM head
  core::Seconds attention;
  core::Seconds comm;       ///< TP all-reduce, EP all-to-all, PP send/recv
  core::Seconds overhead;   ///< framework per-step + per-layer overheads
  core::Bytes hbm_bytes;    ///< bytes streamed from HBM per chip (weights + KV)
  core::Flops flops;        ///< FLOPs per chip (in the plan's math dtype)
  core::Bytes scale_up_bytes;   ///< bytes sent per chip over scale-up links (TP, EP, PP)
  core::Bytes scale_out_bytes;  ///< bytes sent per chip over the scale-out fabric
};

/// Memory per chip of one engine: weights and workspace from mapping's memory model
/// (mapping::serve_memory_per_chip), the KV cache from what is left.
struct ReplicaMemory {
  core::Bytes hbm;              ///< HBM capacity per chip
  core::Bytes weights;          ///< weights per chip
  core::Bytes draft_weights;    ///< a speculative-decoding draft model's weights per chip (on the same chips)
  core::Bytes workspace;        ///< runtime context, communication buffers, fragmentation
  core::Bytes kv_capacity;      ///< KV cache per chip (fraction of what is left)
  core::Bytes kv_per_token;     ///< KV bytes per token per chip (all layers on the chip)
  /// Cache units the KV cache holds per engine: tokens; for a model without attention (no KV),
  /// sequence states (`token_units` 0, `state_tokens` 1).
  long long kv_tokens = 0;
  /// Models with recurrent layers (Mamba, DeltaNet): the state one sequence holds per chip whatever
  /// its length, and that state in cache units (KV-token equivalents, rounded up; 1 without
  /// attention), which every running sequence reserves; 0 without recurrent layers.
  core::Bytes state_per_sequence;
  long long state_tokens = 0;
  /// Cache units one token of context takes: 1; 0 for a model without attention.
  long long token_units = 1;
  /// Sequences whose state alone fits the cache (0 without recurrent layers).
  long long state_sequences() const { return state_tokens > 0 ? kv_tokens / state_tokens : 0; }
  /// Tokens the KV cache holds per engine (0 without attention: there is no KV cache).
  long long kv_cache_tokens() const { return token_units > 0 ? kv_tokens : 0; }
};

class StepCostModel {
 public:
  /// `topo` may be null for a single-chip engine; otherwise it must outlive the model.
  /// `memory`: the memory model's parameters (the workspace), shared with training.
  StepCostModel(const hw::SystemSpec& sys, const workload::ModelSpec& model, ReplicaPlan plan,
                FrameworkProfile profile, const mapping::MemoryParams& memory,
                const net::Topology* topo);
  ~StepCostModel();
  StepCostModel(StepCostModel&&) noexcept;

  /// Time of one step doing `w`.
  StepCost cost(const StepWork& w) const;
  /// Total time only (the simulator's hot path).
  core::Seconds time(const StepWork& w) const;
  /// Memory per chip; kv_tokens ≤ 0 means the weights do not fit.
  const ReplicaMemory& memory() const { return mem_; }
  /// A draft model's weights held on the same chips: the KV cache gets what is left after them.
  void hold_draft_weights(core::Bytes per_chip);
  const FrameworkProfile& profile() const { return profile_; }
  const ReplicaPlan& plan() const { return plan_; }
  const workload::ModelSpec& model() const { return model_; }
  const hw::SystemSpec& system() const { return sys_; }
  /// Achievable HBM bandwidth per chip under this framework.
  core::ByteRate hbm_rate() const;

 private:
  /// Linear layers and collectives of a step of a given token count (memoised per count).
  struct Linear {
    bool known = false;  ///< false: a memo-table slot not computed yet
    double time_s = 0, flops = 0, bytes = 0, comm_s = 0;
    double scale_up_bytes = 0, scale_out_bytes = 0;
  };
  /// Collectives of a step: time and bytes sent per chip by link class.
  struct Comm {
    double seconds = 0, scale_up_bytes = 0, scale_out_bytes = 0;
    void add(const net::CollectiveCost& c, double times);
  };
  /// Attention of a step: time, FLOPs and KV bytes read per chip (accumulated in this order).
  struct Attention {
    double seconds = 0, flops = 0, kv_bytes = 0;
  };
  void add_prefill_attention(const StepWork& w, Attention& attn) const;
  void add_decode_attention(const StepWork& w, Attention& attn) const;
  /// Recurrent layers (Mamba-2, DeltaNet): the chunked scan of the prompt tokens and the recurrent
  /// step of the decoding sequences (state read and written), counted with attention.
  void add_recurrent_scan(const StepWork& w, Attention& attn) const;
  void build_chip_models();
  void count_layer_kinds();
  void set_attention_shape();
  void size_memory(const mapping::MemoryParams& memory);
  /// The KV cache (or state cache) from what HBM leaves after weights, draft and workspace.
  void size_cache();
  void cost_lm_head();
  /// TP degree of attention and dense layers (1 with DP attention).
  int attention_tp() const;
  /// The shard of one layer for a step of `tokens` tokens.
  workload::LayerShard shard(long long tokens, bool prompt = false) const;
  /// Linear layers of a step of `tokens` tokens; `prompt_rate`: at the prefill math rate.
  Linear linear(long long tokens, bool prompt_rate) const;
  Linear linear_uncached(long long tokens, bool prompt_rate) const;
  Comm communication(long long tokens) const;

  const hw::SystemSpec& sys_;
  workload::ModelSpec model_;
  ReplicaPlan plan_;
  FrameworkProfile profile_;
  const net::Topology* topo_;
  std::unique_ptr<compute::ChipModel> chip_;
  std::unique_ptr<compute::ChipModel> chip_prompt_;  ///< math rates × prefill_efficiency
  /// Prompt expert GEMMs on the all-experts path: × moe_prefill_efficiency as well.
  std::unique_ptr<compute::ChipModel> chip_prompt_experts_;
  ReplicaMemory mem_;
  compute::Precision prec_;
  int layers_per_chip_ = 1;
  // Layer kinds on the busiest pipeline stage: (is_moe, sliding, block, shape) → count.
  struct Kind {
    bool moe;
    bool sliding;
    int count;
    int layer;
    workload::LayerBlock block = workload::LayerBlock::AttentionMlp;
    workload::LayerShape shape;  ///< a heterogeneous model's per-layer sizes (Nemotron-NAS)
    // A recurrent kind (Mamba, DeltaNet): its scan over a long prompt (m and q_len are set per
    // step), and per sequence on this chip its state bytes and the FLOPs of one decode token.
    bool recurrent = false;
    workload::Op scan;
    double state_bytes = 0, step_flops = 0;
    // Decode attention, set with the attention shape: whether the kind attends, and the KV
    // elements a layer of it reads per token of context on this chip.
    bool attends = false;
    double kv_elems_per_token = 0;
  };
  /// The recurrent fields of a new kind, computed once.
  void describe_recurrent(Kind& k) const;
  std::vector<Kind> kinds_;
  int attention_layers_per_chip_ = 0;
  /// Operators of one forward pass on this chip (its layers' workload::layer_ops, plus
  /// FrameworkProfile::moe_eager_operators per routed-expert layer): what the host dispatches one
  /// by one in a step outside CUDA graphs.
  double operators_per_forward_ = 0;
  /// Attention layers on this chip by their KV heads on the chip (one entry unless they vary).
  std::vector<std::pair<double, int>> kv_head_groups_;
  /// KV heads of layer `layer`'s attention on this chip (padded up; MLA's shared latent: 1).
  double kv_heads_on_chip(int layer) const;
  /// Row-parallel outputs (attention, MLP or Mamba out_proj) each followed by a TP all-reduce.
  double tp_reductions_per_chip_ = 0;
  // Attention shape per chip.
  double heads_ = 1, d_qk_ = 128, d_v_ = 128, kv_elem_bytes_ = 2;
  double indexer_width_ = 0;  ///< sparse attention: the indexer's query heads on a chip × their width
  double attn_rate_ = 1, hbm_rate_ = 1, head_rate_ = 1;  // FLOP/s and B/s, fixed per model
  double head_time_per_token_ = 0, head_flops_per_token_ = 0, head_bytes_ = 0;
  mutable std::vector<Linear> cache_, cache_prompt_;
};

}  // namespace xpusim::serve
