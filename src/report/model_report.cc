#include "xpusim/report/model_report.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <sstream>

#include "xpusim/core/dtype.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"

namespace xpusim::report {

namespace {

using core::fmt_num;
using workload::ModelSpec;

const core::Dtype kWeightDtypes[] = {core::Dtype::Bf16,  core::Dtype::Fp8,   core::Dtype::Mxfp8,
                                     core::Dtype::Mxfp6, core::Dtype::Mxfp4, core::Dtype::Nvfp4};
const core::Dtype kKvDtypes[] = {core::Dtype::Bf16, core::Dtype::Fp8};

/// 405.9 B, 37.55 B, 680 M...
std::string count(double v) {
  if (v >= 1e9) return fmt_num(v / 1e9, 5) + " B";
  if (v >= 1e6) return fmt_num(v / 1e6, 4) + " M";
  return fmt_num(v, 4);
}

std::string flops(double v) {
  if (v >= 1e12) return fmt_num(v / 1e12, 4) + " TFLOP";
  if (v >= 1e9) return fmt_num(v / 1e9, 4) + " GFLOP";
  return fmt_num(v / 1e6, 4) + " MFLOP";
}

std::string bytes(core::Bytes b) {
  const double v = core::to_bytes(b);
  if (v >= 1073741824.0) return fmt_num(core::to_gib(b), 4) + " GiB";
  if (v >= 1048576.0) return fmt_num(v / 1048576.0, 4) + " MiB";
  return fmt_num(v / 1024.0, 4) + " KiB";
}

const char* attn_name(workload::AttnKind a) {
  switch (a) {
    case workload::AttnKind::Mha: return "mha";
    case workload::AttnKind::Gqa: return "gqa";
    case workload::AttnKind::Mla: return "mla";
  }
  return "?";
}
const char* mlp_name(workload::MlpKind k) {
  switch (k) {
    case workload::MlpKind::Gelu: return "gelu";
    case workload::MlpKind::Gated: return "gated";
    case workload::MlpKind::SquaredRelu: return "squared_relu";
  }
  return "?";
}
const char* pos_name(workload::PosKind p) {
  switch (p) {
    case workload::PosKind::Rope: return "rope";
    case workload::PosKind::Learned: return "learned";
    case workload::PosKind::Alibi: return "alibi";
    case workload::PosKind::None: return "none";
  }
  return "?";
}
const char* norm_name(workload::NormKind n) {
  return n == workload::NormKind::LayerNorm ? "layernorm" : "rmsnorm";
}

int moe_layer_count(const ModelSpec& m) {
  int n = 0;
  for (int i = 0; i < m.layers; ++i) n += m.layer_is_moe(i) ? 1 : 0;
  return n;
}

Json shape_json(const ModelSpec& m) {
  return {{"layers", m.layers},         {"hidden", m.hidden},
          {"heads", m.heads},           {"kv_heads", m.kv_heads},
          {"head_dim", m.head_dim},     {"ffn", m.ffn},
          {"vocab", m.vocab},           {"max_position", m.max_position},
          {"attention", attn_name(m.attention)}, {"mlp", mlp_name(m.mlp)},
          {"norm", norm_name(m.norm)},  {"position", pos_name(m.position)},
          {"tied_embeddings", m.tied_embeddings}, {"sliding_window", m.sliding_window}};
}

Json moe_json(const ModelSpec& m) {
  if (!m.is_moe()) return nullptr;
  return {{"experts", m.moe.num_experts},
          {"experts_per_token", m.moe.experts_per_token},
          {"expert_ffn", m.moe.expert_ffn},
          {"shared_experts", m.moe.shared_experts},
          {"moe_layers", moe_layer_count(m)}};
}

/// Layers of each block kind of a hybrid model.
struct BlockCounts {
  int mamba = 0, attention = 0, mlp = 0, attention_mlp = 0, linear_mlp = 0, mamba_mlp = 0, linear = 0;
};
BlockCounts block_counts(const ModelSpec& m) {
  BlockCounts c;
  for (int i = 0; i < m.layers; ++i) {
    switch (m.layer_block(i)) {
      case workload::LayerBlock::Mamba: ++c.mamba; break;
      case workload::LayerBlock::Attention: ++c.attention; break;
      case workload::LayerBlock::Mlp: ++c.mlp; break;
      case workload::LayerBlock::AttentionMlp: ++c.attention_mlp; break;
      case workload::LayerBlock::LinearAttentionMlp: ++c.linear_mlp; break;
      case workload::LayerBlock::MambaMlp: ++c.mamba_mlp; break;
      case workload::LayerBlock::Linear: ++c.linear; break;
    }
  }
  return c;
}

/// The Mamba mixer of a hybrid model.
Json mamba_json(const ModelSpec& m) {
  const BlockCounts c = block_counts(m);
  return {{"mamba_layers", c.mamba + c.mamba_mlp},
          {"attention_layers", c.attention + c.attention_mlp},
          {"mlp_layers", c.mlp + c.attention_mlp + c.mamba_mlp},
          {"mamba_version", m.mamba.version},
          {"heads", m.mamba.heads},
          {"head_dim", m.mamba.head_dim},
          {"state", m.mamba.state},
          {"groups", m.mamba.groups},
          {"conv_kernel", m.mamba.conv_kernel},
          {"chunk", m.mamba.chunk},
          {"dt_rank", m.mamba.dt_rank},
          {"state_bytes_per_sequence_bf16", core::to_bytes(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16))}};
}

/// The gated DeltaNet of a hybrid model (null without linear-attention layers).
Json linear_attention_json(const ModelSpec& m) {
  const BlockCounts c = block_counts(m);
  const auto& la = m.linear;
  return {{"linear_attention_layers", c.linear_mlp},
          {"attention_layers", c.attention + c.attention_mlp},
          {"key_heads", la.key_heads},
          {"value_heads", la.value_heads},
          {"key_dim", la.key_dim},
          {"value_dim", la.value_dim},
          {"conv_kernel", la.conv_kernel},
          {"chunk", la.chunk},
          {"state_bytes_per_sequence_bf16", core::to_bytes(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16))}};
}

