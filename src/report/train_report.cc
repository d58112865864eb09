#include "xpusim/report/train_report.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "xpusim/core/format.h"
#include "xpusim/report/scale_report.h"

namespace xpusim::report {

using core::fmt_num;

Json plan_json(const mapping::TrainPlan& p) {
  return Json{{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp}, {"ep", p.ep}, {"vpp", p.vpp},
              {"sequence_parallel", p.sequence_parallel}, {"zero", mapping::zero_name(p.zero)},
              {"recompute", mapping::recompute_name(p.recompute)}, {"micro_batch", p.micro_batch},
              {"global_batch", p.global_batch}, {"seq_len", p.seq_len},
              {"precision", core::dtype_name(p.precision)}, {"micro_batches", p.micro_batches()},
              {"async_tp", p.async_tp}, {"lora_rank", p.lora_rank},
              {"lora_targets", p.lora_rank > 0 ? Json(workload::lora_targets_name(p.lora_targets)) : Json(nullptr)},
              {"mtp_layers", p.mtp_layers}, {"moe_load_imbalance", p.moe_load_imbalance}, {"expert_tp", p.etp()},
              {"moe_capacity_factor", p.moe_capacity_factor > 0 ? Json(p.moe_capacity_factor) : Json(nullptr)},
              {"moe_pad_to_capacity", p.moe_pad_to_capacity},
              {"recompute_layers", p.recompute_layers > 0 ? Json(p.recompute_layers) : Json(nullptr)}};
}

Json train_json(const engine::TrainScenario& s, const engine::TrainResult& r,
                const cost::EnergyCost& e) {
  const auto& b = r.breakdown;
  Json flops = Json::object();
  for (const auto& [d, f] : r.activity.flops) flops[core::dtype_name(d)] = as_count(core::to_flops(f));
  const double chips = static_cast<double>(s.plan.chips());
  return Json{
      {"system", s.system->id},
      {"model", s.model.id},
      {"chips", s.plan.chips()},
      {"plan", plan_json(s.plan)},
      {"executor", r.executor},
      {"schedule", r.schedule},
      {"stage_layers", r.stage_layers},
      {"stage_placement", r.stage_placement},
      {"feasible", r.feasible},
      {"fits", r.fits},
      {"reason", r.reason},
      {"step_time_s", core::to_seconds(r.step_time)},
      {"tokens_per_step", as_count(r.tokens_per_step)},
      {"tokens_per_s", r.tokens_per_s},
      {"tokens_per_s_per_chip", r.tokens_per_s_per_chip},
      {"model_tflops_per_chip", r.model_tflops_per_chip},
      {"hw_tflops_per_chip", r.hw_tflops_per_chip},
      {"mfu_pct", r.mfu * 100.0},
      {"executed_precision", core::dtype_name(r.executed_precision)},
      {"breakdown_s",
       {{"compute", core::to_seconds(b.compute)}, {"tp_comm", core::to_seconds(b.tp_comm)},
        {"cp_comm", core::to_seconds(b.cp_comm)}, {"ep_comm", core::to_seconds(b.ep_comm)},
        {"pp_comm", core::to_seconds(b.pp_comm)}, {"dp_comm", core::to_seconds(b.dp_comm)},
        {"bubble", core::to_seconds(b.bubble)}, {"optimizer", core::to_seconds(b.optimizer)},
        {"other", core::to_seconds(b.other)}}},
      {"memory_per_chip_gib",
       {{"weights", core::to_gib(r.memory.weights)}, {"gradients", core::to_gib(r.memory.gradients)},
        {"optimizer", core::to_gib(r.memory.optimizer)}, {"activations", core::to_gib(r.memory.activations)},
        {"workspace", core::to_gib(r.memory.workspace)}, {"total", core::to_gib(r.memory.total())}}},
      {"hbm_capacity_gib", core::to_gib(r.hbm_capacity)},
      {"activity_per_chip",
       {{"flop_by_dtype", flops}, {"hbm_bytes", as_count(core::to_bytes(r.activity.hbm_bytes))},
        {"scale_up_bytes", as_count(core::to_bytes(r.activity.scale_up_bytes))},
        {"scale_out_bytes", as_count(core::to_bytes(r.activity.scale_out_bytes))}}},
      {"energy_per_step_j", core::to_joules(e.total_energy) * chips},
      {"power_per_chip_w", core::to_watts(e.average_power)},
      {"cost_per_step_usd", core::to_dollars(e.dollars) * chips},
      {"energy_estimated", true},
      {"price_estimated", e.price_estimated},
      {"events", r.events},
  };
}

namespace {

/// "3+embedding, 4, 4, 3+head"; runs of equal middle stages as "4 ×14".
std::string layer_split(const std::vector<int>& layers) {
  std::ostringstream o;
  const size_t n = layers.size();
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    const bool end = i == 0 || i + 1 == n;
    while (!end && j + 1 < n && layers[j] == layers[i]) ++j;
    if (i > 0) o << ", ";
    o << layers[i];
    if (i == 0) o << "+embedding";
    if (i + 1 == n) o << "+head";
    if (j - i > 1) o << " ×" << (j - i);
    i = j;
  }
  return o.str();
}

}  // namespace

