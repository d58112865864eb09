// Train rows: build a scenario from the row (framework defaults for empty cells, stated in the
// assumptions), run the event-driven executor, and report the row's metric.

#include <algorithm>
#include <cmath>
#include <optional>
#include <regex>

#include "xpusim/compute/chip_model.h"
#include "xpusim/core/format.h"
#include "xpusim/engine/defaults.h"
#include "xpusim/engine/sizing.h"
#include "xpusim/engine/train.h"
#include "xpusim/workload/hf_config.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

namespace {

/// The preset of the stack a row's notes name first. A paper that compares stacks is the source of
/// each of their rows, and a row's notes name its own stack before its rivals ("AXLearn (Apple,
/// JAX/XLA + Neuron) … Same table: Megatron-LM 7.8 s, PyTorch FSDP 10.6 s, MaxText 9.4 s").
/// MaxText is the other JAX/XLA stack and takes AXLearn's preset (docs/calibration.md).
std::optional<std::string> preset_named_first(const std::string& notes) {
  static const std::pair<const char*, const char*> kStacks[] = {
      {"AXLearn", "axlearn"},          {"MaxText", "axlearn"},          {"Megatron", "megatron"},
      {"NeMo", "megatron"},            {"PyTorch FSDP", "torchtitan"},  {"torchtitan", "torchtitan"},
      {"TorchTitan", "torchtitan"},    {"llm-foundry", "llm-foundry"},  {"NeuronX Distributed", "neuronx-distributed"},
  };
  size_t first = std::string::npos;
  std::optional<std::string> preset;
  for (const auto& [name, p] : kStacks) {
    const size_t at = notes.find(name);
    if (at < first) first = at, preset = p;
  }
  return preset;
}

/// The training-framework preset (engine::framework_params) of a row, from its source, or from
/// the stack its notes name first where the source does not say (a paper, a vendor's table):
/// frameworks differ in their defaults (optimizer sharding, recompute, overlap, kernels).
std::string preset_of(const Row& r) {
  const std::string& s = r.source_url;
  auto has = [&](const char* k) { return s.find(k) != std::string::npos; };
  if (has("apple/axlearn")) return "axlearn";
  if (has("torchtitan")) return "torchtitan";
  if (has("llm-foundry") || has("mosaicml")) return "llm-foundry";
  if (has("aws-neuron") || has("neuron")) return "neuronx-distributed";
  if (has("2104.04473") || has("2205.05198")) return "megatron-lm-2021";  // the papers' Megatron-LM
  if (has("2412.19437")) return "deepseek";                               // DeepSeek-V3: DualPipe
  // NeMo, Megatron-Bridge, MLPerf and Megatron-style stacks name Megatron or nothing
  return preset_named_first(r.notes).value_or("megatron");
}

/// Numbers written with thousands separators in a text, after a given phrase.
std::vector<double> numbers_after(const std::string& text, const std::string& pattern) {
  std::vector<double> out;
  std::regex re(pattern + R"(\s*~?\s*([0-9][0-9,]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    out.push_back(number_in_notes((*it)[1]));
  }
  return out;
}


struct TokensToTarget {
  double tokens = 0;
  std::string how;  ///< where the figure comes from, for the row's assumptions
};

/// The tokens a time-to-train row needed to reach its target, from the notes' "needed N tokens"
/// or "needed N samples" (samples of seq_len tokens, as MLPerf counts them); a number with
/// neither unit is read as tokens, and said so.
std::optional<TokensToTarget> tokens_to_target(const std::string& notes, long long seq_len) {
  static const std::regex re(R"(needed\s*~?\s*([0-9][0-9,]*)\s*(tokens|samples|sequences)?)", std::regex::icase);
  std::smatch m;
  if (!std::regex_search(notes, m, re)) return std::nullopt;
  const double n = number_in_notes(m[1].str());
  std::string unit = m[2].matched ? m[2].str() : "";
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (unit == "samples" || unit == "sequences")
    return TokensToTarget{n * static_cast<double>(seq_len),
                          "the notes' " + core::fmt_int(static_cast<long long>(n)) + " samples of " +
                              std::to_string(seq_len) + " tokens"};
  return TokensToTarget{n, unit.empty() ? "the notes' figure, read as tokens" : "from the row's notes"};
}

bool has_layout(const Row& r) { return r.tp && r.pp && r.dp; }

/// The row with its data-parallel degree filled in when it states tp and pp but not dp and
/// they (with its cp) divide the chips: dp = chips / (tp·pp·cp), a stated layout, said so.
Row with_implied_dp(const Row& row, Prediction& p) {
  if (!row.tp || !row.pp || row.dp || *row.tp <= 0 || *row.pp <= 0) return row;
  const long long replica = *row.tp * *row.pp * row.cp.value_or(1);
  if (replica <= 0 || row.chips % replica != 0) return row;
  Row r = row;
  r.dp = row.chips / replica;
  p.assumptions.push_back("dp = chips / (tp·pp·cp) = " + std::to_string(*r.dp) + " (not stated)");
  return r;
}

/// Whether the notes name a setting of the run, not only the baseline it is compared with ("829
/// without AsyncTP"): `re` matches the setting's name after an optional "without " (group 1).
bool named_as_setting(const std::string& notes, const std::regex& re) {
  for (auto it = std::sregex_iterator(notes.begin(), notes.end(), re); it != std::sregex_iterator(); ++it)
    if (!(*it)[1].matched) return true;
  return false;
}

/// Whether the notes name async TP as a setting of the run ("AsyncTP", "async TP", "async-TP").
bool async_tp_in_notes(const std::string& notes) {
  static const std::regex re(R"((without\s+)?async[\s-]?tp)", std::regex::icase);
  return named_as_setting(notes, re);
}

/// LoRA fine-tuning named in the notes ("LoRA", not only "without LoRA"): the adapter rank the
/// notes give ("rank 16", "r=16", "rank-16") and the weights they adapt ("attention projections"
/// or "all linear layers"), else the documented defaults, said so: MLPerf's benchmark
/// configuration for a row whose notes name MLPerf (training.defaults.lora.mlperf_*), the
/// megatron preset's (Megatron-Bridge's) otherwise. Rank 0 when the notes name no LoRA run.
void lora_from_notes(const std::string& notes, const calib::Params& params, mapping::TrainPlan& plan, Prediction& p) {
  static const std::regex named(R"((without\s+)?\blora\b)", std::regex::icase);
  if (!named_as_setting(notes, named)) return;
  static const std::regex mlperf_re(R"(\bmlperf\b)", std::regex::icase);
  const std::string key = "training.defaults.lora." + std::string(std::regex_search(notes, mlperf_re) ? "mlperf_" : "");
  static const std::regex rank_re(R"(\b(?:rank|r)\s*[-=:]?\s*(\d{1,6})\b)", std::regex::icase);
  static const std::regex attention_re(R"(attention\s+(?:projections|layers|only))", std::regex::icase);
  static const std::regex all_re(R"(all[\s-]+linear)", std::regex::icase);
  std::smatch m;
  const bool rank_stated = std::regex_search(notes, m, rank_re);
  plan.lora_rank = rank_stated ? std::stoi(m[1].str()) : static_cast<int>(std::lround(params.number(key + "rank")));
  const bool attention = std::regex_search(notes, attention_re), all = std::regex_search(notes, all_re);
  const bool targets_stated = attention != all;
  const bool all_linear = targets_stated ? all : params.flag(key + "all_linear");
  plan.lora_targets = all_linear ? workload::LoraTargets::AllLinear : workload::LoraTargets::Attention;
  p.assumptions.push_back("LoRA fine-tuning (named in the row's notes), base weights frozen: rank " +
                          std::to_string(plan.lora_rank) + (rank_stated ? " (notes)" : " (" + key + "rank)") +
                          ", adapters on " + workload::lora_targets_name(plan.lora_targets) +
                          (targets_stated ? " (notes)" : " (" + key + "all_linear)"));
}

/// A stated ep that data parallelism alone cannot hold (ep does not divide dp·cp) but the whole
/// grid can: the run put its experts on their own grid, as Megatron-Core's MoE parallel folding
/// does (expert tensor parallelism 1, the ep ranks taken across tp, cp and dp). Stated.
void fold_experts_if_needed(mapping::TrainPlan& plan, Prediction& p) {
  const long long dp_cp = static_cast<long long>(plan.dp) * plan.cp;
  const long long grid = dp_cp * plan.tp;
  if (plan.ep <= 1 || dp_cp % plan.ep == 0 || grid % plan.ep != 0) return;
  plan.expert_tp = 1;
  p.assumptions.push_back("MoE parallel folding: ep " + std::to_string(plan.ep) + " exceeds dp·cp = " +
                          std::to_string(dp_cp) + ", so the experts run on their own grid (expert tp 1, expert data parallelism " +
                          std::to_string(grid / plan.ep) + "), as Megatron-Core folds them");
}

/// Plan fields the row states (precision, sequence, layout). False (and p.reason) when the
/// precision is unknown.
bool plan_from_row(const Row& row, const workload::ModelSpec& model, mapping::TrainPlan& plan, Prediction& p) {
  const auto prec = core::parse_dtype(row.precision.empty() ? "bf16" : row.precision);
  if (!prec) {
    p.status = Status::Unsupported;
    p.reason = "unknown precision '" + row.precision + "'";
    return false;
  }
  plan.precision = *prec;
  if (row.precision.empty()) p.assumptions.push_back("precision bf16");
  plan.seq_len = row.seq_len.value_or(std::min<long long>(model.max_position, 4096));
  plan.cp = static_cast<int>(row.cp.value_or(1));
  plan.ep = static_cast<int>(row.ep.value_or(1));
  plan.sequence_parallel = true;
  plan.async_tp = async_tp_in_notes(row.notes);
  if (plan.async_tp) p.assumptions.push_back("async TP (named in the row's notes)");
  if (has_layout(row)) {
    plan.tp = static_cast<int>(*row.tp);
    plan.pp = static_cast<int>(*row.pp);
    plan.dp = static_cast<int>(*row.dp);
    fold_experts_if_needed(plan, p);
  }
  return true;
}

/// A global batch the notes state ("GBS 2,904") that divides dp × micro-batch.
std::optional<long long> global_batch_in_notes(const Row& row, const engine::DefaultsRule& rule) {
  const long long unit = has_layout(row) ? *row.dp * row.micro_batch.value_or(rule.micro_batch) : 0;
  for (double g : numbers_after(row.notes, "GBS")) {
    const long long gi = static_cast<long long>(g);
    if (gi > 0 && (unit == 0 || gi % unit == 0)) return gi;
  }
  return std::nullopt;
}

/// The settings the row states: its cells, a global batch stated in its notes, and an
/// "interleaved" schedule named in the notes without its virtual stages.
engine::TrainStated stated_by_row(const Row& row, const engine::DefaultsRule& rule) {
  engine::TrainStated st;
  st.global_batch = row.global_batch_seqs ? row.global_batch_seqs : global_batch_in_notes(row, rule);
  st.micro_batch = row.micro_batch;
  if (row.vpp) st.vpp = static_cast<int>(*row.vpp);
  st.interleaved = !row.vpp && row.pp && *row.pp > 1 && row.notes.find("interleaved") != std::string::npos;
  st.recompute = mapping::recompute_from_name(row.recompute);  // csv.cc checked the name
  st.zero = mapping::zero_from_csv_name(row.fsdp_or_zero);  // csv.cc checked the name
  return st;
}

/// The one rule of defaults (engine/defaults.h) for the row: virtual stages and the pipeline
/// schedule first (DualPipe for DeepSeek-V3, report §3.2.1), then the settings on the layout.
engine::TrainDefaults defaults_for_row(const Row& row, const std::string& fw, const engine::DefaultsRule& rule,
                                       engine::TrainScenario& s, Prediction& p) {
  const engine::TrainStated st = stated_by_row(row, rule);
  auto& plan = s.plan;
  plan.vpp = engine::train_defaults(rule, st, s.model, plan.seq_len).vpp.value;
  if (fw == "deepseek" && plan.vpp == 1) {
    plan.schedule = "dualpipe";
    p.assumptions.push_back("DualPipe pipeline schedule");
  }
  engine::TrainDefaults d = engine::train_defaults(rule, st, s.model, plan.seq_len, has_layout(row) ? &plan : nullptr);
  if (!row.global_batch_seqs && st.global_batch) d.global_batch.basis = "stated in the row's notes";
  plan.micro_batch = d.micro_batch.value;
  plan.zero = d.zero.value;
  if (has_layout(row)) plan.global_batch = d.global_batch.value;
  return d;
}

engine::TrainResult simulate(const engine::TrainScenario& s, const Context& ctx) {
  return ctx.analytical_train ? engine::simulate_analytical(s) : engine::simulate_event(s);
}

/// Runs the step: the stated layout with the least recompute that fits, or the best plan the
/// search finds when the row states no layout (each candidate's global batch by the one rule).
/// False (and p.reason) when no plan runs.
bool run_step(const Row& row, const Context& ctx, const engine::DefaultsRule& rule, engine::TrainDefaults& d,
              engine::TrainScenario& s, engine::TrainResult& r, Prediction& p) {
  if (has_layout(row)) {
    engine::set_least_recompute_that_fits(s, d.recompute.value);
  } else {
    engine::SearchSpace space;
    space.recompute = d.recompute.value;
    space.zero = {s.plan.zero};
    // The degrees the row states are kept; the search picks the others.
    if (row.tp) space.tp = {static_cast<int>(*row.tp)};
    if (row.pp) space.pp = {static_cast<int>(*row.pp)};
    if (row.cp) space.cp = {static_cast<int>(*row.cp)};
    if (row.ep) space.ep = static_cast<int>(*row.ep);
    space.batch_tokens = std::llround(d.batch_tokens.value);
    space.gradient_accumulation = rule.gradient_accumulation || d.global_batch.origin == engine::Origin::Input;
    auto best = engine::search_plan(s, row.chips, space);
    if (!best.found) {
      p.status = Status::Unsupported;
      p.reason = "no feasible plan found for " + std::to_string(row.chips) + " chips";
      return false;
    }
    s = best.best;
    const bool partly = row.tp || row.pp || row.cp || row.ep;
    p.assumptions.push_back(std::string(partly ? "layout partly given (the stated degrees kept)" : "layout not given") +
                            ": best plan found tp=" + std::to_string(s.plan.tp) + " pp=" + std::to_string(s.plan.pp) +
                            " dp=" + std::to_string(s.plan.dp));
    const bool rounded = d.global_batch.value != s.plan.global_batch;
    d.global_batch.value = s.plan.global_batch;
    if (d.global_batch.origin != engine::Origin::Input) {
      d.global_batch.origin = d.batch_tokens.origin;
      d.global_batch.basis = d.batch_tokens.basis + ", in whole micro-batches per data-parallel rank";
    } else if (rounded) {
      d.global_batch.basis += (d.global_batch.basis.empty() ? "" : ", ") +
                              std::string("rounded to whole micro-batches per data-parallel rank of the plan found");
    }
  }
  r = simulate(s, ctx);
  if (!r.feasible) {
    p.status = Status::Unsupported;
    p.reason = "plan infeasible: " + r.reason;
    return false;
  }
  if (!r.fits) {
    p.assumptions.push_back("note: " + r.reason);
    p.does_not_fit = r.reason;
  }
  return true;
}

/// The figure the row's metric names, from the step's result.
void read_metric(const Row& row, long long seq_len, const engine::TrainResult& r, Prediction& p) {
  const std::string& m = row.metric;
  if (m == "tokens_per_s_per_chip") p.predicted = r.tokens_per_s_per_chip;
  else if (m == "step_time_s") p.predicted = core::to_seconds(r.step_time);
  else if (m == "model_tflops_per_chip") p.predicted = r.model_tflops_per_chip;
  else if (m == "hw_tflops_per_chip") p.predicted = r.hw_tflops_per_chip;
  else if (m == "mfu_pct") p.predicted = r.mfu * 100.0;
  else if (m == "time_to_train_min") {
    const auto target = tokens_to_target(row.notes, seq_len);
    if (!target) {
      p.status = Status::Unsupported;
      p.reason = "time_to_train_min needs the tokens to target; the row's notes do not state them as "
                 "'needed N tokens' or 'needed N samples'";
      return;
    }
    p.predicted = target->tokens / r.tokens_per_s / 60.0;
    p.assumptions.push_back("tokens to target " + core::fmt_int(static_cast<long long>(target->tokens)) + " (" +
                            target->how + "); evaluation and start-up time not modelled");
  } else {
    p.status = Status::Unsupported;
    p.reason = "metric '" + m + "' is not a training metric";
  }
}

/// The plan that ran and where its step time went (validate --explain).
std::vector<ExplainItem> explain_train(const mapping::TrainPlan& plan, const engine::TrainResult& r) {
  const auto& b = r.breakdown;
  return {{"tp", static_cast<double>(plan.tp)},
          {"pp", static_cast<double>(plan.pp)},
          {"dp", static_cast<double>(plan.dp)},
          {"cp", static_cast<double>(plan.cp)},
          {"ep", static_cast<double>(plan.ep)},
          {"vpp", static_cast<double>(plan.vpp)},
          {"micro_batch", static_cast<double>(plan.micro_batch)},
          {"global_batch", static_cast<double>(plan.global_batch)},
          {"micro_batches", static_cast<double>(plan.micro_batches())},
          {"step_time_s", core::to_seconds(r.step_time)},
          {"compute_s", core::to_seconds(b.compute)},
          {"tp_comm_s", core::to_seconds(b.tp_comm)},
          {"cp_comm_s", core::to_seconds(b.cp_comm)},
          {"ep_comm_s", core::to_seconds(b.ep_comm)},
          {"pp_comm_s", core::to_seconds(b.pp_comm)},
          {"dp_comm_s", core::to_seconds(b.dp_comm)},
          {"bubble_s", core::to_seconds(b.bubble)},
          {"optimizer_s", core::to_seconds(b.optimizer)},
          {"other_s", core::to_seconds(b.other)},
          {"mfu_pct", r.mfu * 100.0},
          {"memory_per_chip_gib", core::to_gib(r.memory.total())},
          {"hbm_per_chip_gib", core::to_gib(r.hbm_capacity)}};
}

}  // namespace