/// A heterogeneous (Nemotron-NAS) model's layers: block kinds, linear replacements and the range
/// of KV heads and MLP widths.
struct NasSummary {
  BlockCounts blocks;
  int linear_mixers = 0, linear_mlps = 0;
  long long kv_min = 0, kv_max = 0, ffn_min = 0, ffn_max = 0;
};
NasSummary nas_summary(const ModelSpec& m) {
  NasSummary n;
  n.blocks = block_counts(m);
  for (int i = 0; i < m.layers; ++i) {
    n.linear_mixers += m.layer_linear_mixer(i) ? 1 : 0;
    n.linear_mlps += m.layer_linear_mlp(i) ? 1 : 0;
    if (const long long kv = m.layer_kv_heads(i); kv > 0) {
      n.kv_min = n.kv_min == 0 ? kv : std::min(n.kv_min, kv);
      n.kv_max = std::max(n.kv_max, kv);
    }
    if (const long long f = m.layer_has_mlp(i) ? m.layer_ffn(i) : 0; f > 0) {
      n.ffn_min = n.ffn_min == 0 ? f : std::min(n.ffn_min, f);
      n.ffn_max = std::max(n.ffn_max, f);
    }
  }
  return n;
}

Json nas_json(const ModelSpec& m) {
  const NasSummary n = nas_summary(m);
  Json layers = Json::array();  // one entry per layer, to plot or script
  for (int i = 0; i < m.layers; ++i)
    layers.push_back({{"kv_heads", m.layer_kv_heads(i)}, {"ffn", m.layer_has_mlp(i) ? m.layer_ffn(i) : 0},
                      {"linear_attention", m.layer_linear_mixer(i)}, {"linear_mlp", m.layer_linear_mlp(i)},
                      {"params", as_count(workload::layer_params(m, i).total())}});
  return {{"attention_mlp_layers", n.blocks.attention_mlp}, {"attention_only_layers", n.blocks.attention},
          {"mlp_only_layers", n.blocks.mlp}, {"linear_only_layers", n.blocks.linear},
          {"linear_attention_replacements", n.linear_mixers}, {"linear_mlp_replacements", n.linear_mlps},
          {"kv_heads_min", n.kv_min}, {"kv_heads_max", n.kv_max}, {"ffn_min", n.ffn_min}, {"ffn_max", n.ffn_max},
          {"per_layer", layers}};
}

