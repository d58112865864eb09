// xpusim sweep GRID.yaml [--out FILE.csv] [--json]: a grid over a train or serve scenario
// (docs/sweep.md). Parses flags, splits the points over MPI ranks when launched by mpirun
// (sweep_mpi.h) and calls the library (scenario/ expands the grid, api/ runs each point,
// report/ renders the CSV and the JSON).

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_util.h"
#include "sweep_mpi.h"
#include "xpusim/api/sweep.h"
#include "xpusim/report/html_report.h"

namespace xpusim::cli {

namespace {

// "sweep [=====     ] 5/10" on a terminal only (stderr; stdout stays the document).
void show_progress(std::size_t done, std::size_t total) {
  constexpr std::size_t kWidth = 30;
  const std::size_t filled = total ? done * kWidth / total : kWidth;
  std::cerr << "\rxpusim sweep [" << std::string(filled, '=') << std::string(kWidth - filled, ' ') << "] " << done
            << "/" << total << (done == total ? "\n" : "") << std::flush;
}

// This rank's points (round-robin by index), one wire line each.
std::string run_share(const scenario::SweepGrid& g, const api::Session& s, const SweepRanks& ranks,
                      bool& internal_error) {
  const std::size_t n = scenario::point_count(g);
  const bool progress = ranks.rank() == 0 && isatty(STDERR_FILENO);
  const std::size_t share = (n + static_cast<std::size_t>(ranks.size()) - 1 - static_cast<std::size_t>(ranks.rank())) /
                            static_cast<std::size_t>(ranks.size());
  std::string lines;
  std::size_t done = 0;
  for (std::size_t i = static_cast<std::size_t>(ranks.rank()); i < n; i += static_cast<std::size_t>(ranks.size())) {
    report::SweepPoint p;
    try {
      p = api::run_point(g, i, s);
    } catch (const std::exception& e) {  // a bug in one point must not leave the other ranks waiting
      p.index = i;
      p.values = scenario::point_values(g, i);
      p.status = "error";
      p.reason = std::string("internal error: ") + e.what();
      internal_error = true;
    }
    lines += report::point_to_wire(p) + "\n";
    if (progress) show_progress(++done, share);
  }
  return lines;
}

std::vector<report::SweepPoint> collect(const std::vector<std::string>& parts) {
  std::vector<report::SweepPoint> points;
  for (const auto& part : parts) {
    std::istringstream in(part);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) points.push_back(report::point_from_wire(line));
  }
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
  return points;
}

void write_outputs(const scenario::SweepGrid& g, const std::vector<report::SweepPoint>& points, const api::Session& s,
                   const std::string& out, bool json, const std::string& html) {
  if (!html.empty())
    write_html(html, report::sweep_html(s.provenance(true, true), g.command, api::grid_keys(g), points));
  const std::string csv = api::sweep_csv(g, points);
  if (!out.empty()) write_text_file("--out", out, csv);
  if (json) std::cout << api::sweep_document(g, points, s).dump(2) << "\n";
  else if (out.empty()) std::cout << csv;
}

}  // namespace

int run_sweep(const Args& args) {
  CLI::App app{"Run a grid of train or serve scenarios: one CSV row per point (docs/sweep.md)", "xpusim sweep"};
  std::string grid_file, out, calibration_file, html;
  bool json = false;
  app.add_option("GRID", grid_file, "YAML/JSON grid: command, base, grid")->required();
  app.add_option("--out", out, "write the CSV here (default: stdout, unless --json)");
  app.add_flag("--json", json, "print one JSON document with every point's whole result");
  add_calibration_option(app, calibration_file);
  add_catalog_option(app);
  add_html_option(app, html);
  if (int rc = parse(app, args); rc >= 0) return rc;

  const SweepRanks ranks;
  const scenario::SweepGrid g = scenario::read_sweep_file(grid_file);
  const api::Session s(data_dir(), calibration_file, user_catalog_dirs());
  api::check_sweep_names(g, s);
  const auto started = std::chrono::steady_clock::now();
  bool internal_error = false;
  const std::vector<std::string> parts = ranks.gather(run_share(g, s, ranks, internal_error));
  if (ranks.rank() != 0) return internal_error ? 3 : 0;
  const std::vector<report::SweepPoint> points = collect(parts);
  write_outputs(g, points, s, out, json, html);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  std::size_t ok = 0;
  for (const auto& p : points) ok += p.status == "ok";
  std::cerr << "xpusim sweep: " << points.size() << " points (" << ok << " ok) on " << ranks.size() << " rank(s) in "
            << took.count() << " s" << (out.empty() ? "" : " -> " + out) << "\n";
  for (const auto& p : points)
    if (p.reason.rfind("internal error: ", 0) == 0) internal_error = true;
  return internal_error ? 3 : 0;
}

}  // namespace xpusim::cli