std::string train_text(const engine::TrainScenario& s, const engine::TrainResult& r,
                       const cost::EnergyCost& e) {
  std::ostringstream o;
  const auto& p = s.plan;
  const double chips = static_cast<double>(p.chips());
  o << "xpusim train: " << s.model.id << " on " << core::fmt_int(p.chips()) << " × "
    << s.system->chip.name << " (" << s.system->id << ")\n";
  o << "plan: tp=" << p.tp << " pp=" << p.pp << " dp=" << p.dp << " cp=" << p.cp << " ep=" << p.ep
    << " vpp=" << p.vpp << " zero=" << mapping::zero_name(p.zero)
    << " recompute=" << mapping::recompute_name(p.recompute)
    << (p.recompute_layers > 0 ? " (first " + std::to_string(p.recompute_layers) + " layers per chunk)" : std::string())
    << " micro-batch=" << p.micro_batch
    << " global-batch=" << p.global_batch << " seq=" << p.seq_len
    << " precision=" << core::dtype_name(p.precision) << (p.async_tp ? " async-tp" : "")
    << (p.lora_rank > 0 ? " lora-rank=" + std::to_string(p.lora_rank) + " lora-targets=" +
                              workload::lora_targets_name(p.lora_targets)
                        : std::string())
    << (p.mtp_layers > 0 ? " mtp=" + std::to_string(p.mtp_layers) : std::string())
    << (p.expert_tp > 0 ? " expert-tp=" + std::to_string(p.expert_tp) : std::string())
    << (p.moe_load_imbalance != 1.0 ? " moe-imbalance=" + fmt_num(p.moe_load_imbalance) : std::string())
    << (p.moe_capacity_factor > 0
            ? " moe-capacity=" + fmt_num(p.moe_capacity_factor) + (p.moe_pad_to_capacity ? " (padded)" : "")
            : std::string())
    << " ("
    << p.micro_batches() << " micro-batches)\n";
  if (r.executed_precision != p.precision)
    o << "precision fallback: the chip has no " << core::dtype_name(p.precision) << " peak; ran as "
      << core::dtype_name(r.executed_precision) << " (--allow-fallback), MFU against its peak\n";
  o << "schedule: " << r.schedule << "; layers per stage " << layer_split(r.stage_layers) << "; "
    << r.stage_placement << "\n\n";
  o << "  step time            " << fmt_num(core::to_seconds(r.step_time), 4) << " s  (" << r.executor
    << " executor)\n";
  o << "  tokens/s             " << fmt_num(r.tokens_per_s, 4) << "  (" << fmt_num(r.tokens_per_s_per_chip, 4)
    << " per chip)\n";
  o << "  model TFLOP/s/chip   " << fmt_num(r.model_tflops_per_chip, 4) << "  (MFU "
    << fmt_num(r.mfu * 100.0, 3) << "%)\n";
  o << "  hw TFLOP/s/chip      " << fmt_num(r.hw_tflops_per_chip, 4) << "\n\n";
  const auto& b = r.breakdown;
  o << "  breakdown (s): compute " << fmt_num(core::to_seconds(b.compute), 3) << ", TP comm "
    << fmt_num(core::to_seconds(b.tp_comm), 3) << ", CP comm " << fmt_num(core::to_seconds(b.cp_comm), 3)
    << ", EP comm " << fmt_num(core::to_seconds(b.ep_comm), 3) << ", PP comm "
    << fmt_num(core::to_seconds(b.pp_comm), 3) << ", DP comm " << fmt_num(core::to_seconds(b.dp_comm), 3)
    << ", bubble " << fmt_num(core::to_seconds(b.bubble), 3) << ", optimizer "
    << fmt_num(core::to_seconds(b.optimizer), 3) << "\n";
  o << "  memory per chip (GiB): weights " << fmt_num(core::to_gib(r.memory.weights), 3) << ", grads "
    << fmt_num(core::to_gib(r.memory.gradients), 3) << ", optimizer "
    << fmt_num(core::to_gib(r.memory.optimizer), 3) << ", activations "
    << fmt_num(core::to_gib(r.memory.activations), 3) << ", workspace "
    << fmt_num(core::to_gib(r.memory.workspace), 3) << " = " << fmt_num(core::to_gib(r.memory.total()), 4)
    << " of " << fmt_num(core::to_gib(r.hbm_capacity), 4) << (r.fits ? "  (fits)" : "  (DOES NOT FIT)")
    << "\n";
  o << "  energy per step      " << fmt_num(core::to_joules(e.total_energy) * chips / 3.6e6, 4)
    << " kWh (" << fmt_num(core::to_watts(e.average_power), 4) << " W per chip incl. overhead; estimated)\n";
  o << "  cost per step        $" << fmt_num(core::to_dollars(e.dollars) * chips, 4)
    << (e.price_estimated ? " (price estimated)" : "") << "\n";
  return o.str();
}