void nas_text(std::ostream& o, const ModelSpec& m) {
  const NasSummary n = nas_summary(m);
  const auto range = [](long long lo, long long hi) {
    return lo == hi ? std::to_string(lo) : std::to_string(lo) + "–" + std::to_string(hi);
  };
  o << "  layers      per layer (Nemotron-NAS): " << n.blocks.attention_mlp << " attention + MLP, " << n.blocks.attention
    << " attention only, " << n.blocks.mlp << " MLP only, " << n.blocks.linear << " linear only; linear in place of "
    << n.linear_mixers << " attention and " << n.linear_mlps << " MLP; kv heads " << range(n.kv_min, n.kv_max)
    << ", MLP " << range(n.ffn_min, n.ffn_max) << "\n";
}

Json mla_json(const ModelSpec& m) {
  return {{"q_lora_rank", m.mla.q_lora_rank},
          {"kv_lora_rank", m.mla.kv_lora_rank},
          {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
          {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
          {"v_head_dim", m.mla.v_head_dim}};
}

Json bytes_json(const ModelFigures& f, Json& kv_per_token, Json& kv_per_sequence) {
  Json weights = Json::object();
  for (auto dt : kWeightDtypes) weights[core::dtype_name(dt)] = core::to_bytes(workload::weight_bytes(f.model, dt));
  kv_per_token = Json::object();
  kv_per_sequence = Json::object();
  for (auto dt : kKvDtypes) {
    kv_per_token[core::dtype_name(dt)] = core::to_bytes(workload::kv_bytes_per_token(f.model, dt));
    kv_per_sequence[core::dtype_name(dt)] = core::to_bytes(workload::kv_bytes_for_context(f.model, dt, f.context));
  }
  return weights;
}

/// The Mamba mixer of a Mamba-only (`ssm`) or hybrid model: its layers, shape and state.
void mamba_text(std::ostream& o, const ModelSpec& m) {
  const BlockCounts c = block_counts(m);
  const auto& s = m.mamba;
  o << (m.attention_layers() == 0 ? "  ssm         " : "  hybrid      ");
  if (c.mamba_mlp > 0)
    o << c.mamba_mlp << " Mamba-" << s.version << " and " << c.attention_mlp << " attention layers, each then an MLP; ";
  else
    o << c.mamba << " Mamba-" << s.version << ", " << c.attention << " attention, " << c.mlp << " MLP layers; ";
  if (s.version == 1)
    o << "Mamba " << s.inner() << " channels, state " << s.state << ", dt rank " << s.dt_rank << ", conv " << s.conv_kernel;
  else
    o << "Mamba " << s.heads << " heads × " << s.head_dim << ", state " << s.state << ", " << s.groups << " groups, conv "
      << s.conv_kernel << ", chunk " << s.chunk;
  o << "; state " << bytes(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16)) << " per sequence (bf16)\n";
}

void shape_text(std::ostream& o, const ModelSpec& m) {
  o << "  shape       " << m.layers << " layers, hidden " << m.hidden << ", ";
  if (m.attention_layers() > 0)
    o << m.heads << " heads (" << m.kv_heads << " kv, head dim " << m.head_dim << ", " << attn_name(m.attention) << "), ";
  else
    o << "no attention, ";
  if (m.ffn > 0 || m.attention_layers() > 0) o << mlp_name(m.mlp) << " MLP " << m.ffn << ", ";
  o << "vocab " << m.vocab << ", " << pos_name(m.position) << ", " << norm_name(m.norm)
    << (m.tied_embeddings ? ", tied embeddings" : "") << "\n";
  if (m.is_moe()) {
    o << "  experts     " << m.moe.num_experts << " routed (top-" << m.moe.experts_per_token << ", ffn "
      << m.moe.expert_ffn << ")";
    if (m.moe.shared_experts) o << " + " << m.moe.shared_experts << " shared";
    o << " in " << moe_layer_count(m) << " of " << m.layers << " layers\n";
  }
  if (m.has_block(workload::LayerBlock::LinearAttentionMlp)) {
    const BlockCounts c = block_counts(m);
    const auto& la = m.linear;
    o << "  hybrid      " << c.linear_mlp << " gated DeltaNet and " << c.attention_mlp << " attention layers"
      << (m.gated_attention ? " (gated)" : "") << "; DeltaNet " << la.key_heads << " key heads × " << la.key_dim
      << ", " << la.value_heads << " value heads × " << la.value_dim << ", conv " << la.conv_kernel << "; state "
      << bytes(workload::recurrent_state_bytes_per_sequence(m, core::Dtype::Bf16)) << " per sequence (bf16)\n";
  }
  if (m.has_block(workload::LayerBlock::Mamba) || m.has_block(workload::LayerBlock::MambaMlp)) mamba_text(o, m);
  if (m.sliding_window > 0) {
    int n = 0;
    for (int i = 0; i < m.layers; ++i) n += m.layer_sliding(i) ? 1 : 0;
    o << "  window      " << m.sliding_window << " tokens in " << n << " of " << m.layers << " layers\n";
  }
  if (m.heterogeneous()) nas_text(o, m);
  if (m.dsa.enabled())
    o << "  sparse      DeepSeek Sparse Attention: each query attends its top " << m.dsa.topk
      << " keys, chosen by a lightning indexer of " << m.dsa.index_heads << " heads × " << m.dsa.index_head_dim
      << " over every key\n";
  for (const auto& note : m.approximations) o << "  approximate " << note << "\n";
}

/// The modules a quantized checkpoint keeps in bf16 (ModelSpec::unquantized), comma-separated.
std::string unquantized_modules(const ModelSpec& m) {
  std::vector<std::string> out;
  if (m.unquantized.attention) out.push_back("attention");
  if (m.unquantized.router) out.push_back("router");
  if (m.unquantized.embedding) out.push_back("embedding");
  if (m.unquantized.lm_head) out.push_back("LM head");
  return core::join(out);
}

void bytes_text(std::ostream& o, const ModelFigures& f) {
  o << "  weights    ";
  for (auto dt : kWeightDtypes)
    o << " " << core::dtype_name(dt) << " " << bytes(workload::weight_bytes(f.model, dt))
      << (dt == core::Dtype::Nvfp4 ? "" : ",");
  if (f.model.unquantized.any())
    o << "\n              (" << unquantized_modules(f.model) << " kept in bf16 by the checkpoint's "
      << "quantization_config: " << bytes(core::bytes(workload::unquantized_params(f.model) *
                                      core::bytes_per_element(core::Dtype::Bf16))) << ")";
  o << "\n  kv cache   ";
  if (f.model.attention_layers() == 0) {
    o << " none (no attention layer: each sequence holds only its recurrent state)\n";
    return;
  }
  for (auto dt : kKvDtypes) {
    o << " " << core::dtype_name(dt) << " " << bytes(workload::kv_bytes_per_token(f.model, dt)) << "/token ("
      << bytes(workload::kv_bytes_for_context(f.model, dt, f.context)) << " per sequence at " << f.context << ")"
      << (dt == core::Dtype::Fp8 ? "" : ",");
  }
  o << "\n";
}

}  // namespace

