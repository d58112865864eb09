// xpusim model: list the shipped models, or show one model's shape, parameters, FLOPs per
// token and bytes (weights per dtype, KV cache).
//
//   xpusim model list [--json]
//   xpusim model show PATH_OR_ID [--json] [--seq N] [--context L]

#include <algorithm>
#include <iostream>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/dtype.h"
#include "xpusim/core/format.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::cli {

namespace {

using config::Json;
using core::fmt_num;
using workload::ModelSpec;

const core::Dtype kWeightDtypes[] = {core::Dtype::Bf16,  core::Dtype::Fp8,   core::Dtype::Mxfp8,
                                     core::Dtype::Mxfp6, core::Dtype::Mxfp4, core::Dtype::Nvfp4};
const core::Dtype kKvDtypes[] = {core::Dtype::Bf16, core::Dtype::Fp8};

std::string models_dir() { return data_dir() + "/models"; }

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
  }
  return "?";
}
const char* norm_name(workload::NormKind n) {
  return n == workload::NormKind::LayerNorm ? "layernorm" : "rmsnorm";
}

long long as_count(double v) { return static_cast<long long>(v + 0.5); }

int run_list(bool json) {
  const auto ids = workload::model_ids(models_dir());
  Json out = Json::array();
  if (!json) {
    std::cout << core::strformat("%-22s %-12s %7s %7s %12s %12s\n", "id", "family", "layers",
                                 "hidden", "params", "active");
  }
  for (const auto& id : ids) {
    const ModelSpec m = workload::load_model(id, models_dir());
    const auto p = workload::count_params(m);
    if (json) {
      out.push_back(Json{{"id", id}, {"family", m.family}, {"layers", m.layers},
                         {"hidden", m.hidden}, {"params_total", as_count(p.total)},
                         {"params_active", as_count(p.active)}});
    } else {
      std::cout << core::strformat("%-22s %-12s %7d %7lld %12s %12s\n", id.c_str(),
                                   m.family.c_str(), m.layers, m.hidden, count(p.total).c_str(),
                                   count(p.active).c_str());
    }
  }
  if (json) std::cout << Json{{"models", out}}.dump(2) << "\n";
  return 0;
}