namespace {

// How a runner-up lost to the search's best: the batch target, else throughput.
std::string why_lost(const engine::RunnerUp& r, double best_tokens_per_s) {
  if (r.over_batch_target) return "its least batch exceeds the batch target";
  const double pct = best_tokens_per_s > 0 ? 100.0 * (1.0 - r.tokens_per_s / best_tokens_per_s) : 0.0;
  return pct <= 0 ? "equal throughput, later in the search's order" : fmt_num(pct, 3) + "% less throughput";
}

Json runners_up_json(const scenario::BuiltTrain& b) {
  Json out = Json::array();
  for (const auto& r : b.runners_up)
    out.push_back(Json{{"plan", plan_json(r.plan)},
                       {"tokens_per_s", r.tokens_per_s},
                       {"step_time_s", core::to_seconds(r.step_time)},
                       {"memory_per_chip_gib", core::to_gib(r.memory_per_chip)},
                       {"lost_by_pct", b.searched_tokens_per_s > 0 ? 100.0 * (1.0 - r.tokens_per_s / b.searched_tokens_per_s) : 0.0},
                       {"why", why_lost(r, b.searched_tokens_per_s)}});
  return out;
}

std::string runners_up_text(const scenario::BuiltTrain& b) {
  std::string out = "  runners-up (of " + std::to_string(b.fitting) + " timed plans that fit; analytical executor):\n";
  out += core::strformat("    %-4s %-4s %-5s %-3s %-4s %-3s %-10s %-6s %12s %10s  %s\n", "tp", "pp", "dp", "cp", "vpp", "mb",
                         "recompute", "zero", "tokens/s", "step ms", "why it lost");
  for (const auto& r : b.runners_up)
    out += core::strformat("    %-4d %-4d %-5d %-3d %-4d %-3lld %-10s %-6s %12.0f %10.2f  %s\n", r.plan.tp, r.plan.pp,
                           r.plan.dp, r.plan.cp, r.plan.vpp, r.plan.micro_batch, mapping::recompute_name(r.plan.recompute).c_str(),
                           mapping::zero_name(r.plan.zero).c_str(), r.tokens_per_s, 1e3 * core::to_seconds(r.step_time),
                           why_lost(r, b.searched_tokens_per_s).c_str());
  if (b.runners_up.empty()) out += "    none: no other plan of the search fits\n";
  return out;
}

}  // namespace

