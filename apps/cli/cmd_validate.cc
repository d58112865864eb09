// xpusim validate FILE.csv [--json]: predicted vs measured for every row of a validation file.

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "xpusim/compute/calibration.h"
#include "xpusim/core/format.h"
#include "xpusim/validation/summary.h"

namespace xpusim::cli {

namespace {

const char* status_name(validation::Status s) {
  switch (s) {
    case validation::Status::Ok: return "ok";
    case validation::Status::Unsupported: return "unsupported";
    case validation::Status::Error: return "error";
  }
  return "?";
}

}  // namespace

int run_validate(const Args& args) {
  CLI::App app{"Predict every row of a validation CSV (schema: shared/validation/README.md) and report errors",
               "xpusim validate"};
  std::string file;
  bool json = false;
  std::string calibration_file;
  add_calibration_option(app, calibration_file);
  app.add_option("FILE", file, "validation CSV (default: the project's copy of the public set, data/validation/public.csv)");
  app.add_flag("--json", json, "print one JSON document");
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (file.empty()) file = validation::default_public_file(data_dir());
  const auto rows = validation::read_csv(file);
  const hw::Catalog cat = hw::Catalog::load(data_dir() + "/catalog");
  const calib::Params params = load_calibration(calibration_file);
  validation::Context ctx{&cat, data_dir() + "/models", &params};
  const auto results = validation::run_all(rows, ctx);
  const auto summary = validation::summarize(results);

  if (json) {
    nlohmann::ordered_json j;
    j["rows"] = nlohmann::ordered_json::array();
    for (const auto& r : results) {
      const bool ok = r.prediction.status == validation::Status::Ok;
      nlohmann::ordered_json row = {{"id", r.row.id}, {"kind", r.row.kind}, {"metric", r.row.metric},
                                    {"measured", r.row.value}};
      row["predicted"] = ok ? nlohmann::ordered_json(r.prediction.predicted) : nlohmann::ordered_json(nullptr);
      row["error_pct"] = ok ? nlohmann::ordered_json(r.error_pct) : nlohmann::ordered_json(nullptr);
      row["status"] = status_name(r.prediction.status);
      row["reason"] = r.prediction.reason;
      row["system"] = r.row.system;
      row["assumptions"] = r.prediction.assumptions;
      j["rows"].push_back(row);
    }
    j["summary"] = nlohmann::ordered_json::object();
    for (const auto& [k, s] : summary) {
      j["summary"][k] = {{"n", s.n}, {"ok", s.ok}, {"unsupported", s.unsupported}, {"errors", s.errors},
                         {"median_abs_error_pct", s.median_abs_error_pct},
                         {"p90_abs_error_pct", s.p90_abs_error_pct},
                         {"mean_abs_error_pct", s.mean_abs_error_pct}};
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }

  std::cout << core::strformat("%-58s %-5s %-34s %12s %12s %8s\n", "id", "kind", "metric", "measured",
                               "predicted", "error");
  for (const auto& r : results) {
    if (r.prediction.status == validation::Status::Ok) {
      std::cout << core::strformat("%-58s %-5s %-34s %12s %12s %+7.1f%%\n", r.row.id.c_str(), r.row.kind.c_str(),
                                   r.row.metric.c_str(), core::fmt_num(r.row.value, 5).c_str(),
                                   core::fmt_num(r.prediction.predicted, 5).c_str(), r.error_pct);
    } else {
      std::cout << core::strformat("%-58s %-5s %-34s %12s %12s %8s\n", r.row.id.c_str(), r.row.kind.c_str(),
                                   r.row.metric.c_str(), core::fmt_num(r.row.value, 5).c_str(), "-",
                                   status_name(r.prediction.status));
    }
  }
  std::cout << "\nsummary (absolute error over predicted rows)\n";
  std::cout << core::strformat("  %-26s %4s %4s %12s %10s %10s\n", "kind", "n", "ok", "median |err|", "p90 |err|",
                               "mean |err|");
  for (const auto& [k, s] : summary)
    std::cout << core::strformat("  %-26s %4d %4d %11.1f%% %9.1f%% %9.1f%%\n", k.c_str(), s.n, s.ok,
                                 s.median_abs_error_pct, s.p90_abs_error_pct, s.mean_abs_error_pct);
  for (const auto& [f, s] : validation::summarize_by_family(results, cat)) {
    std::cout << core::strformat("  %-26s %4d %4d %11.1f%% %9.1f%% %9.1f%%\n", f.c_str(), s.n, s.ok,
                                 s.median_abs_error_pct, s.p90_abs_error_pct, s.mean_abs_error_pct);
  }
  bool header = false;
  for (const auto& r : results) {
    if (r.prediction.status == validation::Status::Ok) continue;
    if (!header) std::cout << "\nrows not predicted\n";
    header = true;
    std::cout << "  " << r.row.id << " (" << status_name(r.prediction.status) << "): " << r.prediction.reason << "\n";
  }
  return 0;
}

}  // namespace xpusim::cli
