// `sweep --html`: the grid's points on the trade-off that matters for the command, with its
// Pareto front, and every point in a table (docs/html.md). Selects among the points' results;
// simulates nothing.

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>

#include "xpusim/core/format.h"
#include "xpusim/report/html.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/svg.h"

namespace xpusim::report {

namespace {

using core::fmt_num;

/// The two results a point is judged on: `x` lower is better, `y` higher is better.
struct Tradeoff {
  std::string x_title, y_title;
  double (*x)(const Json& result);
  double (*y)(const Json& result);
};

double number_at(const Json& j, const char* pointer) {
  const Json::json_pointer p(pointer);
  return j.contains(p) && j.at(p).is_number() ? j.at(p).get<double>() : std::nan("");
}

/// train: cost per million tokens against throughput; serve: p90 time per output token against
/// throughput per chip (the interactivity / efficiency trade-off of serving).
Tradeoff tradeoff_of(const std::string& command) {
  if (command == "serve")
    return {"TPOT p90 (ms, lower is better)", "output tokens/s per chip (higher is better)",
            [](const Json& r) { return number_at(r, "/tpot_p90_ms"); },
            [](const Json& r) { return number_at(r, "/throughput_tokens_per_s_per_chip"); }};
  return {"cost per million tokens (USD, lower is better)", "tokens/s (higher is better)",
          [](const Json& r) {
            const double tokens = number_at(r, "/tokens_per_s") * number_at(r, "/step_time_s");
            return number_at(r, "/cost_per_step_usd") / tokens * 1e6;
          },
          [](const Json& r) { return number_at(r, "/tokens_per_s"); }};
}

std::string point_label(const std::vector<std::string>& keys, const SweepPoint& p) {
  std::string s;
  for (std::size_t i = 0; i < keys.size() && i < p.values.size(); ++i)
    s += (i ? ", " : "") + keys[i] + "=" + (p.values[i].is_string() ? p.values[i].get<std::string>() : p.values[i].dump());
  return s;
}

struct Placed {
  const SweepPoint* point;
  double x, y;
};

/// The ok points with both coordinates, sorted by x then by falling y.
std::vector<Placed> placed_points(const std::vector<SweepPoint>& points, const Tradeoff& t) {
  std::vector<Placed> out;
  for (const auto& p : points) {
    if (p.status != "ok") continue;
    const double x = t.x(p.result), y = t.y(p.result);
    if (std::isfinite(x) && std::isfinite(y) && x > 0 && y > 0) out.push_back({&p, x, y});
  }
  std::sort(out.begin(), out.end(), [](const Placed& a, const Placed& b) {
    return a.x != b.x ? a.x < b.x : (a.y != b.y ? a.y > b.y : a.point->index < b.point->index);
  });
  return out;
}

/// The non-dominated points: no other point has a lower-or-equal x and a higher y.
std::vector<Placed> pareto_front(const std::vector<Placed>& sorted) {
  std::vector<Placed> front;
  for (const auto& p : sorted)
    if (front.empty() || p.y > front.back().y) front.push_back(p);
  return front;
}

std::string front_chart(const std::vector<Placed>& all, const std::vector<Placed>& front, const Tradeoff& t,
                        const std::vector<std::string>& keys) {
  double xlo = all.front().x, xhi = xlo, ylo = all.front().y, yhi = ylo;
  for (const auto& p : all) xlo = std::min(xlo, p.x), xhi = std::max(xhi, p.x), ylo = std::min(ylo, p.y), yhi = std::max(yhi, p.y);
  if (xhi <= xlo) xlo /= 1.5, xhi *= 1.5;  // one point, or one value: a range around it
  if (yhi <= ylo) ylo /= 1.5, yhi *= 1.5;
  svg::Chart chart("pareto-front", "Points and their Pareto front", {t.x_title, xlo, xhi, true},
                   {t.y_title, ylo, yhi, true});
  std::vector<svg::Point> dots, best;
  for (const auto& p : all) dots.push_back({p.x, p.y, 0, 0, point_label(keys, *p.point)});
  std::vector<std::pair<double, double>> line;
  for (const auto& p : front) {
    best.push_back({p.x, p.y, 0, 0, "on the front: " + point_label(keys, *p.point)});
    line.emplace_back(p.x, p.y);
  }
  chart.scatter(dots, 0, "point");
  chart.line(line, 1, "Pareto front");
  chart.scatter(best, 1, "");
  return chart.render();
}

std::string points_table(const std::vector<std::string>& keys, const std::vector<SweepPoint>& points,
                         const Tradeoff& t, const std::vector<Placed>& front) {
  html::Cells header = keys;
  for (const char* h : {"status", "x", "y", "on front", "reason"}) header.push_back(h);
  header[keys.size() + 1] = t.x_title;
  header[keys.size() + 2] = t.y_title;
  std::vector<html::Cells> rows;
  for (const auto& p : points) {
    html::Cells row;
    for (const auto& v : p.values) row.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    const bool ok = p.status == "ok";
    const bool on_front = std::any_of(front.begin(), front.end(), [&](const Placed& f) { return f.point == &p; });
    row.push_back(p.status);
    row.push_back(ok ? fmt_num(t.x(p.result), 4) : "");
    row.push_back(ok ? fmt_num(t.y(p.result), 4) : "");
    row.push_back(on_front ? "yes" : "");
    row.push_back(p.reason);
    rows.push_back(row);
  }
  return html::table("points", header, rows);
}

}  // namespace

std::string sweep_html(const Provenance& provenance, const std::string& command, const std::vector<std::string>& keys,
                       const std::vector<SweepPoint>& points) {
  const Tradeoff t = tradeoff_of(command);
  const std::vector<Placed> all = placed_points(points, t);
  const std::vector<Placed> front = pareto_front(all);
  std::size_t ok = 0;
  for (const auto& p : points) ok += p.status == "ok";
  std::string body = html::section(
      "summary", "Summary",
      html::summary({{"command", command},
                     {"points", std::to_string(points.size())},
                     {"ok", std::to_string(ok)},
                     {"not ok (infeasible or error)", std::to_string(points.size() - ok)},
                     {"on the Pareto front", std::to_string(front.size())}}));
  if (!all.empty())
    body += html::section("front", "Trade-off", front_chart(all, front, t, keys),
                          "Each dot is a point that ran; the front joins the points no other point beats on both "
                          "axes. Hover a dot for its grid values.");
  else
    body += html::section("front", "Trade-off", html::para("No point ran with both results; nothing to plot."));
  body += html::section("points", "Every point", points_table(keys, points, t, front));
  return html::page("sweep", "xpusim sweep: " + command + " over " + std::to_string(points.size()) + " points",
                    "One row per point of the grid (docs/sweep.md)", provenance, body);
}

}  // namespace xpusim::report
