#include "xpusim/report/json_convention.h"

#include <nlohmann/json.hpp>
#include <cmath>

#include "xpusim/core/digest.h"

namespace xpusim::report {

namespace {

template <typename T>
void put(Json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

void put_seconds(Json& j, const char* key, const std::optional<core::Seconds>& v) {
  if (v) j[key] = core::to_seconds(*v);
}

Json digest_or_null(const std::string& digest) { return digest.empty() ? Json(nullptr) : Json(digest); }

}  // namespace

std::string xpusim_version() { return XS_VERSION; }

Provenance provenance(const std::string& catalog_dir, const std::string& calibration_dir,
                      const std::string& calibration_override) {
  Provenance p;
  if (!catalog_dir.empty()) p.catalog_digest = core::files_digest({catalog_dir});
  std::vector<std::string> calibration;
  if (!calibration_dir.empty()) calibration.push_back(calibration_dir);
  if (!calibration_override.empty()) calibration.push_back(calibration_override);
  if (!calibration.empty()) p.calibration_digest = core::files_digest(calibration);
  return p;
}

void set_user_catalog(Provenance& p, const std::string& shipped_dir, const std::vector<std::string>& user_dirs,
                      const std::vector<hw::UserEntry>& entries) {
  if (user_dirs.empty()) return;
  std::vector<std::string> roots{shipped_dir};
  roots.insert(roots.end(), user_dirs.begin(), user_dirs.end());
  p.catalog_digest = core::files_digest(roots);
  p.catalog_user = entries;
}

Json document(const std::string& command, const Provenance& provenance, Json inputs, const Json& body) {
  Json j;
  j["schema_version"] = kSchemaVersion;
  j["command"] = command;
  j["xpusim_version"] = xpusim_version();
  j["catalog_digest"] = digest_or_null(provenance.catalog_digest);
  j["calibration_digest"] = digest_or_null(provenance.calibration_digest);
  if (!provenance.catalog_user.empty()) {
    Json& user = j["catalog_user"] = Json::array();
    for (const auto& e : provenance.catalog_user) {
      user.push_back({{"kind", e.kind}, {"id", e.id}, {"file", e.file}, {"replaces_shipped", e.replaces_shipped}});
    }
  }
  j["inputs"] = std::move(inputs);
  for (const auto& [k, v] : body.items()) j[k] = v;
  return j;
}

long long as_count(double v) { return std::llround(v); }

Json inputs_json(const scenario::TrainInputs& in) {
  Json j = Json::object();
  put(j, "system", in.system);
  put(j, "model", in.model);
  put(j, "chips", in.chips);
  put(j, "framework", in.framework);
  put(j, "executor", in.executor);
  Json plan = Json::object();
  put(plan, "tp", in.tp);
  put(plan, "pp", in.pp);
  put(plan, "dp", in.dp);
  put(plan, "cp", in.cp);
  put(plan, "ep", in.ep);
  put(plan, "vpp", in.vpp);
  put(plan, "micro_batch", in.micro_batch);
  put(plan, "precision", in.precision);
  put(plan, "zero", in.zero);
  put(plan, "recompute", in.recompute);
  put(plan, "moe_load_imbalance", in.moe_load_imbalance);
  put(plan, "moe_capacity_factor", in.moe_capacity_factor);
  put(plan, "expert_tp", in.expert_tp);
  put(plan, "moe_pad_to_capacity", in.moe_pad_to_capacity);
  put(plan, "recompute_layers", in.recompute_layers);
  j["plan"] = plan;
  Json workload = Json::object();
  put(workload, "global_batch", in.global_batch);
  put(workload, "seq_len", in.seq_len);
  if (in.max_global_batch_tokens) workload["max_global_batch_tokens"] = as_count(*in.max_global_batch_tokens);
  if (in.train_tokens) workload["train_tokens"] = as_count(*in.train_tokens);
  put(workload, "deadline", in.deadline);
  put(workload, "budget_usd", in.budget);
  j["workload"] = workload;
  put_overrides(j, in.overrides);
  Json scale = Json::object();
  put(scale, "checkpoint_tier", in.checkpoint_tier);
  put(scale, "spares", in.spares);
  put(scale, "checkpoint_interval_s", in.checkpoint_interval);
  put(scale, "runs", in.runs);
  put(scale, "seed", in.seed);
  put(scale, "pue", in.pue);
  put(scale, "scaling", in.scaling);
  put(scale, "straggler_ratio", in.straggler);
  put(scale, "straggler_stage", in.straggler_stage);
  if (!scale.empty()) j["scale"] = scale;
  return j;
}

Json inputs_json(const scenario::ServeInputs& in) {
  Json j = Json::object();
  put(j, "system", in.system);
  put(j, "prefill_system", in.prefill_system);
  put(j, "decode_system", in.decode_system);
  put(j, "model", in.model);
  put(j, "chips", in.chips);
  put(j, "framework", in.framework);
  Json plan = Json::object();
  put(plan, "tp", in.tp);
  put(plan, "pp", in.pp);
  put(plan, "ep", in.ep);
  put(plan, "attention_dp", in.attention_dp);
  put(plan, "precision", in.precision);
  put(plan, "weight_precision", in.weight_precision);
  put(plan, "kv_precision", in.kv_precision);
  put(plan, "state_precision", in.state_precision);
  put(plan, "scheduler", in.scheduler);
  put(plan, "max_num_seqs", in.max_num_seqs);
  put(plan, "max_batched_tokens", in.max_batched_tokens);
  put(plan, "static_batch", in.static_batch);
  put(plan, "block_size", in.block_size);
  put(plan, "chunked_prefill", in.chunked_prefill);
  put(plan, "compiled_seq_len", in.compiled_seq_len);
  put(plan, "prefill_chips", in.prefill_chips);
  put(plan, "decode_chips", in.decode_chips);
  put(plan, "draft_len", in.draft_len);
  put(plan, "acceptance", in.acceptance);
  put(plan, "draft_model", in.draft_model);
  put(plan, "moe_load_imbalance", in.moe_load_imbalance);
  put(plan, "prefix_cache", in.prefix_cache);
  put(plan, "prefix_cache_tokens", in.prefix_cache_tokens);
  put(plan, "kv_tier", in.kv_tier);
  put(plan, "kv_pool", in.kv_pool);
  j["plan"] = plan;
  Json workload = Json::object();
  put(workload, "in_len", in.in_len);
  put(workload, "out_len", in.out_len);
  put(workload, "requests", in.requests);
  put(workload, "seed", in.seed);
  if (in.rate) workload["rate_per_s"] = *in.rate;
  put(workload, "concurrency", in.concurrency);
  put(workload, "offline", in.offline);
  put(workload, "arrivals", in.arrivals);
  put(workload, "arrivals_block_tokens", in.arrivals_block_tokens);
  put(workload, "arrivals_window", in.arrivals_window);
  put(workload, "arrivals_sample", in.arrivals_sample);
  put(workload, "arrivals_speedup", in.arrivals_speedup);
  put_seconds(workload, "timeout_s", in.timeout);
  put_seconds(workload, "ttft_slo_s", in.ttft_slo);
  put_seconds(workload, "tpot_slo_s", in.tpot_slo);
  j["workload"] = workload;
  put(j, "pue", in.pue);
  put_overrides(j, in.overrides);
  return j;
}

void put_overrides(Json& inputs, const scenario::EstimateOverrides& o) {
  if (!o.any()) return;
  Json j = Json::object();
  put(j, "price_usd_per_chip_hour", o.price_usd_per_chip_hour);
  put(j, "tdp_w", o.tdp_w);
  inputs["overrides"] = j;
}

}  // namespace xpusim::report
