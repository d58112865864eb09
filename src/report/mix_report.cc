#include "xpusim/report/mix_report.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "xpusim/core/format.h"

namespace xpusim::report {

namespace {

using core::strformat;

Json kind_json(const scenario::MixKindResult& k) {
  return Json{{"system", k.system},
              {"chip", k.chip},
              {"projected", k.projected},
              {"chips", k.chips},
              {"stages", k.stages},
              {"layer_time_ms", k.layer_time_s * 1e3},
              {"stage_time_ms", k.stage_time_s * 1e3},
              {"idle_fraction", k.idle_fraction},
              {"pp_comm_ms", k.pp_comm_s * 1e3},
              {"dp_optimizer_other_ms", k.rest_s * 1e3},
              {"layers", k.layers},
              {"energy_per_step_j", k.energy_per_step_j},
              {"power_per_chip_w", k.average_power_w},
              {"cost_per_step_usd", k.cost_per_step_usd},
              {"energy_estimated", k.energy_estimated},
              {"price_estimated", k.price_estimated}};
}

Json link_json(const scenario::MixResult& r) {
  Json j{{"fabric", r.link.fabric},
         {"fusion_domain", r.link.domain},
         {"rate_per_chip_per_direction_gb_s", r.link.rate_per_direction.base() / 1e9},
         {"latency_us", r.link.latency.base() * 1e6},
         {"slower_system", r.link.slower_system},
         {"bytes_per_crossing_per_chip", r.activation_bytes_per_chip},
         {"crossing_ms", r.cross_transfer_s * 1e3},
         {"bytes_per_step", r.cross_bytes_per_step}};
  if (!r.link.fusion) j["why_not_fusion"] = r.link.why_not_fusion;
  return j;
}

}  // namespace

Json mix_document(const Provenance& provenance, const scenario::TrainInputs& in, const std::string& mix,
                  const scenario::MixResult& r) {
  Json inputs = inputs_json(in);
  inputs["mix"] = mix;
  Json kinds = Json::array();
  for (const auto& k : r.kinds) kinds.push_back(kind_json(k));
  Json body{{"model", r.model},
            {"tp", r.tp},
            {"dp", r.dp},
            {"layers", r.layers},
            {"micro_batch", r.micro_batch},
            {"global_batch", r.global_batch},
            {"micro_batches", r.micro_batches},
            {"seq_len", r.seq_len},
            {"kinds", kinds},
            {"schedule", r.vpp > 1 ? "interleaved" : "1f1b"},
            {"vpp", r.vpp},
            {"stage_layers", r.stage_layers},
            {"chunk_layers", r.chunk_layers},
            {"crossings_per_micro_batch", r.crossings},
            {"activation_transfer", link_json(r)},
            {"step_time_s", r.step_s},
            {"breakdown_s", Json{{"compute", r.compute_s}, {"bubble", r.bubble_s}, {"pp_comm", r.pp_comm_s},
                                 {"dp_optimizer_other", r.rest_s}}},
            {"bubble_fraction", r.bubble_fraction},
            {"tokens_per_s", r.tokens_per_s},
            {"energy_per_step_j", r.energy_per_step_j},
            {"cost_per_step_usd", r.cost_per_step_usd},
            {"energy_per_token_j", r.joules_per_token},
            {"cost_per_million_tokens_usd", r.usd_per_million_tokens},
            {"fits", r.fits},
            {"assumptions", r.assumptions}};
  if (!r.fits) body["reason"] = r.reason;
  return document("train", provenance, inputs, body);
}

std::string mix_text(const scenario::MixResult& r) {
  std::ostringstream o;
  o << strformat("%s, mixed pipeline of %zu stages (tp=%d dp=%d, micro-batch %lld x %lld per step, seq %lld)\n",
                 r.model.c_str(), r.stage_layers.size(), r.tp, r.dp, r.micro_batch, r.micro_batches, r.seq_len);
  if (r.vpp > 1)
    o << strformat("  schedule interleaved: %d chunks per stage (largest %.2f ms/micro-batch), %d boundary crossings "
                   "per micro-batch each way\n",
                   r.vpp, r.chunk_s * 1e3, r.crossings);
  size_t stage = 0;
  for (const auto& k : r.kinds) {
    std::string layers;
    for (int s = 0; s < k.stages; ++s, ++stage)
      layers += (s ? "," : "") + std::to_string(r.stage_layers[stage]);
    o << strformat("  %s%s: %lld chips, %d stage(s), layers [%s], %.3f ms/layer, stage %.2f ms/micro-batch, idle %.1f%%\n",
                   k.system.c_str(), k.projected ? " (projected)" : "", k.chips, k.stages, layers.c_str(),
                   k.layer_time_s * 1e3, k.stage_time_s * 1e3, 100 * k.idle_fraction);
  }
  o << strformat("  activations over %s%s: %.1f GB/s per chip per direction (slower endpoint: %s); %.2f MB per "
                 "crossing per chip in %.3f ms; %.3f GB per step\n",
                 r.link.fabric.c_str(), r.link.fusion ? (" (domain " + r.link.domain + ")").c_str() : "",
                 r.link.rate_per_direction.base() / 1e9, r.link.slower_system.c_str(),
                 r.activation_bytes_per_chip / 1e6, r.cross_transfer_s * 1e3, r.cross_bytes_per_step / 1e9);
  o << strformat("step %.3f s = compute %.3f + bubble %.3f (%.1f%%) + pp comm %.4f + dp/optimizer/other %.3f; "
                 "%.0f tokens/s\n",
                 r.step_s, r.compute_s, r.bubble_s, 100 * r.bubble_fraction, r.pp_comm_s, r.rest_s, r.tokens_per_s);
  o << strformat("energy %.4g kWh per step (%.3f J per token), $%.4g per step ($%.4g per million tokens); estimated\n",
                 r.energy_per_step_j / 3.6e6, r.joules_per_token, r.cost_per_step_usd, r.usd_per_million_tokens);
  for (const auto& k : r.kinds)
    o << strformat("  %s: %d layers, %.0f W per chip, %.4g kWh and $%.4g per step\n", k.system.c_str(), k.layers,
                   k.average_power_w, k.energy_per_step_j / 3.6e6, k.cost_per_step_usd);
  for (const auto& a : r.assumptions) o << "  assumption: " << a << "\n";
  return o.str();
}

}  // namespace xpusim::report
