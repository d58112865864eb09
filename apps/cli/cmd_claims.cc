// xpusim claims: every public claim about Trainium3 checked with the simulator (docs/claims.md).
// Parses flags and calls the library (scenario/ runs the checks, report/ renders).

#include <iostream>

#include "cli_util.h"
#include "flags.h"
#include "xpusim/report/claims_report.h"
#include "xpusim/report/html_report.h"

namespace xpusim::cli {

int run_claims(const Args& args) {
  CLI::App app{"check the public Trainium3 claims (Trn3 vs Trn2) with the simulator", "xpusim claims"};
  scenario::ClaimsInputs in;
  std::string calibration_file, html;
  bool json = false;
  add_estimate_flags(app, in.trn3);
  add_calibration_option(app, calibration_file);
  add_catalog_option(app);
  app.add_flag("--json", json, "print one JSON document");
  add_html_option(app, html);
  if (int rc = parse(app, args); rc >= 0) return rc;

  const hw::Catalog cat = load_catalog();
  const calib::Params params = load_calibration(calibration_file);
  const scenario::ClaimsReport rep = scenario::check_claims(in, cat, data_dir() + "/models", params);
  if (!html.empty()) write_html(html, report::claims_html(provenance(true, true, calibration_file), rep));
  if (json) std::cout << report::claims_document(provenance(true, true, calibration_file), in, rep).dump(2) << "\n";
  else std::cout << report::claims_text(rep);
  return 0;
}

}  // namespace xpusim::cli