int run_show(const std::string& what, bool json, long long seq, long long context) {
  const ModelSpec m = workload::load_model(what, models_dir());
  if (seq <= 0) seq = std::min<long long>(m.max_position > 0 ? m.max_position : 4096, 4096);
  if (context <= 0) context = seq;
  const auto p = workload::count_params(m);
  using workload::RecomputeKind;
  const auto none = workload::train_flops_per_token(m, seq, RecomputeKind::None);
  const auto sel = workload::train_flops_per_token(m, seq, RecomputeKind::Selective);
  const auto full = workload::train_flops_per_token(m, seq, RecomputeKind::Full);
  const double prefill = workload::prefill_flops_per_token(m, seq);
  const double decode = workload::decode_flops_per_token(m, context);

  if (json) {
    Json j;
    j["id"] = m.id;
    j["family"] = m.family;
    j["source"] = m.source_path;
    j["layers"] = m.layers;
    j["hidden"] = m.hidden;
    j["heads"] = m.heads;
    j["kv_heads"] = m.kv_heads;
    j["head_dim"] = m.head_dim;
    j["ffn"] = m.ffn;
    j["vocab"] = m.vocab;
    j["max_position"] = m.max_position;
    j["attention"] = attn_name(m.attention);
    j["mlp"] = mlp_name(m.mlp);
    j["norm"] = norm_name(m.norm);
    j["position"] = pos_name(m.position);
    j["tied_embeddings"] = m.tied_embeddings;
    j["sliding_window"] = m.sliding_window;
    if (m.is_moe()) {
      int moe_layers = 0;
      for (int i = 0; i < m.layers; ++i) moe_layers += m.layer_is_moe(i) ? 1 : 0;
      j["moe"] = Json{{"experts", m.moe.num_experts},
                      {"experts_per_token", m.moe.experts_per_token},
                      {"expert_ffn", m.moe.expert_ffn},
                      {"shared_experts", m.moe.shared_experts},
                      {"moe_layers", moe_layers}};
    } else {
      j["moe"] = nullptr;
    }
    if (m.attention == workload::AttnKind::Mla) {
      j["mla"] = Json{{"q_lora_rank", m.mla.q_lora_rank},
                      {"kv_lora_rank", m.mla.kv_lora_rank},
                      {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                      {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                      {"v_head_dim", m.mla.v_head_dim}};
    }
    j["params_total"] = as_count(p.total);
    j["params_active"] = as_count(p.active);
    j["params_embedding"] = as_count(p.embedding);
    j["params_lm_head"] = as_count(p.lm_head);
    j["params_matmul_active"] = as_count(p.matmul_active);
    j["seq_len"] = seq;
    j["context"] = context;
    j["train_flops_per_token"] = Json{{"model", none.model},
                                      {"hardware_selective", sel.hardware},
                                      {"hardware_full", full.hardware}};
    j["prefill_flops_per_token"] = prefill;
    j["decode_flops_per_token"] = decode;
    Json w;
    for (auto dt : kWeightDtypes) w[core::dtype_name(dt)] = core::to_bytes(workload::weight_bytes(m, dt));
    j["weight_bytes"] = w;
    Json kv, kvc;
    for (auto dt : kKvDtypes) {
      kv[core::dtype_name(dt)] = core::to_bytes(workload::kv_bytes_per_token(m, dt));
      kvc[core::dtype_name(dt)] = core::to_bytes(workload::kv_bytes_for_context(m, dt, context));
    }
    j["kv_bytes_per_token"] = kv;
    j["kv_bytes_per_sequence_at_context"] = kvc;
    std::cout << j.dump(2) << "\n";
    return 0;
  }

  std::cout << "model " << m.id << " (" << m.family << ")  " << m.source_path << "\n";
  std::cout << "  shape       " << m.layers << " layers, hidden " << m.hidden << ", " << m.heads
            << " heads (" << m.kv_heads << " kv, head dim " << m.head_dim << ", "
            << attn_name(m.attention) << "), " << mlp_name(m.mlp) << " MLP " << m.ffn
            << ", vocab " << m.vocab << ", " << pos_name(m.position) << ", " << norm_name(m.norm)
            << (m.tied_embeddings ? ", tied embeddings" : "") << "\n";
  if (m.is_moe()) {
    int moe_layers = 0;
    for (int i = 0; i < m.layers; ++i) moe_layers += m.layer_is_moe(i) ? 1 : 0;
    std::cout << "  experts     " << m.moe.num_experts << " routed (top-" << m.moe.experts_per_token
              << ", ffn " << m.moe.expert_ffn << ")";
    if (m.moe.shared_experts) std::cout << " + " << m.moe.shared_experts << " shared";
    std::cout << " in " << moe_layers << " of " << m.layers << " layers\n";
  }
  if (m.sliding_window > 0) {
    int n = 0;
    for (int i = 0; i < m.layers; ++i) n += m.layer_sliding(i) ? 1 : 0;
    std::cout << "  window      " << m.sliding_window << " tokens in " << n << " of " << m.layers
              << " layers\n";
  }
  std::cout << "  params      total " << count(p.total) << ", active " << count(p.active)
            << ", embedding " << count(p.embedding) << ", LM head "
            << (m.tied_embeddings ? std::string("tied") : count(p.lm_head)) << "\n";
  std::cout << "  train       at seq " << seq << ": " << flops(none.model)
            << "/token model, " << flops(sel.hardware) << " hw (selective recompute), "
            << flops(full.hardware) << " hw (full recompute)\n";
  std::cout << "  prefill     " << flops(prefill) << "/token (prompt " << seq << ")\n";
  std::cout << "  decode      " << flops(decode) << "/token at context " << context << "\n";
  std::cout << "  weights    ";
  for (auto dt : kWeightDtypes) {
    std::cout << " " << core::dtype_name(dt) << " " << bytes(workload::weight_bytes(m, dt))
              << (dt == core::Dtype::Nvfp4 ? "" : ",");
  }
  std::cout << "\n  kv cache   ";
  for (auto dt : kKvDtypes) {
    std::cout << " " << core::dtype_name(dt) << " " << bytes(workload::kv_bytes_per_token(m, dt))
              << "/token (" << bytes(workload::kv_bytes_for_context(m, dt, context))
              << " per sequence at " << context << ")" << (dt == core::Dtype::Fp8 ? "" : ",");
  }
  std::cout << "\n";
  return 0;
}

}  // namespace

int run_model(const Args& args) {
  CLI::App app{"parameters, FLOPs and bytes of a model (HF config.json or id)", "xpusim model"};
  app.require_subcommand(1);
  bool list_json = false;
  auto* list = app.add_subcommand("list", "list the shipped models (" + models_dir() + ")");
  list->add_flag("--json", list_json, "print one JSON document");

  std::string what;
  bool show_json = false;
  long long seq = 0, context = 0;
  auto* show = app.add_subcommand("show", "shape, parameters, FLOPs per token and bytes of a model");
  show->add_option("model", what, "model id (see 'xpusim model list') or path to a config.json")
      ->required();
  show->add_flag("--json", show_json, "print one JSON document");
  show->add_option("--seq", seq, "sequence length for training and prefill FLOPs "
                                 "(default: min(max_position, 4096))")
      ->check(CLI::PositiveNumber);
  show->add_option("--context", context, "context length for decode FLOPs and KV (default: seq)")
      ->check(CLI::PositiveNumber);

  const int rc = parse(app, args);
  if (rc >= 0) return rc;
  if (list->parsed()) return run_list(list_json);
  return run_show(what, show_json, seq, context);
}

}  // namespace xpusim::cli