Json train_document(const Provenance& provenance, const scenario::TrainInputs& in, const scenario::TrainRun& run) {
  const auto& s = run.built.scenario;
  Json body = train_json(s, run.result, run.energy);
  body["plan_searched"] = run.built.searched;
  body["plans_evaluated"] = run.built.evaluated;
  body["plans_pruned"] = run.built.pruned;
  body["settings"] = run.built.settings;
  if (!s.model.approximations.empty()) body["model_approximations"] = s.model.approximations;
  if (run.budget) {
    const auto& b = *run.budget;
    body["train_tokens"] = as_count(b.tokens);
    body["time_to_train_s"] = core::to_seconds(b.time);
    body["energy_to_train_j"] = core::to_joules(b.energy);
    body["cost_to_train_usd"] = core::to_dollars(b.dollars);
    body["cost_basis"] = Json{{"price_usd_per_chip_hour", b.price_usd_per_chip_hour},
                              {"price_estimated", run.energy.price_estimated},
                              {"chips", b.chips},
                              {"billed_time_s", core::to_seconds(b.billed_time)},
                              {"billed_time", b.billed_with_failures ? "goodput.time_to_train_s (with failures and restarts)"
                                                                     : "time_to_train_s (no failures)"}};
    if (run.monte_carlo) {
      const auto& d = *run.monte_carlo;
      body["cost_basis"]["monte_carlo_cost_usd"] = Json{{"p10", scenario::billed_dollars(b, d.p10)},
                                                        {"p50", scenario::billed_dollars(b, d.p50)},
                                                        {"p90", scenario::billed_dollars(b, d.p90)},
                                                        {"mean", scenario::billed_dollars(b, d.mean)}};
    }
  }
  body["goodput"] = goodput_json(run);
  body["facility"] = facility_json(run);
  if (!run.built.overrides.empty()) body["overrides"] = run.built.overrides;
  if (in.top) body["runners_up"] = runners_up_json(run.built);
  return document("train", provenance, inputs_json(in), body);
}

std::string train_run_text(const scenario::TrainRun& run) {
  std::string out = train_text(run.built.scenario, run.result, run.energy);
  if (run.budget) {
    const auto& b = *run.budget;
    out += "  time to train " + core::strformat("%.4g", b.tokens) + " tokens: " +
           fmt_num(core::to_seconds(b.time) / 86400.0, 4) + " days without failures, " +
           fmt_num(core::to_joules(b.energy) / 3.6e9, 4) + " MWh (energy estimated)\n";
    out += "  cost to train        $" + fmt_num(core::to_dollars(b.dollars) / 1e6, 4) + "M = $" +
           fmt_num(b.price_usd_per_chip_hour, 4) + " per chip-hour" + (run.energy.price_estimated ? " (estimated)" : "") +
           " x " + std::to_string(b.chips) + " chips x " + fmt_num(core::to_seconds(b.billed_time) / 86400.0, 4) +
           (b.billed_with_failures ? " days with failures\n" : " days\n");
  }
  out += goodput_text(run);
  out += "  settings (input, framework recipe, critical-batch rule or plan search):\n";
  for (const auto& line : run.built.settings) out += "    " + line + "\n";
  for (const auto& note : run.built.overrides) out += "  override: " + note + "\n";
  for (const auto& note : run.built.scenario.model.approximations) out += "  model: " + note + "\n";
  if (run.built.searched)
    out += "  (plan chosen by search over " + std::to_string(run.built.evaluated) +
           " candidates; fix any of --tp/--pp/--dp/--recompute to override)\n";
  if (run.built.searched && run.built.runners_up_asked > 0) out += runners_up_text(run.built);
  return out;
}

}  // namespace xpusim::report
