// xpusim replay PREFIX --system ID [--chips N] [--json] [--trace FILE] [--comm-groups FILE]
// [--use-durations] [--catalog-dir DIR] [--calibration FILE]: simulates the MLCommons Chakra
// execution trace PREFIX.<rank>.et (one file per rank) on a catalog system (docs/replay.md).

#include <nlohmann/json.hpp>
#include <fstream>
#include <iostream>

#include "cli_util.h"
#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/engine/replay.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/report/replay_report.h"

namespace xpusim::cli {

namespace {

/// ASTRA-sim's comm-group file: {"<group id>": [rank, ...], ...}.
std::map<std::string, std::vector<long long>> load_comm_groups(const std::string& path) {
  const config::Json j = config::load_json_file(path);
  core::Diagnostics diags;
  std::map<std::string, std::vector<long long>> groups;
  if (!j.is_object()) diags.error("(top level)", "not an object", j.type_name(), "{\"<group id>\": [ranks...]}");
  else
    for (const auto& [id, ranks] : j.items()) {
      bool ok = ranks.is_array() && !ranks.empty();
      for (const auto& r : ranks) ok = ok && r.is_number_integer();
      if (!ok) diags.error(id, "a group must be a non-empty list of integer ranks", ranks.dump(), "[0, 1, ...]");
      else groups[id] = ranks.get<std::vector<long long>>();
    }
  diags.set_file(path);
  diags.throw_if_any();
  return groups;
}

}  // namespace

int run_replay(const Args& args) {
  CLI::App app{"Simulate a Chakra execution trace (PREFIX.<rank>.et per rank) on a catalog system", "xpusim replay"};
  report::ReplayQuery q;
  long long chips = 0;
  bool json = false;
  std::string trace_file;
  app.add_option("PREFIX", q.prefix, "trace prefix: reads PREFIX.0.et, PREFIX.1.et, ...")->required();
  app.add_option("--system", q.system, "catalog system id")->required();
  app.add_option("--chips", chips, "ranks (default: every PREFIX.<rank>.et found from 0; must match the files)");
  app.add_flag("--json", json, "print one JSON document");
  app.add_option("--trace", trace_file, "write a Chrome/Perfetto timeline (one process per rank)");
  app.add_option("--comm-groups", q.comm_groups_file, "process groups by pg_name: JSON {\"id\": [ranks]}");
  app.add_flag("--use-durations", q.use_durations, "replay every node by duration_micros (ASTRA-sim replay-only)");
  add_catalog_option(app);
  add_calibration_option(app, q.calibration_file);
  if (int rc = parse(app, args); rc >= 0) return rc;

  const hw::Catalog cat = load_catalog();
  const hw::SystemSpec& sys = cat.system(q.system, "--system");
  if (app.count("--chips") && chips < 1) core::fail("--chips", "at least one rank", std::to_string(chips), ">= 1");
  q.files = workload::chakra_rank_files(q.prefix, app.count("--chips") ? std::optional<long long>(chips) : std::nullopt);
  q.chips = static_cast<long long>(q.files.size());
  const calib::Params params = load_calibration(q.calibration_file);
  engine::ReplayInput in;
  for (const auto& f : q.files) in.traces.push_back(workload::read_chakra(f));
  in.system = &sys;
  in.calibration = &params;
  in.options.use_durations = q.use_durations;
  if (!q.comm_groups_file.empty()) in.options.comm_groups = load_comm_groups(q.comm_groups_file);
  const engine::ReplayResult r = engine::replay(in);
  if (!trace_file.empty()) write_text_file("--trace", trace_file, report::replay_chrome_trace(q, r));
  const report::Provenance prov = provenance(true, true, q.calibration_file);
  if (json) std::cout << report::replay_document(prov, q, r).dump(2) << "\n";
  else std::cout << report::replay_text(q, r);
  return 0;
}

}  // namespace xpusim::cli
