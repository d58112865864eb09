#include "xpusim/serve/search.h"

#include "xpusim/serve/software_range.h"

#include <algorithm>
#include <optional>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/serve/software_range.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::serve {

std::vector<std::string> default_compare_systems() {
  return {"trn3-ultraserver-gen2", "trn2-ultraserver", "gb300-nvl72"};
}

namespace {

// Chips a searched deployment may hold at most: a slice count past it is not tried.
constexpr long long kMostSearchChips = 1000000;

bool meets_latency(const PlanCandidate& c, const SearchSpec& spec) {
  return c.ttft_p90_ms <= core::to_ms(spec.ttft_p90_slo) && c.tpot_p90_ms <= core::to_ms(spec.tpot_p90_slo);
}

// A slice's simulated report read into a candidate: latencies, rates, energy and cost, and
// whether the slice meets both SLOs and sustains its share of the rate.
void score(PlanCandidate& c, const ServeReport& rep, const SearchSpec& spec, const ServeEnv& env, double rate) {
  c.ttft_p90_ms = rep.sim.ttft_ms.p90;
  c.tpot_p90_ms = rep.sim.tpot_ms.p90;
  c.output_tokens_per_s_per_chip = rep.output_tokens_per_s_per_chip;
  c.dollars_per_million_output_tokens = rep.dollars_per_million_output_tokens;
  c.joules_per_output_token = rep.joules_per_output_token;
  c.precision = rep.scenario.precision;
  c.framework = rep.framework + (rep.framework_version.empty() ? "" : "@" + rep.framework_version);
  // Sustained: not overloaded (the offered rate within the engines' capacity, the report's rule)
  // and the measured rate at least serving.search.min_sustained_share of the rate the drawn
  // arrivals offered over the same window (not the nominal rate, which a finite Poisson sample
  // misses by a few percent either way).
  const double offered = rep.offered_requests_per_s > 0 ? rep.offered_requests_per_s : rate;
  const double sustained = env.calibration->number("serving.search.min_sustained_share") * offered;
  c.sustains_rate = !rep.overloaded && rep.sim.requests_per_s >= sustained;
  c.meets_slo = meets_latency(c, spec) && c.sustains_rate;
}

double price_per_hour(const hw::SystemSpec& sys) { return core::to_dollars_per_hour(sys.price_per_chip_hour.value); }

// What every candidate of a search varies besides the slices: tp, ep, the batch limit, for a
// mixture of experts whether attention runs data-parallel beside ep-way experts (each of the ep
// chips its own engine, tp 1), and the pipeline stages of a tensor-parallel engine.
struct Layout {
  int tp = 1, ep = 1;
  long long seqs = 0;
  bool dp_attention = false;
  int pp = 1;
  long long chips() const { return (dp_attention ? ep : tp) * static_cast<long long>(pp); }
};

// A trace's share for one of `slices` slices: every slices-th request (the router deals them
// round-robin), the first `requests` of those.
void deal_trace(LoadSpec& load, long long slices, long long requests) {
  std::vector<Request> share;
  for (size_t i = 0; i < load.trace.size() && static_cast<long long>(share.size()) < requests;
       i += static_cast<size_t>(slices))
    share.push_back(load.trace[i]);
  load.trace = std::move(share);
  load.requests = static_cast<long long>(load.trace.size());
}

// One slice of the deployment, at its share of the load (of the Poisson rate, or of a trace's
// requests): the layout on spec.base's systems.
ServeScenario slice_scenario(const SearchSpec& spec, const Layout& l, long long slices, long long requests) {
  ServeScenario sc = spec.base;
  sc.tp = l.tp;
  sc.ep = l.ep;
  sc.attention_dp = l.dp_attention;
  sc.pp = l.pp;
  sc.max_num_seqs = l.seqs;
  if (sc.load.arrival == ArrivalKind::Trace) {
    deal_trace(sc.load, slices, requests);
    return sc;
  }
  sc.load.arrival = ArrivalKind::Poisson;
  sc.load.rate_per_s = spec.rate_per_s / static_cast<double>(slices);
  sc.load.requests = requests;
  return sc;
}

// Simulates the slice and scores the candidate (or records why the slice cannot run).
PlanCandidate simulated(PlanCandidate c, const ServeScenario& slice, const SearchSpec& spec, const ServeEnv& env) {
  auto rep = run_scenario(slice, env);
  if (!rep) {
    // A slice that cannot run (the model does not fit it): report the one slice, not the count
    // the probe tried.
    c.note = rep.error();
    if (slice.chips > 0 && c.chips > 0) {
      c.dollars_per_hour *= static_cast<double>(slice.chips) / static_cast<double>(c.chips);
      c.chips = slice.chips;
      c.prefill_chips = slice.prefill_chips;
    }
    return c;
  }
  score(c, *rep, spec, env, slice.load.rate_per_s);
  return c;
}

PlanCandidate candidate_of(const Layout& l) {
  PlanCandidate c;
  c.tp = l.tp;
  c.ep = l.ep;
  c.dp_attention = l.dp_attention;
  c.pp = l.pp;
  c.max_num_seqs = l.seqs;
  return c;
}

// A slice of `ratio.first` prefill engines beside `ratio.second` decode engines, or one colocated
// engine (ratio 0:1); the deployment is `slices` of them.
PlanCandidate evaluate(const SearchSpec& spec, const ServeEnv& env, const Layout& l, long long slices,
                       std::pair<int, int> ratio, long long requests) {
  ServeScenario sc = slice_scenario(spec, l, slices, requests);
  sc.chips = l.chips() * (ratio.first + ratio.second);
  sc.prefill_chips = l.chips() * ratio.first;
  PlanCandidate c = candidate_of(l);
  c.chips = sc.chips * slices;
  c.prefill_chips = sc.prefill_chips * slices;
  c.dollars_per_hour = static_cast<double>(c.chips) * price_per_hour(env.catalog->system(sc.system, "system"));
  return simulated(c, sc, spec, env);
}

// A slice of `ratio` prefill engines on spec.base.prefill_system and decode engines on
// spec.base.decode_system (tp chips each); the deployment is `slices` of them.
PlanCandidate evaluate_hetero(const SearchSpec& spec, const ServeEnv& env, const Layout& l, std::pair<int, int> ratio,
                              long long slices, long long requests) {
  ServeScenario sc = slice_scenario(spec, l, slices, requests);
  sc.chips = 0;
  sc.prefill_chips = static_cast<long long>(ratio.first) * l.tp;
  sc.decode_chips = static_cast<long long>(ratio.second) * l.tp;
  PlanCandidate c = candidate_of(l);
  c.prefill_engines = ratio.first;
  c.decode_engines = ratio.second;
  c.prefill_chips = sc.prefill_chips * slices;
  c.decode_chips = sc.decode_chips * slices;
  c.chips = c.prefill_chips + c.decode_chips;
  c.dollars_per_hour =
      static_cast<double>(c.prefill_chips) * price_per_hour(env.catalog->system(sc.prefill_system, "prefill_system")) +
      static_cast<double>(c.decode_chips) * price_per_hour(env.catalog->system(sc.decode_system, "decode_system"));
  return simulated(c, sc, spec, env);
}

// Requests of the unloaded probe (fewest_slices).
constexpr long long kUnloadedProbeRequests = 64;

// The fewest slices (of `unit` chips) whose candidate meets the SLOs: grow geometrically, then
// bisect. An infeasible slice or a miss at every count tried is recorded in `tried`.
// `max_slices` bounds the search (a cheaper plan is already known beyond it).
template <typename Evaluate>
std::optional<PlanCandidate> fewest_slices(Evaluate eval, const SearchSpec& spec, long long unit,
                                           std::vector<PlanCandidate>& tried, long long max_slices = kMostSearchChips) {
  const long long requests = spec.requests;
  long long lo = 0, hi = 1;
  PlanCandidate best, last;
  // More slices than requests cannot help: each slice already serves requests alone.
  const long long most = std::max(1LL, requests);
  const long long room = std::min(most, std::max(1LL, kMostSearchChips / std::max(1LL, unit)));
  const long long limit = std::min(max_slices, room);
  // The most slices first, with a few requests: as unloaded as any count gets. Latencies that
  // miss the SLOs there miss them at every count, and the ladder below is not climbed.
  const PlanCandidate unloaded = eval(limit, kUnloadedProbeRequests);
  if (!unloaded.note.empty() || !meets_latency(unloaded, spec)) {
    PlanCandidate c = unloaded;
    if (c.note.empty())
      c.note = core::strformat("misses the SLOs unloaded (%lld slices): TTFT p90 %.0f ms, TPOT p90 %.1f ms", limit,
                               c.ttft_p90_ms, c.tpot_p90_ms);
    tried.push_back(c);
    return std::nullopt;
  }
  while (true) {
    last = eval(hi, requests);
    if (!last.note.empty()) {
      tried.push_back(last);
      return std::nullopt;
    }
    if (last.meets_slo) {
      best = last;
      break;
    }
    lo = hi;
    if (hi >= limit) break;
    hi = std::min(hi * 2, limit);
  }
  if (!best.meets_slo) {
    if (max_slices >= room) {  // not cut short by a cheaper plan: no slice count serves it
      last.note = "misses the SLOs or the rate at every slice count tried";
      tried.push_back(last);
    }
    return std::nullopt;
  }
  while (hi - lo > 1) {
    const long long mid = (lo + hi) / 2;
    auto c = eval(mid, requests);
    if (c.meets_slo) {
      hi = mid;
      best = c;
    } else {
      lo = mid;
    }
  }
  return best;
}

// Mixture of experts: the experts are sharded over the same chips (EP = TP group), or the
// weights of every expert would sit on every chip.
int expert_parallel(const workload::ModelSpec& model, int tp) {
  return model.is_moe() && model.moe.num_experts % tp == 0 ? tp : 1;
}

std::vector<int> tp_candidates(const SearchSpec& spec, long long domain) {
  std::vector<int> tps = spec.tp_candidates;
  if (tps.empty())
    for (int tp = 1; tp <= 64 && tp <= domain; tp *= 2) tps.push_back(tp);
  return tps;
}

// Pipeline stages a tensor-parallel engine of `tp` chips may have: the stated ones; else one,
// and at the widest group the domain holds also 2, 4, 8 and 16 (at most the layers) when the
// model's weights over that group would fill more than half of each chip's HBM, leaving little
// or no KV cache. That is how vLLM and TensorRT-LLM deploy a model larger than a node: tp inside
// it, pp across nodes.
// The share of a chip's HBM the widest group's weights may take before the search also tries
// pipeline stages (a search bound: which layouts to simulate, not a prediction; each is then
// judged by its own memory).
constexpr double kPipelineWeightShare = 0.5;

// Whether `share` of the model's weights, in the precision they are stored in, would take more
// than kPipelineWeightShare of each chip's HBM: when the search also looks beyond one domain.
bool crowds_the_chip(const SearchSpec& spec, const workload::ModelSpec& model, const hw::SystemSpec& sys, double share) {
  const core::Dtype weights = precision_dtype(
      spec.base.weight_precision.empty() ? spec.base.precision : spec.base.weight_precision, "precision");
  return workload::weight_bytes(model, weights).base() * share > kPipelineWeightShare * sys.chip.hbm_capacity.value.base();
}

std::vector<int> pipeline_candidates(const SearchSpec& spec, const workload::ModelSpec& model,
                                     const hw::SystemSpec& sys, int tp, int widest_tp) {
  if (!spec.pp_candidates.empty()) return spec.pp_candidates;
  std::vector<int> pps = {1};
  if (tp != widest_tp) return pps;
  if (!crowds_the_chip(spec, model, sys, 1.0 / tp)) return pps;
  for (int pp = 2; pp <= 16 && pp <= model.layers; pp *= 2) pps.push_back(pp);
  return pps;
}

// Expert-parallel groups of DP-attention engines the search tries: the groups of two or more
// chips the domain holds (powers of two, or the stated ones); and, when the widest of them would
// still fill more than kPipelineWeightShare of each chip's HBM with weights (every chip holds the
// whole attention and dense part, and 1/ep of the experts), also 2, 4 and 8 times it across
// domains (at most the experts): how SGLang and TensorRT-LLM spread DeepSeek-V3's experts over
// several 8-GPU nodes. Stated groups are kept whatever the domain.
// Domains one DP-attention expert group may span at most (a search bound, not a prediction).
constexpr int kMostDomainsPerExpertGroup = 8;

std::vector<int> dp_attention_groups(const SearchSpec& spec, const workload::ModelSpec& model, const hw::SystemSpec& sys) {
  const long long domain = std::max(1, sys.chips_per_domain);
  const auto divides = [&](int ep) { return ep >= 2 && model.moe.num_experts % ep == 0; };
  std::vector<int> out;
  if (!spec.ep_candidates.empty()) {
    for (int ep : spec.ep_candidates)
      if (divides(ep)) out.push_back(ep);
    return out;
  }
  for (int ep : tp_candidates(spec, domain))
    if (ep <= domain && divides(ep)) out.push_back(ep);
  if (out.empty()) return out;
  // Every chip holds the whole non-expert part and 1/widest of the routed experts.
  const int widest = out.back();
  const auto params = workload::count_params(model);
  const double routed = params.total > 0 ? params.routed_total / params.total : 0.0;
  if (!crowds_the_chip(spec, model, sys, 1.0 - routed + routed / widest)) return out;
  for (int ep = 2 * widest; ep <= kMostDomainsPerExpertGroup * widest && ep <= model.moe.num_experts; ep *= 2)
    if (divides(ep)) out.push_back(ep);
  return out;
}

// The layouts a search tries on one scale-up domain: each tp (experts ep = tp ways inside the
// group) with its pipeline stages, and for a mixture of experts DP attention beside each
// expert-parallel group of dp_attention_groups (a pool of ep one-chip engines; disaggregated, a
// prefill pool and a decode pool of ep chips each; one pipeline stage).
std::vector<Layout> search_layouts(const SearchSpec& spec, const workload::ModelSpec& model, const hw::SystemSpec& sys) {
  std::vector<Layout> out;
  const long long domain = std::max(1, sys.chips_per_domain);
  const auto ep_allowed = [&](int ep) {
    return spec.ep_candidates.empty() ||
           std::find(spec.ep_candidates.begin(), spec.ep_candidates.end(), ep) != spec.ep_candidates.end();
  };
  std::vector<int> tps;
  for (int tp : spec.try_tp_attention ? tp_candidates(spec, domain) : std::vector<int>{})
    if (tp <= domain && workload::tp_divides(model, tp) && ep_allowed(expert_parallel(model, tp))) tps.push_back(tp);
  const int widest = tps.empty() ? 0 : *std::max_element(tps.begin(), tps.end());
  for (int tp : tps)
    for (int pp : pipeline_candidates(spec, model, sys, tp, widest))
      for (long long seqs : spec.max_num_seqs_candidates) out.push_back(Layout{tp, expert_parallel(model, tp), seqs, false, pp});
  const bool one_stage = spec.pp_candidates.empty() ||
                         std::find(spec.pp_candidates.begin(), spec.pp_candidates.end(), 1) != spec.pp_candidates.end();
  if (!model.is_moe() || !spec.try_dp_attention || !one_stage) return out;
  for (int ep : dp_attention_groups(spec, model, sys))
    for (long long seqs : spec.max_num_seqs_candidates) out.push_back(Layout{1, ep, seqs, true});
  return out;
}

// What a slice of a layout is: one colocated engine (0:1), then, when the search may split,
// prefill:decode engine pools: 1:1, and the splits of spec.split_ratios (tried only where 1:1
// serves the rate, and bounded by the best plan's chips).
std::vector<std::pair<int, int>> slice_pools(const SearchSpec& spec) {
  std::vector<std::pair<int, int>> pools = {{0, 1}};
  if (!spec.try_disaggregated) return pools;
  pools.push_back({1, 1});
  for (const auto& r : spec.split_ratios)
    if (r != std::pair{1, 1}) pools.push_back(r);
  return pools;
}

// What a candidate's slice is, for its note: "colocated" or "disaggregated P:D prefill:decode",
// and DP attention and pipeline stages when it has them.
std::string slice_note(const Layout& l, std::pair<int, int> ratio) {
  std::string s = ratio.first > 0 ? "disaggregated " + std::to_string(ratio.first) + ":" + std::to_string(ratio.second) +
                                        " prefill:decode"
                                  : "colocated";
  if (l.dp_attention) s += ", DP attention";
  if (l.pp > 1) s += ", " + std::to_string(l.pp) + " pipeline stages";
  return s;
}

// Fewer chips wins; then fewer dollars per million tokens.
bool fewer_chips(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.chips != b.chips) return a.chips < b.chips;
  return a.dollars_per_million_output_tokens < b.dollars_per_million_output_tokens;
}

}  // namespace

