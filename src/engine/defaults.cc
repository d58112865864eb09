// The one rule for unstated training settings (engine/defaults.h, docs/validation.md "Defaults").

#include "xpusim/engine/defaults.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "xpusim/core/format.h"
#include "xpusim/mapping/schedule.h"
#include "xpusim/workload/accounting.h"

namespace xpusim::engine {

namespace {

using mapping::Recompute;
using mapping::Zero;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

Setting<mapping::Zero> zero_default(const DefaultsRule& rule, const TrainStated& in) {
  if (in.zero) return {*in.zero, Origin::Input, ""};
  if (rule.fsdp) return {Zero::Fsdp, Origin::Recipe, rule.framework + " shards with FSDP by default"};
  return {Zero::Zero1, Origin::Recipe, rule.framework + " uses the distributed optimizer (ZeRO-1) by default"};
}

Setting<std::vector<Recompute>> recompute_default(const TrainStated& in) {
  if (in.recompute) return {{*in.recompute}, Origin::Input, ""};
  return {{Recompute::None, Recompute::Selective, Recompute::Full}, Origin::Rule,
          "the least recomputation that fits in memory"};
}

Setting<int> vpp_default(const TrainStated& in) {
  if (in.vpp) return {*in.vpp, Origin::Input, ""};
  if (in.interleaved)
    return {2, Origin::Recipe,
            "interleaved schedule named without its virtual stages: 2 (torchtitan's default, the least Megatron "
            "accepts)"};
  return {1, Origin::Recipe, "no interleaving unless asked for"};
}

/// The batch target: the stated global batch, else the critical-batch rule for the model's size.
Setting<double> batch_tokens_default(const DefaultsRule& rule, const TrainStated& in,
                                     const workload::ModelSpec& model, long long seq_len) {
  if (in.global_batch) return {static_cast<double>(*in.global_batch * seq_len), Origin::Input, ""};
  if (in.max_batch_tokens)
    return {*in.max_batch_tokens, Origin::Input, "upper bound of " + core::fmt_int(std::llround(*in.max_batch_tokens)) + " tokens"};
  const double n = workload::count_params(model).total;
  const bool large = n >= rule.threshold_params;
  const double tokens = large ? rule.tokens_large : rule.tokens_small;
  return {tokens, Origin::Rule,
          "critical batch of " + core::fmt_int(std::llround(tokens)) + " tokens for a model of " +
              (large ? "at least " : "fewer than ") + core::fmt_num(rule.threshold_params / 1e9) +
              "B parameters (" + core::fmt_num(n / 1e9) + "B)"};
}

/// The recipe's micro-batch; without gradient accumulation and with a stated global batch, the
/// whole local batch (split over the pipeline stages where the framework does so).
Setting<long long> micro_batch_default(const DefaultsRule& rule, const TrainStated& in,
                                       const mapping::TrainPlan* layout) {
  if (in.micro_batch) return {*in.micro_batch, Origin::Input, ""};
  if (!rule.gradient_accumulation && in.global_batch && layout && layout->dp > 0 &&
      *in.global_batch % layout->dp == 0) {
    long long mb = std::max<long long>(1, *in.global_batch / layout->dp);
    std::string basis = rule.framework + " accumulates no gradients: the local batch global/dp";
    if (rule.split_local_batch_over_stages && layout->pp > 1 && mb % layout->pp == 0) {
      mb /= layout->pp;
      basis += ", split into pp micro-batches";
    }
    return {mb, Origin::Recipe, basis};
  }
  return {rule.micro_batch, Origin::Recipe, rule.framework + " recipe"};
}

/// The global batch on a known layout when the input states none.
Setting<long long> global_batch_default(const DefaultsRule& rule, const TrainDefaults& d, mapping::TrainPlan plan) {
  plan.micro_batch = d.micro_batch.value;
  plan.vpp = d.vpp.value;
  if (!rule.gradient_accumulation)
    return {static_cast<long long>(plan.dp) * plan.micro_batch * pipeline_min_micro_batches(plan), Origin::Recipe,
            rule.framework + " accumulates no gradients: dp × local batch"};
  return {global_batch_for_tokens(d.batch_tokens.value, plan), Origin::Rule,
          d.batch_tokens.basis + ", in whole micro-batches per data-parallel rank, at least the " +
              std::to_string(pipeline_min_micro_batches(plan)) + " the pipeline needs"};
}

std::string sharding_name(Zero z) {
  if (z == Zero::None || z == Zero::Fsdp) return mapping::zero_name(z);
  return "ZeRO-" + mapping::zero_name(z);
}

std::string line(const std::string& name, const std::string& value, Origin o, const std::string& basis) {
  return name + " " + value + " (" + origin_name(o) + (basis.empty() ? "" : ": " + basis) + ")";
}

}  // namespace

std::string origin_name(Origin o) {
  switch (o) {
    case Origin::Input: return "input";
    case Origin::Recipe: return "recipe";
    case Origin::Rule: return "rule";
    case Origin::Search: return "search";
  }
  return "rule";
}

DefaultsRule defaults_rule(const std::string& framework, const calib::Params& params) {
  const std::string recipe = "training.defaults.recipes." + framework + ".";
  const std::string batch = "training.defaults.critical_batch.";
  DefaultsRule r;
  r.framework = framework;
  r.micro_batch = std::llround(params.number(recipe + "micro_batch"));
  r.gradient_accumulation = params.flag(recipe + "gradient_accumulation");
  r.fsdp = params.flag(recipe + "fsdp");
  r.split_local_batch_over_stages = params.flag(recipe + "split_local_batch_over_stages");
  r.tokens_small = params.number(batch + "tokens_below_threshold");
  r.tokens_large = params.number(batch + "tokens_at_or_above_threshold");
  r.threshold_params = params.number(batch + "threshold_params");
  return r;
}

TrainDefaults train_defaults(const DefaultsRule& rule, const TrainStated& stated, const workload::ModelSpec& model,
                             long long seq_len, const mapping::TrainPlan* layout) {
  TrainDefaults d;
  d.zero = zero_default(rule, stated);
  d.recompute = recompute_default(stated);
  d.vpp = vpp_default(stated);
  d.batch_tokens = batch_tokens_default(rule, stated, model, seq_len);
  d.micro_batch = micro_batch_default(rule, stated, layout);
  if (stated.global_batch) d.global_batch = {*stated.global_batch, Origin::Input, ""};
  else if (layout) d.global_batch = global_batch_default(rule, d, *layout);
  return d;
}

long long pipeline_min_micro_batches(const mapping::TrainPlan& plan) {
  if (plan.pp <= 1) return 1;
  if (mapping::schedule_of(plan).name() == "dualpipe") return 2LL * plan.pp;
  return plan.pp;
}

long long pipeline_micro_batch_step(const mapping::TrainPlan& plan) {
  if (plan.pp <= 1) return 1;
  const std::string name = mapping::schedule_of(plan).name();
  if (name == "dualpipe") return 2;
  return name == "interleaved" ? plan.pp : 1;
}

namespace {
/// Sequences per data-parallel micro-batch round (dp × micro-batch) and the sequences in `tokens`.
std::pair<long long, long long> unit_and_sequences(double tokens, const mapping::TrainPlan& plan) {
  return {std::max<long long>(1, static_cast<long long>(plan.dp) * plan.micro_batch),
          static_cast<long long>(tokens / static_cast<double>(std::max<long long>(1, plan.seq_len)))};
}
}  // namespace

long long global_batch_for_tokens(double tokens, const mapping::TrainPlan& plan) {
  const auto [unit, seqs] = unit_and_sequences(tokens, plan);
  const long long step = pipeline_micro_batch_step(plan);
  const long long m = std::max(ceil_div(std::max<long long>(1, seqs), unit), pipeline_min_micro_batches(plan));
  return ceil_div(m, step) * step * unit;
}

long long global_batch_within_tokens(double tokens, const mapping::TrainPlan& plan) {
  const auto [unit, seqs] = unit_and_sequences(tokens, plan);
  const long long step = pipeline_micro_batch_step(plan);
  const long long m = seqs / unit / step * step;
  return m >= pipeline_min_micro_batches(plan) ? m * unit : 0;
}

std::vector<std::string> describe(const TrainDefaults& d, mapping::Recompute recompute, int recompute_layers,
                                  mapping::SelectiveScope selective) {
  std::string what = mapping::recompute_name(recompute);
  if (recompute == Recompute::Selective && selective == mapping::SelectiveScope::AllButProjections)
    what += ", keeping only the QKV and up-projection outputs";
  if (recompute == Recompute::Full && recompute_layers > 0)
    what += " of the first " + std::to_string(recompute_layers) +
            " layers of each model chunk (Megatron --recompute-method block), the fewest that fit";
  return {line("global batch", core::fmt_int(d.global_batch.value) + " sequences", d.global_batch.origin,
               d.global_batch.basis),
          line("micro-batch", std::to_string(d.micro_batch.value), d.micro_batch.origin, d.micro_batch.basis),
          line("virtual pipeline stages", std::to_string(d.vpp.value), d.vpp.origin, d.vpp.basis),
          line("recompute", what, d.recompute.origin, d.recompute.basis),
          line("optimizer sharding", sharding_name(d.zero.value), d.zero.origin, d.zero.basis)};
}

}  // namespace xpusim::engine