Prediction predict_train(const Row& stated, const Context& ctx) {
  Prediction p;
  const Row row = with_implied_dp(stated, p);
  const std::string fw = preset_of(row);
  p.framework = fw;
  p.assumptions.push_back("framework preset " + fw);
  engine::TrainScenario s;
  s.framework = engine::framework_params(fw, *ctx.calibration);
  s.calibration = ctx.calibration;
  s.system = &ctx.catalog->system(row.system, "system");
  s.model = workload::load_model(row.model_ref(), ctx.models_dir);
  if (!plan_from_row(row, s.model, s.plan, p)) return p;
  lora_from_notes(row.notes, *ctx.calibration, s.plan, p);
  if (s.plan.lora_rank > s.model.hidden) {
    p.status = Status::Unsupported;
    p.reason = "LoRA rank " + std::to_string(s.plan.lora_rank) + " in the notes is above the model's hidden size " +
               std::to_string(s.model.hidden);
    return p;
  }
  for (const auto& note : s.model.approximations) p.assumptions.push_back("model: " + note);
  if (!s.system->chip.supports(s.plan.precision))
    p.assumptions.push_back("precision " + core::dtype_name(s.plan.precision) + ": " + s.system->chip.name +
                            " has no " + core::dtype_name(s.plan.precision) + " peak; runs as " +
                            core::dtype_name(compute::executed_dtype(s.system->chip, s.plan.precision)));
  s.plan.selective = s.framework.selective_scope;
  const engine::DefaultsRule rule = engine::defaults_rule(fw, *ctx.calibration);
  engine::TrainDefaults d = defaults_for_row(row, fw, rule, s, p);
  engine::TrainResult r;
  if (!run_step(row, ctx, rule, d, s, r, p)) return p;
  for (auto& line : engine::describe(d, s.plan.recompute, s.plan.recompute_layers, s.plan.selective)) p.assumptions.push_back("setting: " + line);
  read_metric(row, s.plan.seq_len, r, p);
  p.explain = explain_train(s.plan, r);
  return p;
}

}  // namespace xpusim::validation
