#include "xpusim/engine/sizing.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/check.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/workload/accounting.h"

namespace xpusim::engine {

namespace {
TrainScenario base_scenario(const hw::SystemSpec& sys, const workload::ModelSpec& model, long long seq,
                            core::Dtype precision, const calib::Params& params) {
  TrainScenario base;
  base.framework = framework_params("megatron", params);
  base.calibration = &params;
  base.system = &sys;
  base.model = model;
  base.plan.seq_len = seq;
  base.plan.precision = precision;
  base.plan.micro_batch = 1;
  return base;
}
}  // namespace

mapping::Recompute least_recompute_that_fits(const TrainScenario& s,
                                             const std::vector<mapping::Recompute>& candidates) {
  XS_CHECK(!candidates.empty(), "least_recompute_that_fits needs candidates");
  mapping::TrainPlan plan = s.plan;
  for (const auto rc : candidates) {
    plan.recompute = rc;
    const auto memory = mapping::train_memory_per_chip(s.model, plan, mapping::memory_params(*s.calibration));
    if (memory.total() <= s.system->chip.hbm_capacity.value) return rc;
  }
  return candidates.back();
}

int fewest_recompute_layers_that_fit(const TrainScenario& s) {
  mapping::TrainPlan plan = s.plan;
  plan.recompute = mapping::Recompute::Full;
  const auto params = mapping::memory_params(*s.calibration);
  const auto fits = [&](int n) {
    plan.recompute_layers = n;
    return mapping::train_memory_per_chip(s.model, plan, params).total() <= s.system->chip.hbm_capacity.value;
  };
  const int chunk = mapping::most_layers_per_chunk(plan, s.model.layers);
  if (!fits(chunk - 1)) return 0;
  int lo = 0, hi = chunk - 1;  // fits(hi); lo = 0 stands for none recomputed, which does not fit
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (fits(mid) ? hi : lo) = mid;
  }
  return hi;
}

void set_least_recompute_that_fits(TrainScenario& s, const std::vector<mapping::Recompute>& candidates) {
  s.plan.recompute_layers = 0;
  s.plan.recompute = least_recompute_that_fits(s, candidates);
  if (s.plan.recompute == mapping::Recompute::Full && candidates.size() > 1 && s.framework.recompute_some_layers)
    s.plan.recompute_layers = fewest_recompute_layers_that_fit(s);
}

TrainFit fewest_chips_to_train(const hw::SystemSpec& sys, const workload::ModelSpec& model,
                               long long seq, core::Dtype precision, const calib::Params& params) {
  TrainFit fit;
  const TrainScenario base = base_scenario(sys, model, seq, precision, params);
  SearchSpace space;
  space.zero = {mapping::Zero::Zero1, mapping::Zero::Zero3};
  space.batch_tokens = 1;  // one micro-batch per data-parallel rank: memory is what matters here
  // Lower bound: 16 bytes per parameter of mixed-precision Adam state spread over every chip.
  const double model_params = workload::count_params(model).total;
  const double hbm = core::to_bytes(sys.chip.hbm_capacity.value);
  const long long node = std::max(1, sys.chips_per_node);
  long long chips = static_cast<long long>(std::ceil(16.0 * model_params / hbm));
  chips = std::max(node, (chips + node - 1) / node * node);
  for (int i = 0; i < 400 && chips <= sys.max_chips.value; ++i) {
    auto r = search_plan(base, chips, space);
    if (r.found) {
      fit.found = true;
      fit.chips = chips;
      fit.scenario = r.best;
      fit.result = r.result;
      return fit;
    }
    // Within a domain try every node count; beyond it, whole domains.
    chips += chips < sys.chips_per_domain ? node : sys.chips_per_domain;
    if (chips > sys.chips_per_domain && chips % sys.chips_per_domain != 0)
      chips = (chips + sys.chips_per_domain - 1) / sys.chips_per_domain * sys.chips_per_domain;
  }
  return fit;
}

ServeFit fewest_chips_to_serve(const hw::SystemSpec& sys, const workload::ModelSpec& model,
                               core::Dtype weights, long long context, const calib::Params& params) {
  const mapping::MemoryParams memory = mapping::memory_params(params);
  ServeFit fit;
  const core::Bytes cap = sys.chip.hbm_capacity.value;
  for (int pp = 1; pp <= 64; pp *= 2) {
    for (int tp = 1; tp <= sys.chips_per_domain; tp *= 2) {
      if (!workload::tp_divides(model, tp) || sys.chips_per_domain % tp != 0) continue;
      mapping::ServePlan plan;
      plan.tp = tp;
      plan.pp = pp;
      plan.weight_dtype = weights;
      plan.kv_dtype = core::Dtype::Bf16;
      const auto m = mapping::serve_memory_per_chip(model, plan, 1, context, memory);
      if (m.total() <= cap) {
        const long long chips = static_cast<long long>(tp) * pp;
        if (!fit.found || chips < fit.chips) {
          fit.found = true;
          fit.chips = chips;
          fit.tp = tp;
          fit.pp = pp;
          fit.per_chip = m.total();
        }
      }
    }
    if (fit.found) break;  // more stages only add chips
  }
  return fit;
}

TrainTime time_to_train(const hw::SystemSpec& sys, const workload::ModelSpec& model, long long chips,
                        double tokens, long long seq, core::Dtype precision, long long batch_tokens,
                        const calib::Params& params) {
  TrainTime out;
  const TrainScenario base = base_scenario(sys, model, seq, precision, params);
  SearchSpace space;
  space.tp = {4, 8, 16, 32};
  space.pp = {1, 2, 4, 8, 16};
  space.recompute = {mapping::Recompute::Selective, mapping::Recompute::Full};
  space.zero = {mapping::Zero::Zero1};
  space.batch_tokens = batch_tokens;
  auto r = search_plan(base, chips, space);
  if (!r.found) return out;
  out.found = true;
  out.scenario = r.best;
  out.result = simulate_event(r.best);
  out.time = core::seconds(tokens / out.result.tokens_per_s);
  return out;
}

}  // namespace xpusim::engine