namespace {

// The command that runs a found plan alone at the searched load: every setting that made it.
std::string reproduce_command(const SearchSpec& spec, const PlanCandidate& c) {
  const auto& b = spec.base;
  std::string cmd = "xpusim serve --system " + b.system + " --model " + b.model + " --chips " + std::to_string(c.chips);
  cmd += c.dp_attention ? " --dp-attention" : " --tp " + std::to_string(c.tp);
  if (c.pp > 1) cmd += " --pp " + std::to_string(c.pp);
  if (c.ep > 1) cmd += " --ep " + std::to_string(c.ep);
  if (c.prefill_chips > 0) cmd += " --prefill-chips " + std::to_string(c.prefill_chips);
  cmd += " --precision " + c.precision + " --framework " + c.framework + " --max-num-seqs " +
         std::to_string(c.max_num_seqs) + " ";
  if (!spec.load_flags.empty()) return cmd + spec.load_flags;
  return cmd + "--rate " + core::fmt_num(spec.rate_per_s, 6) + " --in-len " + std::to_string(b.load.in_len) +
         " --out-len " + std::to_string(b.load.out_len) + " --requests " + std::to_string(spec.requests);
}

}  // namespace

namespace {

/// The best plan's slice: its layout, prefill:decode split and how many slices the deployment is.
struct BestSlice {
  Layout layout;
  std::pair<int, int> ratio;
  long long slices = 0;
};

/// The software range of the best plan's slice as the search ran it (Trainium stacks only).
std::optional<SoftwareRange> slice_software_range(const SearchSpec& spec, const ServeEnv& env, const BestSlice& b) {
  const auto& chip = env.catalog->system(spec.base.system, "system").chip;
  if (!is_neuron(spec.base.framework.value_or(default_framework(chip)))) return std::nullopt;
  ServeScenario sc = slice_scenario(spec, b.layout, b.slices, spec.requests);
  sc.chips = b.layout.chips() * (b.ratio.first + b.ratio.second);
  sc.prefill_chips = b.layout.chips() * b.ratio.first;
  const auto rep = run_scenario(sc, env);
  return rep ? software_range(*rep, env) : std::nullopt;
}

}  // namespace

