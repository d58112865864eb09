#include "xpusim/scenario/scale.h"

#include <algorithm>
#include <cmath>

#include "xpusim/compute/calibration.h"
#include "xpusim/config/values.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/suggest.h"
#include "xpusim/workload/accounting.h"

namespace xpusim::scenario {

namespace {

constexpr double kUsefulGain = 1.5;  // issue 11: a doubling must add at least half again

void check_tier(const TrainInputs& in, core::Diagnostics& d) {
  if (!in.checkpoint_tier) return;
  const auto& names = engine::checkpoint_tier_names();
  if (std::find(names.begin(), names.end(), *in.checkpoint_tier) == names.end())
    d.error("--checkpoint-tier", "unknown storage tier", *in.checkpoint_tier, "one of: " + core::join(names),
            core::did_you_mean(*in.checkpoint_tier, names));
}

void check_monte_carlo(const TrainInputs& in, core::Diagnostics& d) {
  config::check_positive_count(d, "--runs", in.runs);
  config::check_non_negative_count(d, "--seed", in.seed);
  if (in.runs && !in.train_tokens)
    d.error("--runs", "a Monte Carlo of the whole run needs the tokens to train", std::to_string(*in.runs),
            "--train-tokens N with --runs");
  if (in.seed && !in.runs) d.error("--seed", "a seed needs --runs", std::to_string(*in.seed), "--runs N with --seed");
}

long long round_up(long long v, long long unit) { return (v + unit - 1) / unit * unit; }

engine::GoodputInputs goodput_inputs(const TrainInputs& in, const engine::TrainScenario& s,
                                     const engine::TrainResult& r) {
  engine::GoodputInputs g;
  const auto& p = s.plan;
  g.chips = p.chips();
  g.chips_per_node = s.system->chips_per_node;
  // A LoRA run checkpoints its adapters and their optimizer state; the frozen base weights are
  // the published model's (read again at restart, not written).
  g.parameters = p.lora_rank > 0 ? workload::lora_params(s.model, p.lora_rank, p.lora_targets) : workload::count_params(s.model).total;
  // Without optimizer sharding one data-parallel replica holds every unique byte.
  g.checkpoint_writers = p.zero == mapping::Zero::None ? g.chips / p.dp : g.chips;
  g.step_time = r.step_time;
  g.tokens_per_step = r.tokens_per_step;
  g.spares = in.spares.value_or(0);
  if (in.checkpoint_interval) g.interval = core::Seconds::from_base(*in.checkpoint_interval);
  return g;
}

void add_site_power(TrainRun& run, const TrainInputs& in, const calib::Params& params) {
  run.pue = in.pue ? *in.pue : params.number("reliability.facility.pue");
  const double chips = static_cast<double>(run.built.scenario.plan.chips());
  run.site_power = run.energy.average_power * chips * run.pue;
  run.site_energy_per_token = run.energy.total_energy * chips * run.pue / run.result.tokens_per_step;
}

}  // namespace

// --straggler in [1, 100] on the event executor; --straggler-stage with it (its upper bound,
// the pipeline depth, is checked once the plan is known).
void check_straggler(const TrainInputs& in, core::Diagnostics& d) {
  if (in.straggler && !(*in.straggler >= 1.0 && *in.straggler <= core::limits::kStragglerSlowdown))
    d.error("--straggler", "the straggling chip's slowdown is out of range", core::fmt_num(*in.straggler),
            "a factor from 1 to 100 (1.3 = 30% slower)");
  if (in.straggler && in.executor && *in.executor == "analytical")
    d.error("--straggler", "a straggling replica needs the event executor", "analytical", "--executor event");
  if (in.straggler_stage && !in.straggler)
    d.error("--straggler-stage", "names the stage of a straggling chip", std::to_string(*in.straggler_stage),
            "--straggler F with it");
  if (in.straggler_stage && *in.straggler_stage < 0)
    d.error("--straggler-stage", "must be >= 0", std::to_string(*in.straggler_stage), "a pipeline stage from 0");
}

void check_scale_inputs(const TrainInputs& in, core::Diagnostics& d) {
  check_tier(in, d);
  config::check_non_negative_count(d, "--spares", in.spares);
  config::check_positive_number(d, "--checkpoint-interval", in.checkpoint_interval);
  check_monte_carlo(in, d);
  check_pue(in.pue, d);
  check_straggler(in, d);
  // The solver's counts drop these (inputs_at_count); anywhere else (a sweep point) they would
  // be silently ignored.
  if (in.deadline || in.budget)
    d.error(in.deadline ? "deadline" : "budget_usd", "the deadline and budget solvers run through xpusim train",
            in.deadline.value_or(""), "xpusim train --deadline D or --budget USD (or api::train)");
  if (in.scaling) {
    try {
      parse_scaling(*in.scaling);
    } catch (const core::InputError& e) {
      for (const auto& x : e.diagnostics()) d.add(x);
    }
  }
}

void add_scale_results(TrainRun& run, const TrainInputs& in, const calib::Params& params) {
  const auto& s = run.built.scenario;
  run.checkpoint_tier = in.checkpoint_tier.value_or(engine::kDefaultCheckpointTier);
  run.spares = in.spares.value_or(0);
  const auto rel = engine::reliability_params(compute::family_of(s.system->chip), run.checkpoint_tier, params);
  run.goodput = engine::goodput(goodput_inputs(in, s, run.result), rel);
  add_site_power(run, in, params);
  if (!in.train_tokens) return;
  run.time_to_train_with_failures = core::Seconds::from_base(*in.train_tokens / run.goodput.effective_tokens_per_s);
  if (!in.runs) return;
  const core::Seconds work = run.result.step_time * (*in.train_tokens / run.result.tokens_per_step) *
                             run.goodput.straggler_slowdown;
  const double intervals = static_cast<double>(*in.runs) *
                           std::ceil(core::to_seconds(work) / core::to_seconds(run.goodput.checkpoint_interval));
  if (!(intervals <= core::limits::kMonteCarloIntervals))
    core::fail("--train-tokens",
               "the Monte Carlo of the whole run would simulate " + core::fmt_num(intervals, 3) +
                   " checkpoint intervals (runs × time to train / interval)",
               core::fmt_num(*in.train_tokens, 3),
               "at most " + core::fmt_num(core::limits::kMonteCarloIntervals, 3) +
                   " intervals: fewer tokens or fewer --runs (without --runs the mean time to train is exact)");
  run.monte_carlo = engine::monte_carlo_time_to_train(run.goodput, work, static_cast<int>(*in.runs),
                                                      static_cast<std::uint64_t>(in.seed.value_or(1)));
}

ScalingRange parse_scaling(const std::string& text) {
  const auto dots = text.find("..");
  ScalingRange r;
  bool ok = dots != std::string::npos;
  try {
    if (ok) {
      size_t a = 0, b = 0;
      r.from = std::stoll(text.substr(0, dots), &a);
      r.to = std::stoll(text.substr(dots + 2), &b);
      ok = a == dots && b == text.size() - dots - 2;
    }
  } catch (const std::exception&) {
    ok = false;
  }
  if (!ok || r.from < 1 || r.to <= r.from)
    core::fail("--scaling", "not a range of chip counts", text, "FROM..TO with 1 ≤ FROM < TO, e.g. 144..1048576");
  return r;
}

std::vector<long long> scaling_counts(const ScalingRange& r, const hw::SystemSpec& sys) {
  const long long domain = std::max(1, sys.chips_per_domain);
  const long long last = r.to >= domain ? r.to / domain * domain : r.to;
  std::vector<long long> out;
  for (long long c = r.from >= domain ? round_up(r.from, domain) : r.from; c < last;) {
    out.push_back(c);
    c = 2 * c > domain ? round_up(2 * c, domain) : 2 * c;
  }
  if (out.empty() || out.back() < last) out.push_back(last);
  return out;
}

long long largest_useful_count(const std::vector<long long>& chips, const std::vector<double>& throughput,
                               bool& flattened) {
  XS_CHECK(!chips.empty() && chips.size() == throughput.size(), "one throughput per count");
  long long best = chips.front();
  flattened = true;
  for (size_t i = 0; i + 1 < chips.size(); ++i) {
    const double doublings = std::log2(static_cast<double>(chips[i + 1]) / static_cast<double>(chips[i]));
    const bool useful = throughput[i + 1] >= throughput[i] * std::pow(kUsefulGain, doublings);
    if (useful) best = chips[i];
    if (i + 2 == chips.size()) flattened = !useful;
  }
  return best;
}

}  // namespace xpusim::scenario
