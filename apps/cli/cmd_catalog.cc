// xpusim catalog: list the systems of the hardware catalog, or show one system (and its chip)
// or one chip with the value, unit, source and confidence of every number.
//
//   xpusim catalog list [--json]
//   xpusim catalog show ID [--json]      (ID: a system id or a chip id)
// Parses flags and calls the library (hw/ loads, report/ renders).

#include <nlohmann/json.hpp>
#include <iostream>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "xpusim/report/catalog_report.h"

namespace xpusim::cli {

namespace {

std::string show(const hw::Catalog& cat, const std::string& id, bool json) {
  const report::Provenance prov = provenance(true, false);
  if (report::names_chip_only(cat, id)) {
    const auto& c = cat.chip(id);
    return json ? report::chip_show_document(prov, c).dump(2) + "\n" : report::chip_show_text(c);
  }
  const auto& s = cat.system(id, "ID");  // unknown id: InputError with the closest match
  return json ? report::system_show_document(prov, s).dump(2) + "\n" : report::system_show_text(s);
}

}  // namespace

int run_catalog(const Args& args) {
  CLI::App app{"List the hardware catalog, or show one system or chip with sources", "xpusim catalog"};
  app.require_subcommand(1);
  bool json = false;
  auto* list_cmd = app.add_subcommand("list", "one line per system");
  list_cmd->add_flag("--json", json, "print one JSON document");
  add_catalog_option(*list_cmd);
  std::string id;
  auto* show_cmd = app.add_subcommand("show", "every number of a system (and its chip) or a chip");
  show_cmd->add_option("ID", id, "system id or chip id")->required();
  show_cmd->add_flag("--json", json, "print one JSON document");
  add_catalog_option(*show_cmd);
  if (int rc = parse(app, args); rc >= 0) return rc;

  const hw::Catalog cat = load_catalog();
  if (!list_cmd->parsed()) std::cout << show(cat, id, json);
  else if (json) std::cout << report::catalog_list_document(provenance(true, false), cat).dump(2) << "\n";
  else std::cout << report::catalog_list_text(cat);
  return 0;
}

}  // namespace xpusim::cli
