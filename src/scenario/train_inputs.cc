#include "xpusim/scenario/train_inputs.h"

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "xpusim/compute/chip_model.h"
#include "xpusim/engine/defaults.h"
#include "xpusim/config/document.h"
#include "xpusim/config/values.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/suggest.h"
#include "xpusim/engine/sizing.h"
#include "xpusim/mapping/schedule.h"
#include "xpusim/scenario/scale.h"
#include "file_fields.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::scenario {

namespace {

void read_train_plan(config::FieldReader& r, TrainInputs& in) {
  const config::Json* plan = r.object("plan", false);
  if (!plan) return;
  config::FieldReader pr(*plan, "plan", r.diagnostics());
  read_count(pr, "tp", in.tp);
  read_count(pr, "pp", in.pp);
  read_count(pr, "dp", in.dp);
  read_count(pr, "cp", in.cp);
  read_count(pr, "ep", in.ep);
  read_count(pr, "vpp", in.vpp);
  read_count(pr, "micro_batch", in.micro_batch);
  read_text(pr, "precision", in.precision);
  read_text(pr, "zero", in.zero);
  read_text(pr, "recompute", in.recompute);
  read_text(pr, "schedule", in.schedule);
  read_flag(pr, "allow_fallback", in.allow_fallback);
  read_flag(pr, "async_tp", in.async_tp);
  read_count(pr, "lora_rank", in.lora_rank);
  read_text(pr, "lora_targets", in.lora_targets);
  read_non_negative_count(pr, "mtp_layers", in.mtp_layers);
  read_positive_number(pr, "moe_load_imbalance", in.moe_load_imbalance);
  read_count(pr, "expert_tp", in.expert_tp);
  read_positive_number(pr, "moe_capacity_factor", in.moe_capacity_factor);
  read_flag(pr, "moe_pad_to_capacity", in.moe_pad_to_capacity);
  read_count(pr, "recompute_layers", in.recompute_layers);
  moved_to_workload(pr, {"global_batch", "seq_len"});
  pr.finish();
}

void read_train_workload(config::FieldReader& r, TrainInputs& in) {
  const config::Json* workload = r.object("workload", false);
  if (!workload) return;
  config::FieldReader wr(*workload, "workload", r.diagnostics());
  read_count(wr, "global_batch", in.global_batch);
  read_positive_number(wr, "max_global_batch_tokens", in.max_global_batch_tokens);
  read_count(wr, "seq_len", in.seq_len);
  read_positive_number(wr, "train_tokens", in.train_tokens);
  read_text(wr, "deadline", in.deadline);
  read_positive_number(wr, "budget_usd", in.budget);
  wr.finish();
}

// Diagnostics on a library call reported against the flag that named its input (errors inside
// a file keep their file and field).
template <typename F>
auto against_flag(const char* flag, bool only_unnamed, F&& call) {
  try {
    return call();
  } catch (const core::InputError& e) {
    std::vector<core::Diagnostic> ds = e.diagnostics();
    for (auto& x : ds)
      if (x.file.empty() && (!only_unnamed || x.path.empty())) x.path = flag;
    throw core::InputError(ds);
  }
}

void check_executor(core::Diagnostics& d, const std::string& path, const std::optional<std::string>& executor) {
  if (executor && *executor != "event" && *executor != "analytical")
    d.error(path, "unknown executor", *executor, "event or analytical",
            core::did_you_mean(*executor, {"event", "analytical"}));
}

void check_counts(const TrainInputs& in, core::Diagnostics& d) {
  if (!in.system) d.error("--system", "missing", "", "a system id, e.g. trn3-ultraserver-gen2");
  if (!in.model) d.error("--model", "missing", "", "a model id or config.json path, e.g. llama3.1-405b");
  if (!in.chips) d.error("--chips", "missing", "", "a chip count ≥ 1");
  for (const auto& [flag, v] : {std::pair{"--chips", in.chips}, {"--tp", in.tp}, {"--pp", in.pp}, {"--dp", in.dp},
                                {"--cp", in.cp}, {"--ep", in.ep}, {"--vpp", in.vpp}, {"--micro-batch", in.micro_batch},
                                {"--global-batch", in.global_batch}, {"--seq-len", in.seq_len},
                                {"--lora-rank", in.lora_rank}, {"--expert-tp", in.expert_tp},
                                {"--recompute-layers", in.recompute_layers}})
    config::check_positive_count(d, flag, v);
  config::check_positive_count(d, "--top", in.top);
  if (in.top && *in.top > core::limits::kRunnersUp)
    d.error("--top", "more runners-up than a table shows", std::to_string(*in.top),
            "1 to " + std::to_string(core::limits::kRunnersUp));
  if (in.top && in.tp && in.pp)
    d.error("--top", "lists the plan search's runners-up, and --tp with --pp leave nothing to search",
            std::to_string(*in.top), "--tp or --pp left out (the search picks it)");
  config::check_positive_number_at_most(d, "--train-tokens", in.train_tokens, core::limits::kTrainTokens);
  config::check_positive_number_at_most(d, "--max-global-batch-tokens", in.max_global_batch_tokens,
                                        core::limits::kBatchTokens);
  if (in.max_global_batch_tokens && in.global_batch)
    d.error("--max-global-batch-tokens", "bounds the batch the search picks; --global-batch states it exactly",
            core::fmt_num(*in.max_global_batch_tokens), "one of the two");
  check_executor(d, "--executor", in.executor);
}

void resolve_precision_and_zero(const TrainInputs& in, mapping::TrainPlan& p, core::Diagnostics& d) {
  p.precision = core::Dtype::Bf16;
  if (in.precision) {
    auto dt = core::parse_dtype(*in.precision);
    if (!dt) d.error("--precision", "unknown precision", *in.precision, "one of: " + core::join(core::all_dtype_names()),
                     core::did_you_mean(*in.precision, core::all_dtype_names()));
    else p.precision = *dt;
  }
  if (in.zero) {
    const std::string& z = *in.zero;
    if (auto stage = mapping::zero_from_name(z)) p.zero = *stage;
    else
      d.error("--zero", "unknown ZeRO stage", z, "one of: " + core::join(mapping::zero_names()),
              core::did_you_mean(z, mapping::zero_names()));
  }
}

/// A precision the chip has no peak for is bad input unless the user allowed the fallback; the
/// message lists the chip's precisions and what the fallback would run.
void check_precision_supported(const TrainInputs& in, const hw::ChipSpec& chip, core::Dtype precision,
                               core::Diagnostics& d) {
  if (chip.supports(precision) || in.allow_fallback.value_or(false)) return;
  d.error("--precision", chip.name + " has no " + core::dtype_name(precision) + " peak", core::dtype_name(precision),
          "one of the chip's precisions: " + core::join(compute::precision_names(chip)),
          "--allow-fallback runs it as " + core::dtype_name(compute::executed_dtype(chip, precision)) +
              " and computes MFU against that peak");
}

std::optional<mapping::Recompute> stated_recompute(const TrainInputs& in, core::Diagnostics& d) {
  if (!in.recompute) return std::nullopt;
  const std::string& r = *in.recompute;
  if (auto mode = mapping::recompute_from_name(r)) return mode;
  d.error("--recompute", "unknown recompute mode", r, "one of: " + core::join(mapping::recompute_names()),
          core::did_you_mean(r, mapping::recompute_names()));
  return std::nullopt;
}

/// What the flags state, for the one rule of defaults (engine/defaults.h).
engine::TrainStated stated_settings(const TrainInputs& in, const mapping::TrainPlan& p,
                                    std::optional<mapping::Recompute> recompute) {
  engine::TrainStated st;
  st.global_batch = in.global_batch;
  st.max_batch_tokens = in.max_global_batch_tokens;
  st.micro_batch = in.micro_batch;
  if (in.vpp) st.vpp = static_cast<int>(*in.vpp);
  st.interleaved = !in.vpp && in.schedule && *in.schedule == "interleaved";
  st.recompute = recompute;
  if (in.zero) st.zero = p.zero;
  return st;
}

// A capacity factor needs experts, and padding needs a capacity; a factor beyond the number of
// experts caps nothing an expert can receive (every token at most once per expert).
void check_capacity(const TrainInputs& in, const workload::ModelSpec& md, core::Diagnostics& d) {
  if (in.moe_capacity_factor) {
    const std::string got = core::fmt_num(*in.moe_capacity_factor);
    if (!md.is_moe())
      d.error("--moe-capacity-factor", "an expert capacity needs a mixture of experts", got, "no capacity for " + md.id);
    else if (!(*in.moe_capacity_factor > 0) ||
             *in.moe_capacity_factor > static_cast<double>(md.moe.num_experts) / md.moe.experts_per_token)
      d.error("--moe-capacity-factor", "out of range", got,
              "above 0 and at most experts / top-k = " +
                  core::fmt_num(static_cast<double>(md.moe.num_experts) / md.moe.experts_per_token) +
                  " (Megatron recipes use 1 to 2)");
  }
  if (in.moe_pad_to_capacity.value_or(false) && !in.moe_capacity_factor)
    d.error("--moe-pad-to-capacity", "padding to capacity needs a capacity factor", "true", "--moe-capacity-factor CF as well");
}

void check_layout(const TrainInputs& in, const hw::SystemSpec& sys, const workload::ModelSpec& md,
                  core::Diagnostics& d) {
  const long long chips = *in.chips;
  if (chips > sys.max_chips.value)
    d.error("--chips", "more chips than the largest " + sys.id + " cluster", std::to_string(chips),
            "at most " + std::to_string(sys.max_chips.value));
  if (in.tp && *in.tp > 0 && !workload::tp_divides(md, *in.tp))
    d.error("--tp", "tensor-parallel degree does not divide the " + workload::tp_divisors_text(md),
            std::to_string(*in.tp), "a divisor of the " + workload::tp_divisors_text(md));
  if (in.async_tp.value_or(false) && in.tp && *in.tp == 1)
    d.error("--async-tp", "async TP pipelines the tensor-parallel collectives, and tp 1 has none", "--tp 1",
            "--tp > 1, or no --async-tp");
  if (in.lora_targets && !workload::parse_lora_targets(*in.lora_targets))
    d.error("--lora-targets", "unknown LoRA targets", *in.lora_targets, "attention or all-linear",
            core::did_you_mean(*in.lora_targets, {"attention", "all-linear"}));
  if (in.lora_targets && !in.lora_rank)
    d.error("--lora-targets", "LoRA targets without a LoRA run", *in.lora_targets, "--lora-rank R as well");
  if (in.lora_rank && *in.lora_rank > md.hidden)
    d.error("--lora-rank", "a LoRA adapter's rank is above the model's hidden size", std::to_string(*in.lora_rank),
            "a rank from 1 to " + std::to_string(md.hidden) + " (8 to 64 in practice)");
  config::check_non_negative_count(d, "--mtp-layers", in.mtp_layers);
  if (in.mtp_layers && *in.mtp_layers > md.layers)
    d.error("--mtp-layers", "more multi-token-prediction modules than the model has layers", std::to_string(*in.mtp_layers),
            "0 to " + std::to_string(md.layers) + " (DeepSeek-V3 trains with 1)");
  mapping::check_moe_load_imbalance(d, "--moe-load-imbalance", in.moe_load_imbalance, md, in.ep.value_or(1));
  check_capacity(in, md, d);
  if (in.expert_tp && !md.is_moe())
    d.error("--expert-tp", "expert tensor parallelism needs a mixture of experts", std::to_string(*in.expert_tp),
            "no --expert-tp for " + md.id);
  if (in.recompute_layers && (!in.recompute || *in.recompute != "full"))
    d.error("--recompute-layers", "applies only to full recomputation", std::to_string(*in.recompute_layers),
            "--recompute full as well");
  if (in.recompute_layers && *in.recompute_layers > md.layers)
    d.error("--recompute-layers", "more recomputed layers than the model has", std::to_string(*in.recompute_layers),
            "1 to " + std::to_string(md.layers) + " (per model chunk; at least a chunk's layers recompute every layer)");
  if (in.pp && *in.pp > md.layers)
    d.error("--pp", "more pipeline stages than layers", std::to_string(*in.pp), "at most " + std::to_string(md.layers));
  if (in.ep && *in.ep > 1 && (!md.is_moe() || md.moe.num_experts % *in.ep != 0))
    d.error("--ep", md.is_moe() ? "expert-parallel degree does not divide the experts"
                                : "expert parallelism needs a MoE model",
            std::to_string(*in.ep), md.is_moe() ? "a divisor of " + std::to_string(md.moe.num_experts) : "1");
  const long long fixed = in.tp.value_or(1) * in.pp.value_or(1) * in.cp.value_or(1) * in.dp.value_or(1);
  if (chips % fixed != 0)
    d.error("--chips", "the parallel degrees given do not divide the chips", std::to_string(chips),
            "a multiple of tp·pp·cp·dp = " + std::to_string(fixed));
  if (in.tp && in.pp && in.dp && fixed != chips)
    d.error("--dp", "tp·pp·cp·dp must equal the chips", std::to_string(fixed), std::to_string(chips));
}

// The part of the plan every path shares: sequence, micro-batch, cp, vpp, ep, sharding.
void fill_plan_defaults(const TrainInputs& in, const engine::TrainDefaults& d, mapping::TrainPlan& p) {
  p.micro_batch = d.micro_batch.value;
  p.cp = static_cast<int>(in.cp.value_or(1));
  p.vpp = d.vpp.value;
  p.ep = static_cast<int>(in.ep.value_or(1));
  p.zero = d.zero.value;
  p.async_tp = in.async_tp.value_or(false);
  p.lora_rank = static_cast<int>(in.lora_rank.value_or(0));
  p.mtp_layers = static_cast<int>(in.mtp_layers.value_or(0));
  p.moe_load_imbalance = in.moe_load_imbalance.value_or(1.0);
  p.expert_tp = static_cast<int>(in.expert_tp.value_or(0));
  p.moe_capacity_factor = in.moe_capacity_factor.value_or(0.0);
  p.moe_pad_to_capacity = in.moe_pad_to_capacity.value_or(false);
  p.recompute_layers = static_cast<int>(in.recompute_layers.value_or(0));
  if (in.lora_targets) p.lora_targets = *workload::parse_lora_targets(*in.lora_targets);  // checked in check_layout
  if (in.schedule) {
    mapping::schedules().get(*in.schedule, "--schedule");  // unknown names list the valid ones
    p.schedule = *in.schedule;
  }
}

// tp and pp given: dp follows from the chips; the one rule of defaults on that layout; the
// least recompute that fits.
void fill_fixed_plan(const TrainInputs& in, const engine::DefaultsRule& rule, const engine::TrainStated& stated,
                     BuiltTrain& out) {
  engine::TrainScenario& s = out.scenario;
  auto& p = s.plan;
  p.tp = static_cast<int>(*in.tp);
  p.pp = static_cast<int>(*in.pp);
  p.dp = in.dp ? static_cast<int>(*in.dp) : static_cast<int>(*in.chips / (static_cast<long long>(p.tp) * p.pp * p.cp));
  out.defaults = engine::train_defaults(rule, stated, s.model, p.seq_len, &p);
  p.micro_batch = out.defaults.micro_batch.value;
  const long long unit = static_cast<long long>(p.dp) * p.micro_batch;
  if (in.global_batch && *in.global_batch % unit != 0)
    core::fail("--global-batch", "the global batch is not a whole number of micro-batches per data-parallel rank",
               std::to_string(*in.global_batch),
               "a multiple of dp·micro_batch = " + std::to_string(p.dp) + "·" + std::to_string(p.micro_batch) +
                   " = " + std::to_string(unit));
  p.global_batch = out.defaults.global_batch.value;
  if (in.recompute_layers) p.recompute = engine::least_recompute_that_fits(s, out.defaults.recompute.value);
  else engine::set_least_recompute_that_fits(s, out.defaults.recompute.value);
}

// The settings the search chose (those the flags left out and the search explores), with the
// values it took.
void mark_searched(const TrainInputs& in, const mapping::TrainPlan& p, engine::TrainDefaults& d) {
  const std::string why = "chosen by the plan search";
  if (!in.global_batch) d.global_batch = {p.global_batch, d.batch_tokens.origin, d.batch_tokens.basis + ", " +
                                          "in whole micro-batches per data-parallel rank, at least as many as the "
                                          "pipeline needs"};
  if (!in.micro_batch) d.micro_batch = {p.micro_batch, engine::Origin::Search, why};
  if (!in.vpp) d.vpp = {p.vpp, engine::Origin::Search, why};
  if (!in.zero) d.zero = {p.zero, engine::Origin::Search, why};
  if (!in.recompute) {
    d.recompute.origin = engine::Origin::Search;
    d.recompute.basis = why;
  }
}

// The capacity setting as the output states it, with the share the busiest rank drops.
std::string capacity_setting(const mapping::TrainPlan& p) {
  const std::string cf = core::fmt_num(p.moe_capacity_factor);
  if (p.moe_pad_to_capacity)
    return "MoE expert capacity factor " + cf + ", padded (input): every expert runs " + cf +
           " x its mean share of the routed rows; tokens beyond it are dropped";
  std::string s = "MoE expert capacity factor " + cf + " (input): an expert takes at most " + cf +
                  " x its mean share of the routed rows and drops the rest";
  if (p.moe_load_imbalance > 1.0 && p.moe_load_imbalance > p.moe_capacity_factor)
    s += "; at load imbalance " + core::fmt_num(p.moe_load_imbalance) + " the busiest rank drops " +
         core::fmt_num(100.0 * (1.0 - p.moe_capacity_factor / p.moe_load_imbalance), 3) + "% of its routed tokens";
  else if (p.moe_capacity_factor < 1.0)
    s += "; balanced, every expert drops " + core::fmt_num(100.0 * (1.0 - p.moe_capacity_factor), 3) + "% of its share";
  return s;
}

// What to try when no plan fits: more chips (memory), or fewer when a fixed global batch cannot
// give every data-parallel rank a whole micro-batch.
std::string more_or_fewer_chips(const TrainInputs& in) {
  const std::string plan = "a plan given with --tp/--pp/--recompute";
  if (in.global_batch && *in.chips > *in.global_batch)
    return "fewer chips (a global batch of " + std::to_string(*in.global_batch) +
           " sequences employs at most that many data-parallel ranks; train --scaling FROM..TO gives the largest "
           "useful chip count), more chips, or " + plan;
  return "more chips, or " + plan;
}

// A straggling chip on the chosen plan (the search ranks plans without it).
void set_straggler(const TrainInputs& in, engine::TrainScenario& s) {
  if (!in.straggler) return;
  if (in.straggler_stage && *in.straggler_stage >= s.plan.pp)
    core::fail("--straggler-stage", "no such pipeline stage", std::to_string(*in.straggler_stage),
               "a stage from 0 to " + std::to_string(s.plan.pp - 1) + " (pp " + std::to_string(s.plan.pp) + ")");
  s.straggler.slowdown = *in.straggler;
  s.straggler.stage = in.straggler_stage ? static_cast<int>(*in.straggler_stage) : -1;
}

// Context-parallel degrees the search tries: powers of two up to the calibration's cap while
// each rank keeps at least its minimum share of the sequence.
std::vector<int> context_parallel_candidates(long long seq_len, const calib::Params& params) {
  const long long cap = std::llround(params.number("training.search.max_cp"));
  const long long min_tokens = std::llround(params.number("training.search.min_tokens_per_cp_rank"));
  std::vector<int> out = {1};
  for (long long cp = 2; cp <= cap && seq_len / cp >= min_tokens && seq_len % cp == 0; cp *= 2)
    out.push_back(static_cast<int>(cp));
  return out;
}

// No plan of the search found: why, and what to try.
[[noreturn]] void no_plan_found(const TrainInputs& in, const engine::TrainScenario& s, const engine::SearchSpace& space,
                                const engine::SearchResult& best) {
  const std::string chips = std::to_string(*in.chips);
  if (space.batch_bound && best.over_batch_bound > 0 && best.evaluated == 0) {
    const long long most = engine::largest_chips_within_bound(s, *in.chips, space);
    core::fail("--chips", "no plan keeps the global batch within " + core::fmt_int(space.batch_tokens) + " tokens on " +
                              core::fmt_int(*in.chips) + " × " + s.system->chip.name +
                              (most > 0 ? "; the most chips a plan employs at this batch is " + core::fmt_int(most)
                                        : std::string("; every layout needs more micro-batches than the batch holds")),
               chips,
               "fewer chips (train --scaling FROM..TO gives the largest useful chip count), a larger "
               "--max-global-batch-tokens, or --global-batch");
  }
  if (in.global_batch && in.micro_batch && *in.global_batch % *in.micro_batch != 0)
    core::fail("--global-batch", "not a whole number of micro-batches", std::to_string(*in.global_batch),
               "a multiple of --micro-batch (" + std::to_string(*in.micro_batch) + ")");
  const std::string batch = in.global_batch ? "; the stated global batch of " + std::to_string(*in.global_batch) +
                                                  " sequences must split into whole micro-batches on every "
                                                  "data-parallel rank"
                                            : "";
  core::fail("--chips",
             "no plan of the search space fits " + s.model.id + " on " + chips + " × " + s.system->chip.name + batch,
             chips, more_or_fewer_chips(in));
}

// tp or pp left out: the plan search picks the rest, each candidate's global batch by the one
// rule of defaults: within the batch bound (the critical batch, or the stated
// --max-global-batch-tokens), or the recipe's local batch without accumulation.
void search_rest_of_plan(const TrainInputs& in, const engine::DefaultsRule& rule, BuiltTrain& out) {
  engine::TrainScenario& s = out.scenario;
  const engine::TrainDefaults& d = out.defaults;
  engine::SearchSpace space;
  if (in.tp) space.tp = {static_cast<int>(*in.tp)};
  if (in.pp) space.pp = {static_cast<int>(*in.pp)};
  if (in.ep) space.ep = static_cast<int>(*in.ep);
  space.cp = in.cp ? std::vector<int>{static_cast<int>(*in.cp)} : context_parallel_candidates(s.plan.seq_len, *s.calibration);
  // Interleaving, the micro-batch size and ZeRO are searched unless given.
  if (!in.vpp) space.vpp = {1, 2, 4};
  if (!in.micro_batch) space.micro_batch = {1, 2, 4};
  space.recompute = d.recompute.value;
  if (in.zero) space.zero = {s.plan.zero};
  space.runners_up = static_cast<int>(in.top.value_or(0));
  if (in.global_batch) {
    s.plan.global_batch = *in.global_batch;
  } else if (rule.gradient_accumulation) {
    space.batch_tokens = std::llround(d.batch_tokens.value);
    space.batch_bound = true;
  } else {
    space.gradient_accumulation = false;
  }
  const auto best = engine::search_plan(s, *in.chips, space);
  out.searched = true;
  out.evaluated = best.evaluated;
  out.pruned = best.pruned;
  out.fitting = best.fitting;
  out.runners_up = best.runners_up;
  out.runners_up_asked = space.runners_up;
  out.searched_tokens_per_s = best.result.tokens_per_s;
  if (!best.found) no_plan_found(in, s, space, best);
  s = best.best;
  if (in.dp && best.best.plan.dp != *in.dp)
    core::fail("--dp", "no plan with this data-parallel degree was found", std::to_string(*in.dp));
  mark_searched(in, s.plan, out.defaults);
}

}  // namespace