ModelFigures model_figures(const workload::ModelSpec& m, long long seq_len, long long context) {
  ModelFigures f;
  f.model = m;
  f.seq_len = seq_len > 0 ? seq_len : std::min<long long>(m.max_position > 0 ? m.max_position : 4096, 4096);
  f.context = context > 0 ? context : f.seq_len;
  f.params = workload::count_params(m);
  f.train_none = workload::train_flops_per_token(m, f.seq_len, workload::RecomputeKind::None);
  f.train_selective = workload::train_flops_per_token(m, f.seq_len, workload::RecomputeKind::Selective);
  f.train_full = workload::train_flops_per_token(m, f.seq_len, workload::RecomputeKind::Full);
  f.prefill_flop_per_token = workload::prefill_flops_per_token(m, f.seq_len);
  f.decode_flop_per_token = workload::decode_flops_per_token(m, f.context);
  return f;
}

Json model_show_document(const Provenance& provenance, const std::string& what, const ModelFigures& f) {
  const ModelSpec& m = f.model;
  Json j = {{"id", m.id}, {"family", m.family}, {"source", m.source_path}};
  const Json shape = shape_json(m);
  for (const auto& [k, v] : shape.items()) j[k] = v;
  j["moe"] = moe_json(m);
  if (m.has_block(workload::LayerBlock::Mamba) || m.has_block(workload::LayerBlock::MambaMlp)) j["mamba"] = mamba_json(m);
  if (m.has_block(workload::LayerBlock::LinearAttentionMlp)) j["linear_attention"] = linear_attention_json(m);
  if (!m.approximations.empty()) j["approximations"] = m.approximations;
  if (m.heterogeneous()) j["heterogeneous_layers"] = nas_json(m);
  if (m.attention == workload::AttnKind::Mla) j["mla"] = mla_json(m);
  if (m.dsa.enabled())
    j["sparse_attention"] = {{"topk", m.dsa.topk}, {"index_heads", m.dsa.index_heads},
                             {"index_head_dim", m.dsa.index_head_dim}};
  j["params_total"] = as_count(f.params.total);
  j["params_active"] = as_count(f.params.active);
  j["params_embedding"] = as_count(f.params.embedding);
  j["params_lm_head"] = as_count(f.params.lm_head);
  j["params_matmul_active"] = as_count(f.params.matmul_active);
  j["params_unquantized"] = as_count(workload::unquantized_params(f.model));
  j["seq_len"] = f.seq_len;
  j["context"] = f.context;
  j["train_flop_per_token"] = {{"model", f.train_none.model},
                               {"hardware_selective", f.train_selective.hardware},
                               {"hardware_full", f.train_full.hardware}};
  j["prefill_flop_per_token"] = f.prefill_flop_per_token;
  j["decode_flop_per_token"] = f.decode_flop_per_token;
  Json kv_per_token, kv_per_sequence;
  j["weight_bytes"] = bytes_json(f, kv_per_token, kv_per_sequence);
  j["kv_bytes_per_token"] = kv_per_token;
  j["kv_bytes_per_sequence_at_context"] = kv_per_sequence;
  return document("model show", provenance, Json{{"model", what}}, j);
}