SearchResult search_plan(const SearchSpec& spec, const ServeEnv& env) {
  SearchResult res;
  BestSlice best_slice;
  res.system = spec.base.system;
  const auto& sys = env.catalog->system(spec.base.system, "system");
  const auto model = workload::load_model(spec.base.model, env.models_dir);
  for (const Layout& l : search_layouts(spec, model, sys)) {
    bool one_to_one = false;  // the 1:1 split served the rate: other splits are worth trying
    for (const auto& ratio : slice_pools(spec)) {
      const bool other_split = ratio.first > 0 && ratio != std::pair{1, 1};
      if (other_split && !one_to_one) continue;
      const long long unit = l.chips() * (ratio.first + ratio.second);
      auto eval = [&](long long slices, long long requests) { return evaluate(spec, env, l, slices, ratio, requests); };
      // Branch and bound for the other splits: more chips than the best plan so far cannot win.
      const long long max_slices = other_split && res.found ? res.best.chips / unit : kMostSearchChips;
      if (max_slices < 1) continue;
      auto best_here = fewest_slices(eval, spec, unit, res.tried, max_slices);
      if (!best_here) continue;
      one_to_one = one_to_one || ratio == std::pair{1, 1};
      best_here->note = slice_note(l, ratio);
      res.tried.push_back(*best_here);
      if (!res.found || fewer_chips(*best_here, res.best)) {
        res.best = *best_here;
        res.found = true;
        best_slice = {l, ratio, best_here->chips / unit};
      }
    }
  }
  if (res.found) {
    res.command = reproduce_command(spec, res.best);
    res.software_range = slice_software_range(spec, env, best_slice);
  }
  if (!res.found)
    res.best.note = !res.tried.empty() ? res.tried.back().note
                    : spec.tp_candidates.empty() && spec.ep_candidates.empty() && spec.try_tp_attention
                        ? "no layout fits"
                        : "no layout has the stated tp, ep and attention (tensor-parallel engines lie within the "
                          "system's scale-up domain and shard a mixture of experts ep = tp ways; DP attention has tp 1 "
                          "and an ep that divides the experts; a dense model has ep 1)";
  return res;
}

