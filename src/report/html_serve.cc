// `serve --html`: latency distributions, throughput against the offered rate (docs/html.md).

#include <algorithm>

#include "xpusim/core/format.h"
#include "xpusim/report/html.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/svg.h"

namespace xpusim::report {

namespace {

using core::fmt_num;

/// Points of a CDF drawn at most (evenly spaced ranks).
constexpr size_t kCdfPoints = 200;

/// The empirical CDF of `values` (times `scale`): sorted value against the fraction at or below,
/// at most kCdfPoints points (evenly spaced ranks).
std::vector<std::pair<double, double>> cdf_points(std::vector<double> values, double scale) {
  for (double& v : values) v *= scale;
  std::sort(values.begin(), values.end());
  std::vector<std::pair<double, double>> pts;
  const size_t n = values.size();
  const size_t shown = std::min(n, kCdfPoints);
  for (size_t k = 0; k < shown; ++k) {
    const size_t i = shown == 1 ? n - 1 : k * (n - 1) / (shown - 1);
    pts.push_back({values[i], static_cast<double>(i + 1) / static_cast<double>(n)});
  }
  return pts;
}

std::string cdf_chart(const std::string& id, const std::string& title, const std::string& unit,
                      const std::vector<double>& values, double scale) {
  const auto pts = cdf_points(values, scale);
  const double lo = pts.empty() ? 0 : pts.front().first, hi = pts.empty() ? 1 : pts.back().first;
  svg::Chart c(id, title, {unit, lo, hi, false}, {"fraction of requests", 0, 1, false}, 360, 280);
  if (!pts.empty()) c.line(pts, 0, "");
  return c.render();
}

std::string rate_charts(const scenario::RateCurve& curve) {
  double lo = curve.base_rate_per_s, hi = curve.base_rate_per_s, top = 0, lat = 0;
  std::vector<std::pair<double, double>> tput, ttft, tpot;
  for (const auto& p : curve.points) {
    lo = std::min(lo, p.offered_rate_per_s), hi = std::max(hi, p.offered_rate_per_s);
    top = std::max(top, p.output_tokens_per_s), lat = std::max({lat, p.ttft_p90_ms, p.tpot_p90_ms});
    tput.push_back({p.offered_rate_per_s, p.output_tokens_per_s});
    ttft.push_back({p.offered_rate_per_s, p.ttft_p90_ms});
    tpot.push_back({p.offered_rate_per_s, p.tpot_p90_ms});
  }
  const std::string marker = curve.base_is_requested ? "requested rate" : "achieved rate";
  svg::Chart t("throughput-vs-rate", "Output throughput against offered rate", {"offered rate (requests/s)", 0, hi, false},
               {"output tokens/s", 0, top > 0 ? top : 1, false}, 540, 320);
  t.line(tput, 0, "output tokens/s");
  t.vmarker(curve.base_rate_per_s, marker);
  svg::Chart l("latency-vs-rate", "p90 latency against offered rate", {"offered rate (requests/s)", 0, hi, false},
               {"ms", 0, lat > 0 ? lat : 1, false}, 540, 320);
  l.line(ttft, 0, "TTFT p90");
  l.line(tpot, 1, "TPOT p90");
  l.vmarker(curve.base_rate_per_s, marker);
  return html::row({t.render(), l.render()});
}

std::string rate_table(const scenario::RateCurve& curve) {
  std::vector<html::Cells> rows;
  for (const auto& p : curve.points)
    rows.push_back({fmt_num(p.offered_rate_per_s, 4), fmt_num(p.requests_per_s, 4), fmt_num(p.output_tokens_per_s, 4),
                    fmt_num(p.ttft_p90_ms, 4), fmt_num(p.tpot_p90_ms, 4)});
  return html::table("rate-curve", {"offered req/s", "achieved req/s", "output tokens/s", "TTFT p90 (ms)", "TPOT p90 (ms)"},
                     rows);
}

/// KV-cache use and running batch per engine over the run (serve::SimResult::timeline samples).
std::string load_charts(const std::vector<serve::TimelinePoint>& timeline) {
  std::vector<std::pair<double, double>> kv, batch;
  double t_hi = 0, b_hi = 0;
  for (const auto& p : timeline) {
    kv.push_back({p.time_s, 100 * p.kv_utilisation});
    batch.push_back({p.time_s, p.batch});
    t_hi = std::max(t_hi, p.time_s), b_hi = std::max(b_hi, p.batch);
  }
  svg::Chart k("kv-utilisation", "KV cache in use (mean over engines)", {"time (s)", 0, t_hi > 0 ? t_hi : 1, false},
               {"% of KV capacity", 0, 100, false}, 540, 280);
  k.line(kv, 0, "");
  svg::Chart b("batch", "Running sequences per engine", {"time (s)", 0, t_hi > 0 ? t_hi : 1, false},
               {"sequences", 0, b_hi > 0 ? b_hi : 1, false}, 540, 280);
  b.line(batch, 1, "");
  return html::row({k.render(), b.render()});
}

/// The TTFT CDFs with and without the cache, and the share of prompt tokens a cache of each
/// capacity serves when the trace is replayed through it alone (the run's engines each hold one).
std::string prefix_charts(const serve::ServeReport& rep, const PrefixCachePage& page) {
  const auto with = cdf_points(rep.sim.ttft_each_s, 1e3), without = cdf_points(page.uncached->sim.ttft_each_s, 1e3);
  double hi = 1;
  for (const auto& p : with) hi = std::max(hi, p.first);
  for (const auto& p : without) hi = std::max(hi, p.first);
  svg::Chart t("ttft-cdf-cache", "TTFT with and without the prefix cache", {"TTFT (ms)", 0, hi, false},
               {"fraction of requests", 0, 1, false}, 540, 320);
  t.line(with, 0, "cache on");
  t.line(without, 1, "cache off", true);
  std::vector<std::pair<double, double>> hits;
  double c_lo = 0, c_hi = 1, unbounded = 0;
  for (const auto& r : page.replays) {
    if (r.capacity_tokens <= 0) {
      unbounded = 100 * r.tally.token_hit_rate();
      continue;
    }
    hits.push_back({static_cast<double>(r.capacity_tokens), 100 * r.tally.token_hit_rate()});
    c_lo = c_lo > 0 ? std::min(c_lo, hits.back().first) : hits.back().first;
    c_hi = std::max(c_hi, hits.back().first);
  }
  svg::Chart h("hit-rate-vs-capacity", "Prompt tokens from the cache against its capacity", {"cache capacity (tokens)",
               c_lo > 0 ? c_lo : 1, c_hi, true}, {"% of prompt tokens", 0, std::max(1.0, unbounded), false}, 540, 320);
  h.line(hits, 2, "LRU, trace replayed alone");
  const double engine_cache = static_cast<double>(rep.prefix_cache_tokens_per_engine);
  if (engine_cache > 0) h.vmarker(engine_cache, "one engine's cache");
  return html::row({t.render(), h.render()});
}

std::string pct_text(const serve::Percentiles& p, const char* unit) {
  return "mean " + fmt_num(p.mean, 4) + ", p50 " + fmt_num(p.p50, 4) + ", p90 " + fmt_num(p.p90, 4) + ", p99 " +
         fmt_num(p.p99, 4) + " " + unit;
}

std::string serve_summary(const serve::ServeReport& rep) {
  const auto& s = rep.sim;
  return html::summary({
      {"requests", core::fmt_int(s.requests) + " in " + fmt_num(core::to_seconds(s.duration), 4) + " s"},
      {"throughput", fmt_num(s.requests_per_s, 4) + " req/s, " + fmt_num(s.output_tokens_per_s, 4) +
                         " output tokens/s (" + fmt_num(rep.output_tokens_per_s_per_chip, 4) + " per chip)"},
      {"TTFT", pct_text(s.ttft_ms, "ms")},
      {"TPOT", pct_text(s.tpot_ms, "ms")},
      {"end-to-end latency", pct_text(s.e2e_s, "s")},
      {"goodput (both SLOs)", fmt_num(rep.goodput_requests_per_s, 4) + " req/s"},
      {"batch per engine, KV use", fmt_num(s.mean_batch, 3) + ", " + fmt_num(100 * s.mean_kv_utilisation, 3) + " %"},
      {"preemptions, timed out", core::fmt_int(s.preemptions) + ", " + core::fmt_int(s.timed_out)},
      {"energy", fmt_num(rep.joules_per_output_token, 4) + " J per output token" + (rep.energy_estimated ? " (estimated)" : "")},
      {"cost", "$" + fmt_num(rep.dollars_per_million_output_tokens, 4) + " per million output tokens" +
                   (rep.price_estimated ? " (estimated price)" : "")},
  });
}

}  // namespace

std::string serve_html(const Provenance& provenance, const serve::ServeReport& rep, const scenario::RateCurve& curve,
                       const PrefixCachePage* prefix) {
  const auto& sc = rep.scenario;
  const auto& s = rep.sim;
  std::string body = html::section("summary", "Summary", serve_summary(rep));
  body += html::section("latency", "Latency distributions",
                        html::row({cdf_chart("ttft-cdf", "Time to first token", "TTFT (ms)", s.ttft_each_s, 1e3),
                                   cdf_chart("tpot-cdf", "Time per output token", "TPOT (ms)", s.tpot_each_s, 1e3),
                                   cdf_chart("e2e-cdf", "End-to-end latency", "latency (s)", s.e2e_each_s, 1)}),
                        "TPOT over requests with more than one output token.");
  if (prefix && prefix->uncached && rep.prefix_caching) {
    double unbounded = 0;
    for (const auto& r : prefix->replays)
      if (r.capacity_tokens <= 0) unbounded = 100 * r.tally.token_hit_rate();
    body += html::section(
        "prefix-cache", "Prefix cache",
        prefix_charts(rep, *prefix),
        "This run served " + fmt_num(100 * s.prefix.token_hit_rate(), 3) + " % of prompt tokens from its engines' caches (" +
            core::fmt_int(prefix->engines) + " engine(s), " + core::fmt_int(rep.prefix_cache_tokens_per_engine) +
            " tokens each); the same run with the cache off is the dashed line. The capacity chart replays the trace "
            "alone through one LRU cache of each size (xpusim trace-stats --cache-tokens); an unbounded cache serves " +
            fmt_num(unbounded, 3) + " %. Engines each cache the requests routed to them, so a run's hit rate lies below "
            "the replay's at the engines' combined capacity.");
  }
  body += html::section("load", "Engine load over time", load_charts(s.timeline));
  body += html::section(
      "rate", "Throughput and latency against the offered rate", rate_charts(curve) + rate_table(curve),
      "The same plan simulated under Poisson arrivals at 0.25, 0.5, 1, 1.5 and 2 × the " +
          std::string(curve.base_is_requested ? "requested rate" : "run's achieved rate") + " with " +
          core::fmt_int(curve.requests) + " requests each (scenario::rate_curve).");
  std::vector<html::Cells> notes;
  for (const auto& a : rep.assumptions) notes.push_back({a});
  if (!notes.empty()) body += html::section("assumptions", "Assumptions", html::table("assumptions", {""}, notes));
  const std::string title = "xpusim serve: " + sc.model + " on " + core::fmt_int(rep.chips_used) + " × " + sc.system;
  const std::string sub = rep.framework + ", tp=" + std::to_string(sc.tp) + " pp=" + std::to_string(sc.pp) +
                          " ep=" + std::to_string(sc.ep) + ", " + std::to_string(rep.engines) + " engine(s)" +
                          (rep.decode_engines ? " + " + std::to_string(rep.decode_engines) + " decode" : "") +
                          ", precision " + sc.precision;
  return html::page("serve", title, sub, provenance, body);
}

}  // namespace xpusim::report