std::string model_show_text(const ModelFigures& f) {
  const ModelSpec& m = f.model;
  const auto& p = f.params;
  std::ostringstream o;
  o << "model " << m.id << " (" << m.family << ")  " << m.source_path << "\n";
  shape_text(o, m);
  o << "  params      total " << count(p.total) << ", active " << count(p.active) << ", embedding "
    << count(p.embedding) << ", LM head " << (m.tied_embeddings ? std::string("tied") : count(p.lm_head)) << "\n";
  o << "  train       at seq " << f.seq_len << ": " << flops(f.train_none.model) << "/token model, "
    << flops(f.train_selective.hardware) << " hw (selective recompute), " << flops(f.train_full.hardware)
    << " hw (full recompute)\n";
  o << "  prefill     " << flops(f.prefill_flop_per_token) << "/token (prompt " << f.seq_len << ")\n";
  o << "  decode      " << flops(f.decode_flop_per_token) << "/token at context " << f.context << "\n";
  bytes_text(o, f);
  return o.str();
}

Json model_list_document(const Provenance& provenance, const std::vector<workload::ModelSpec>& models) {
  Json list = Json::array();
  for (const auto& m : models) {
    const auto p = workload::count_params(m);
    list.push_back(Json{{"id", m.id}, {"family", m.family}, {"layers", m.layers}, {"hidden", m.hidden},
                        {"params_total", as_count(p.total)}, {"params_active", as_count(p.active)}});
  }
  return document("model list", provenance, Json::object(), Json{{"models", list}});
}

std::string model_list_text(const std::vector<workload::ModelSpec>& models) {
  std::string out = core::strformat("%-22s %-12s %7s %7s %12s %12s\n", "id", "family", "layers", "hidden", "params",
                                    "active");
  for (const auto& m : models) {
    const auto p = workload::count_params(m);
    out += core::strformat("%-22s %-12s %7d %7lld %12s %12s\n", m.id.c_str(), m.family.c_str(), m.layers, m.hidden,
                           count(p.total).c_str(), count(p.active).c_str());
  }
  return out;
}

}  // namespace xpusim::report
