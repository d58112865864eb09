// `xpusim claims`: the Trainium3 claims checked with the project's own catalog, training and
// serving code (docs/claims.md). This file holds the runs and the shared arithmetic; the claims
// themselves are assembled in claims_list.cc.

#include "xpusim/scenario/claims.h"

#include <algorithm>
#include <cmath>

#include "claims_runs.h"
#include "xpusim/core/format.h"
#include "xpusim/serve/scenario.h"

namespace xpusim::scenario::claims_detail {

hw::Catalog with_trn3_overrides(const hw::Catalog& base, const EstimateOverrides& o, std::vector<std::string>& notes) {
  hw::Catalog cat = base;
  for (const char* id : {kTrn3Gen1, kTrn3Gen2}) {
    const auto lines = apply_overrides(cat, id, o);
    notes.insert(notes.end(), lines.begin(), lines.end());
  }
  return cat;
}

EstimateRange tdp_range(const hw::SystemSpec& trn3) {
  const auto& t = trn3.chip.tdp;
  const double v = core::to_watts(t.value);
  return {v, t.low ? core::to_watts(*t.low) : v, t.high ? core::to_watts(*t.high) : v};
}

EstimateRange price_range(const hw::SystemSpec& trn3) {
  const auto& p = trn3.price_per_chip_hour;
  const double v = core::to_dollars_per_hour(p.value);
  return {v, p.low ? core::to_dollars_per_hour(*p.low) : v, p.high ? core::to_dollars_per_hour(*p.high) : v};
}

TrainPoint train_point(const Runs& r, const std::string& system, long long chips, const std::string& precision) {
  TrainInputs in;
  in.system = system;
  in.model = std::string(kTrainModel);
  in.chips = chips;
  in.precision = precision;
  in.seq_len = kTrainSeqLen;
  in.global_batch = kTrainGlobalBatch;
  in.executor = "analytical";
  TrainPoint p;
  p.system = system;
  p.precision = precision;
  p.chips = chips;
  p.run = run_train(in, r.cat, r.models_dir, *r.params, false);
  return p;
}

double tokens_per_joule(const TrainPoint& p, const Runs& r, std::optional<double> tdp_w) {
  const hw::SystemSpec& base = r.cat.system(p.system);
  const hw::SystemSpec sys = tdp_w ? with_overrides(base, EstimateOverrides{std::nullopt, tdp_w}) : base;
  const auto& res = p.run.result;
  const cost::EnergyCost e = cost::energy_cost(sys, *r.params, res.activity, res.step_time);
  return res.tokens_per_step / (core::to_joules(e.total_energy) * static_cast<double>(p.chips));
}

std::optional<serve::ServeReport> serve_point(const Runs& r, const hw::Catalog& cat, const std::string& system,
                                              const std::string& precision, long long concurrency) {
  ServeInputs in;
  in.system = system;
  in.model = std::string(kServeModel);
  in.chips = kServeChips;
  in.precision = precision;
  in.in_len = kServeInLen;
  in.out_len = kServeOutLen;
  in.concurrency = concurrency;
  in.requests = std::max<long long>(4 * concurrency, 16);
  const serve::ServeEnv env{&cat, r.models_dir, r.params};
  const auto rep = serve::run_scenario(build_serve(in), env);
  if (!rep) return std::nullopt;
  return *rep;
}

Claim make_claim(std::string id, std::string text, std::string source, std::string conditions, std::string metric,
           double published) {
  Claim c;
  c.id = std::move(id);
  c.text = std::move(text);
  c.source = std::move(source);
  c.conditions = std::move(conditions);
  c.metric = std::move(metric);
  c.published_ratio = published;
  return c;
}

double printed_half_unit(double published) {
  double unit = 1;
  for (int digits = 0; digits < 3; ++digits, unit /= 10)
    if (std::fabs(published / unit - std::round(published / unit)) < 1e-9) break;
  return unit / 2;
}

double per_domain(const hw::SystemSpec& s, double per_chip) { return per_chip * s.chips_per_domain; }

void finish(Claim& c) {
  if (c.cases.empty()) return;
  c.xpusim_ratio = c.cases.front().ratio;
  c.ratio_low = c.ratio_high = c.xpusim_ratio;
  for (const auto& k : c.cases) {
    c.ratio_low = std::min(c.ratio_low, k.ratio);
    c.ratio_high = std::max(c.ratio_high, k.ratio);
  }
  // Equality: the published figure, within the rounding of its last printed digit, must meet the
  // simulated range; "reproduced" when the central case rounds to it. Inequality ("above 1x"):
  // "reproduced" only when the whole range satisfies it, "within range" when part of it does.
  const double p = c.published_ratio, half = printed_half_unit(p);
  if (c.published_at_least) {
    c.verdict = c.ratio_low > p ? "reproduced" : c.ratio_high > p ? "within range" : "not reproduced";
    return;
  }
  const bool meets_range = c.ratio_low <= p + half && c.ratio_high >= p - half;
  if (meets_range && std::fabs(c.xpusim_ratio - p) <= half) c.verdict = "reproduced";
  else if (meets_range) c.verdict = "within range";
  else c.verdict = "not reproduced";
}

std::string ratio_text(double x) { return core::fmt_num(x, 3) + "x"; }

void add_flip(Claim& c, const std::string& conclusion, const std::string& input, double at_low, double at_high,
              const EstimateRange& range, const std::string& unit, double threshold) {
  const bool lo = at_low > threshold, hi = at_high > threshold;
  const std::string lo_text = core::fmt_num(range.low) + unit, hi_text = core::fmt_num(range.high) + unit;
  if (lo == hi) {
    c.flips.push_back(conclusion + ": " + (lo ? "holds" : "fails") + " over the whole " + input + " range " + lo_text +
                      " .. " + hi_text + " (" + ratio_text(at_low) + " .. " + ratio_text(at_high) + ")");
    return;
  }
  c.flips.push_back("FLIPS: " + conclusion + " " + (lo ? "holds" : "fails") + " at " + input + " " + lo_text + " (" +
                    ratio_text(at_low) + ") and " + (hi ? "holds" : "fails") + " at " + hi_text + " (" +
                    ratio_text(at_high) + ")");
}

}  // namespace xpusim::scenario::claims_detail

namespace xpusim::scenario {

ClaimsReport check_claims(const ClaimsInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                          const calib::Params& params) {
  using namespace claims_detail;
  ClaimsReport out;
  Runs r;
  r.cat = with_trn3_overrides(cat, in.trn3, out.overrides);
  r.models_dir = models_dir;
  r.params = &params;
  const hw::SystemSpec& trn3 = r.cat.system(kTrn3Gen2);
  r.tdp = tdp_range(trn3);
  r.price = price_range(trn3);
  out.estimates = estimate_notes(r);
  run_training(r);
  run_serving(r);
  for (auto* add : {&claim_speed, &claim_memory, &claim_energy_per_chip, &claim_million_chips, &claim_inference_cost,
                    &claim_compute, &claim_memory_bandwidth, &claim_energy_per_ultraserver, &claim_throughput_per_chip,
                    &claim_response_time, &claim_ultracluster_scale}) {
    Claim c = (*add)(r);
    finish(c);
    out.claims.push_back(std::move(c));
  }
  return out;
}

}  // namespace xpusim::scenario
