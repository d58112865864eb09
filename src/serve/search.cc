#include "xpusim/serve/search.h"

#include <algorithm>

#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::serve {

std::vector<std::string> default_compare_systems() {
  return {"trn3-ultraserver-gen2", "trn2-ultraserver", "gb300-nvl72"};
}

namespace {

// One engine (or one prefill+decode pair) at its share of the rate.
PlanCandidate evaluate(const SearchSpec& spec, const ServeEnv& env, int tp, int ep, long long seqs,
                       long long engines, long long prefill_engines) {
  PlanCandidate c;
  c.tp = tp;
  c.ep = ep;
  c.max_num_seqs = seqs;
  ServeScenario sc = spec.base;
  sc.tp = tp;
  sc.ep = ep;
  sc.pp = 1;
  sc.max_num_seqs = seqs;
  const long long unit = static_cast<long long>(tp) * (prefill_engines > 0 ? prefill_engines + 1 : 1);
  // Simulate a slice: `prefill_engines` prefill engines feeding one decode engine (or one
  // colocated engine) at the matching share of the rate; the deployment is `engines` slices.
  sc.chips = unit;
  sc.prefill_chips = prefill_engines > 0 ? prefill_engines * tp : 0;
  sc.load.arrival = ArrivalKind::Poisson;
  sc.load.rate_per_s = spec.rate_per_s / static_cast<double>(engines);
  sc.load.requests = spec.requests;
  auto rep = run_scenario(sc, env);
  c.chips = unit * engines;
  c.prefill_chips = sc.prefill_chips * engines;
  if (!rep) {
    c.note = rep.error();
    return c;
  }
  c.ttft_p90_ms = rep->sim.ttft_ms.p90;
  c.tpot_p90_ms = rep->sim.tpot_ms.p90;
  c.output_tokens_per_s_per_chip = rep->output_tokens_per_s_per_chip;
  c.dollars_per_million_output_tokens = rep->dollars_per_million_output_tokens;
  c.joules_per_output_token = rep->joules_per_output_token;
  // Sustained: the measured rate is at least serving.search.min_sustained_share of the rate the
  // drawn arrivals offered over the same window (not the nominal rate, which a finite Poisson
  // sample misses by a few percent either way).
  const double offered = rep->sim.offered_requests_per_s > 0 ? rep->sim.offered_requests_per_s : sc.load.rate_per_s;
  const double sustained = env.calibration->number("serving.search.min_sustained_share") * offered;
  c.meets_slo = c.ttft_p90_ms <= core::to_ms(spec.ttft_p90_slo) && c.tpot_p90_ms <= core::to_ms(spec.tpot_p90_slo) &&
                rep->sim.requests_per_s >= sustained;
  return c;
}

}  // namespace

SearchResult search_plan(const SearchSpec& spec, const ServeEnv& env) {
  SearchResult res;
  res.system = spec.base.system;
  const auto& sys = env.catalog->system(spec.base.system, "system");
  const auto model = workload::load_model(spec.base.model, env.models_dir);
  const long long dom = std::max(1, sys.chips_per_domain);
  std::vector<int> tps = spec.tp_candidates;
  if (tps.empty())
    for (int tp = 1; tp <= 64 && tp <= dom; tp *= 2) tps.push_back(tp);
  for (int tp : tps) {
    if (tp > dom || model.heads % tp != 0) continue;
    // Mixture of experts: the experts are sharded over the same chips (EP = TP group), or the
    // weights of every expert would sit on every chip.
    const int ep = model.is_moe() && model.moe.num_experts % tp == 0 ? tp : 1;
    for (long long seqs : spec.max_num_seqs_candidates) {
      for (long long pre : {0LL, 1LL}) {
        if (pre > 0 && !spec.try_disaggregated) continue;
        // Fewest slices meeting the SLO: grow geometrically, then bisect.
        const long long unit = tp * (pre > 0 ? pre + 1 : 1);
        long long lo = 0, hi = 1;
        PlanCandidate best_here, last;
        bool ok = false, failed = false;
        // More slices than requests cannot help: each slice already serves requests alone.
        while (hi * unit <= 1000000 && hi <= std::max(1LL, spec.requests)) {
          last = evaluate(spec, env, tp, ep, seqs, hi, pre);
          if (!last.note.empty()) { res.tried.push_back(last); failed = true; break; }
          if (last.meets_slo) { best_here = last; ok = true; break; }
          lo = hi;
          hi *= 2;
        }
        if (!ok && !failed && last.chips > 0) {
          last.note = "misses the SLOs or the rate at every slice count tried";
          res.tried.push_back(last);
        }
        while (ok && hi - lo > 1) {
          const long long mid = (lo + hi) / 2;
          auto c = evaluate(spec, env, tp, ep, seqs, mid, pre);
          if (c.meets_slo) { hi = mid; best_here = c; } else { lo = mid; }
        }
        if (!ok) continue;
        best_here.note = pre > 0 ? "disaggregated 1:1 prefill:decode" : "colocated";
        res.tried.push_back(best_here);
        if (!res.found || best_here.chips < res.best.chips ||
            (best_here.chips == res.best.chips &&
             best_here.dollars_per_million_output_tokens < res.best.dollars_per_million_output_tokens)) {
          res.best = best_here;
          res.found = true;
        }
      }
    }
  }
  if (!res.found) res.best.note = res.tried.empty() ? "no layout fits" : res.tried.back().note;
  return res;
}

std::vector<SearchResult> compare_systems(const SearchSpec& spec, const std::vector<std::string>& systems,
                                          const ServeEnv& env) {
  std::vector<SearchResult> out;
  for (const auto& s : systems) {
    SearchSpec one = spec;
    one.base.system = s;
    out.push_back(search_plan(one, env));
  }
  return out;
}

}  // namespace xpusim::serve