namespace {

// Cheaper per hour wins; then fewer chips; then fewer dollars per million tokens.
bool cheaper(const PlanCandidate& a, const PlanCandidate& b) {
  if (a.dollars_per_hour != b.dollars_per_hour) return a.dollars_per_hour < b.dollars_per_hour;
  if (a.chips != b.chips) return a.chips < b.chips;
  return a.dollars_per_million_output_tokens < b.dollars_per_million_output_tokens;
}

}  // namespace

SearchResult search_hetero(const SearchSpec& spec, const ServeEnv& env) {
  SearchResult res;
  res.prefill_system = spec.base.prefill_system;
  res.decode_system = spec.base.decode_system;
  res.system = res.prefill_system + " + " + res.decode_system;
  const auto& pre = env.catalog->system(res.prefill_system, "prefill_system");
  const auto& dec = env.catalog->system(res.decode_system, "decode_system");
  const auto model = workload::load_model(spec.base.model, env.models_dir);
  // One tp in both pools: within both scale-up domains.
  const long long dom = std::max(1, std::min(pre.chips_per_domain, dec.chips_per_domain));
  for (int tp : tp_candidates(spec, dom)) {
    if (tp > dom || !workload::tp_divides(model, tp)) continue;
    const int ep = expert_parallel(model, tp);
    for (long long seqs : spec.max_num_seqs_candidates) {
      for (const auto& ratio : spec.pool_ratios) {
        const long long unit = static_cast<long long>(tp) * (ratio.first + ratio.second);
        auto eval = [&](long long slices, long long requests) {
          return evaluate_hetero(spec, env, Layout{tp, ep, seqs}, ratio, slices, requests);
        };
        // Branch and bound: more slices than the cheapest plan found so far pays for cannot win.
        const double slice_price = tp * (ratio.first * price_per_hour(pre) + ratio.second * price_per_hour(dec));
        long long max_slices = kMostSearchChips;
        if (res.found && slice_price > 0) max_slices = static_cast<long long>(res.best.dollars_per_hour / slice_price) + 1;
        auto best_here = fewest_slices(eval, spec, unit, res.tried, max_slices);
        if (!best_here) continue;
        best_here->note = "heterogeneous " + std::to_string(ratio.first) + ":" + std::to_string(ratio.second) +
                          " prefill:decode engines";
        res.tried.push_back(*best_here);
        if (!res.found || cheaper(*best_here, res.best)) {
          res.best = *best_here;
          res.found = true;
        }
      }
    }
  }
  if (!res.found) res.best.note = res.tried.empty() ? "no layout fits both systems" : res.tried.back().note;
  return res;
}

std::vector<SearchResult> compare_hetero(const SearchSpec& spec, const ServeEnv& env) {
  std::vector<SearchResult> out{search_hetero(spec, env)};
  for (const std::string& system : {spec.base.prefill_system, spec.base.decode_system}) {
    SearchSpec alone = spec;
    alone.base.system = system;
    alone.base.prefill_system.clear();
    alone.base.decode_system.clear();
    alone.base.decode_chips = 0;
    out.push_back(search_plan(alone, env));
  }
  return out;
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