TrainInputs read_train_file(const std::string& path) {
  TrainInputs in = train_inputs_from_json(load_scenario_document(path), path);
  resolve_beside(path, in.model);
  return in;
}

TrainInputs train_inputs_from_json(const config::Json& doc, const std::string& path) {
  core::Diagnostics d;
  config::FieldReader r(doc, "", d);
  TrainInputs in;
  read_text(r, "system", in.system);
  read_text(r, "model", in.model);
  read_count(r, "chips", in.chips);
  read_text(r, "executor", in.executor);
  check_executor(d, "executor", in.executor);
  read_text(r, "framework", in.framework);
  read_train_plan(r, in);
  read_train_workload(r, in);
  r.ignore("description");
  r.finish();
  d.set_file(path);
  d.throw_if_any();
  return in;
}

void fill_unset(TrainInputs& given, const TrainInputs& fallback) {
  auto fill = [](auto& dst, const auto& src) {
    if (!dst) dst = src;
  };
  fill(given.system, fallback.system);
  fill(given.model, fallback.model);
  fill(given.chips, fallback.chips);
  for (auto [dst, src] : {std::pair{&given.tp, &fallback.tp}, {&given.pp, &fallback.pp}, {&given.dp, &fallback.dp},
                          {&given.cp, &fallback.cp}, {&given.ep, &fallback.ep}, {&given.vpp, &fallback.vpp},
                          {&given.micro_batch, &fallback.micro_batch}, {&given.global_batch, &fallback.global_batch},
                          {&given.seq_len, &fallback.seq_len}, {&given.lora_rank, &fallback.lora_rank},
                          {&given.mtp_layers, &fallback.mtp_layers}, {&given.expert_tp, &fallback.expert_tp},
                          {&given.recompute_layers, &fallback.recompute_layers}})
    fill(*dst, *src);
  fill(given.moe_load_imbalance, fallback.moe_load_imbalance);
  fill(given.moe_capacity_factor, fallback.moe_capacity_factor);
  fill(given.moe_pad_to_capacity, fallback.moe_pad_to_capacity);
  for (auto [dst, src] : {std::pair{&given.precision, &fallback.precision}, {&given.zero, &fallback.zero},
                          {&given.lora_targets, &fallback.lora_targets},
                          {&given.recompute, &fallback.recompute}, {&given.executor, &fallback.executor},
                          {&given.schedule, &fallback.schedule},
                          {&given.framework, &fallback.framework}})
    fill(*dst, *src);
  fill(given.train_tokens, fallback.train_tokens);
  fill(given.max_global_batch_tokens, fallback.max_global_batch_tokens);
  fill(given.deadline, fallback.deadline);
  fill(given.budget, fallback.budget);
  fill(given.straggler, fallback.straggler);
  fill(given.straggler_stage, fallback.straggler_stage);
  fill(given.overrides.price_usd_per_chip_hour, fallback.overrides.price_usd_per_chip_hour);
  fill(given.overrides.tdp_w, fallback.overrides.tdp_w);
  fill(given.allow_fallback, fallback.allow_fallback);
  fill(given.async_tp, fallback.async_tp);
}

BuiltTrain build_train(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                       const calib::Params& params) {
  core::Diagnostics d;
  check_counts(in, d);
  check_overrides(in.overrides, d);
  check_scale_inputs(in, d);
  d.throw_if_any();
  BuiltTrain out;
  const hw::SystemSpec& catalog_sys = cat.system(*in.system, "--system");
  if (in.overrides.any()) {
    out.overrides = override_notes(catalog_sys, in.overrides);
    out.overridden_system = std::make_shared<const hw::SystemSpec>(with_overrides(catalog_sys, in.overrides));
  }
  const hw::SystemSpec& sys = out.overridden_system ? *out.overridden_system : catalog_sys;
  out.executor = in.executor.value_or("event");
  engine::TrainScenario& s = out.scenario;
  s.framework = against_flag("--framework", false,
                             [&] { return engine::framework_params(in.framework.value_or("megatron"), params); });
  s.plan.selective = s.framework.selective_scope;
  s.calibration = &params;
  s.system = &sys;
  s.model = against_flag("--model", true, [&] { return workload::load_model(*in.model, models_dir); });
  resolve_precision_and_zero(in, s.plan, d);
  check_precision_supported(in, sys.chip, s.plan.precision, d);
  const auto recompute = stated_recompute(in, d);
  check_layout(in, sys, s.model, d);
  d.throw_if_any();
  const engine::DefaultsRule rule = engine::defaults_rule(s.framework.name, params);
  const engine::TrainStated stated = stated_settings(in, s.plan, recompute);
  s.plan.seq_len = in.seq_len ? *in.seq_len
                              : std::min<long long>(s.model.max_position > 0 ? s.model.max_position : 4096, 8192);
  out.defaults = engine::train_defaults(rule, stated, s.model, s.plan.seq_len);
  fill_plan_defaults(in, out.defaults, s.plan);
  if (!in.lora_targets)
    s.plan.lora_targets = params.flag("training.defaults.lora.all_linear") ? workload::LoraTargets::AllLinear
                                                                           : workload::LoraTargets::Attention;
  if (in.tp && in.pp) fill_fixed_plan(in, rule, stated, out);
  else search_rest_of_plan(in, rule, out);
  set_straggler(in, s);
  out.settings = engine::describe(out.defaults, s.plan.recompute, in.recompute_layers ? 0 : s.plan.recompute_layers,
                                   s.plan.selective);
  if (s.plan.lora_rank > 0)
    out.settings.push_back("LoRA rank " + std::to_string(s.plan.lora_rank) + " (input), adapters on " +
                           workload::lora_targets_name(s.plan.lora_targets) +
                           (in.lora_targets ? " (input)" : " (default: training.defaults.lora.all_linear)"));
  if (s.plan.mtp_layers > 0)
    out.settings.push_back("multi-token prediction: " + std::to_string(s.plan.mtp_layers) +
                           " module(s) on the last stage (input)");
  if (s.plan.moe_capacity_factor > 0) out.settings.push_back(capacity_setting(s.plan));
  if (in.recompute_layers)  // chosen by the rule, the recompute line of describe says so
    out.settings.push_back("recompute layers " + std::to_string(s.plan.recompute_layers) +
                           " (input): the first of each model chunk rerun their forward, " +
                           core::fmt_num(100.0 * mapping::recomputed_layer_share(s.plan, s.model.layers), 3) +
                           "% of the layers; the others keep their activations (Megatron --recompute-method block)");
  if (in.moe_load_imbalance)
    out.settings.push_back("MoE load imbalance " + core::fmt_num(s.plan.moe_load_imbalance) +
                           " (input): the busiest of the " + std::to_string(s.plan.ep) +
                           " expert-parallel ranks receives that many times the mean tokens");
  return out;
}

}  // namespace xpusim::scenario

namespace xpusim::scenario {

namespace {

std::string plan_text(const mapping::TrainPlan& p) {
  return "tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) + " dp=" + std::to_string(p.dp) +
         " cp=" + std::to_string(p.cp) + " ep=" + std::to_string(p.ep) + " vpp=" + std::to_string(p.vpp) +
         " micro_batch=" + std::to_string(p.micro_batch) + " global_batch=" + std::to_string(p.global_batch) +
         " seq_len=" + std::to_string(p.seq_len);
}

TrainBudget budget_for(double tokens, const engine::TrainResult& r, const cost::EnergyCost& e, long long chips) {
  TrainBudget b;
  b.tokens = tokens;
  b.steps = tokens / r.tokens_per_step;
  const double n = static_cast<double>(chips);
  b.time = r.step_time * b.steps;
  b.energy = e.total_energy * n * b.steps;
  b.chips = chips;
  b.price_usd_per_chip_hour = core::to_dollars(e.dollars) / core::to_seconds(r.step_time) * 3600.0;
  b.billed_time = b.time;
  b.dollars = core::Dollars::from_base(billed_dollars(b, b.time));
  return b;
}

// The cost billed for the expected time with failures and restarts.
void bill_with_failures(TrainBudget& b, core::Seconds with_failures) {
  b.billed_time = with_failures;
  b.billed_with_failures = true;
  b.dollars = core::Dollars::from_base(billed_dollars(b, with_failures));
}

}  // namespace

double billed_dollars(const TrainBudget& b, core::Seconds t) {
  return b.price_usd_per_chip_hour * static_cast<double>(b.chips) * core::to_seconds(t) / 3600.0;
}

TrainRun run_train(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                   const calib::Params& params, bool want_trace) {
  TrainRun run;
  run.built = build_train(in, cat, models_dir, params);
  const engine::TrainScenario& s = run.built.scenario;
  const bool analytical = run.built.executor == "analytical" && !want_trace;
  run.result = analytical ? engine::simulate_analytical(s) : engine::simulate_event(s, want_trace);
  if (s.straggler.slowdown > 1.0 && run.result.feasible) {
    engine::TrainScenario nominal = s;
    nominal.straggler = {};
    run.nominal_step_time = engine::simulate_event(nominal, false).step_time;
  }
  if (!run.result.feasible)
    core::fail("plan", "not a valid parallel plan: " + run.result.reason, plan_text(s.plan),
               "degrees that divide the model and the chips (see --help)");
  run.energy = cost::energy_cost(*s.system, params, run.result.activity, run.result.step_time);
  if (in.train_tokens) run.budget = budget_for(*in.train_tokens, run.result, run.energy, s.plan.chips());
  add_scale_results(run, in, params);
  if (run.budget && run.time_to_train_with_failures) bill_with_failures(*run.budget, *run.time_to_train_with_failures);
  return run;
}

}  // namespace xpusim::scenario
