// xpusim model: list the shipped models, or show one model's shape, parameters, FLOPs per
// token and bytes (weights per dtype, KV cache).
//
//   xpusim model list [--json]
//   xpusim model show PATH_OR_ID [--json] [--seq N] [--context L]
// Parses flags and calls the library (workload/ loads and counts, report/ renders).

#include <nlohmann/json.hpp>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "xpusim/config/values.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/report/model_report.h"

namespace xpusim::cli {

namespace {

std::string models_dir() { return data_dir() + "/models"; }

}  // namespace

int run_model(const Args& args) {
  CLI::App app{"parameters, FLOPs and bytes of a model (HF config.json or id)", "xpusim model"};
  app.require_subcommand(1);
  bool list_json = false;
  auto* list = app.add_subcommand("list", "list the shipped models (" + models_dir() + ")");
  list->add_flag("--json", list_json, "print one JSON document");

  std::string what;
  bool show_json = false;
  std::optional<long long> seq, context;
  auto* show = app.add_subcommand("show", "shape, parameters, FLOPs per token and bytes of a model");
  show->add_option("model", what, "model id (see 'xpusim model list') or path to a config.json")
      ->required();
  show->add_flag("--json", show_json, "print one JSON document");
  show->add_option("--seq", seq, "sequence length for training and prefill FLOPs "
                                 "(default: min(max_position, 4096))");
  show->add_option("--context", context, "context length for decode FLOPs and KV (default: seq)");

  const int rc = parse(app, args);
  if (rc >= 0) return rc;
  if (list->parsed()) {
    std::vector<workload::ModelSpec> models;
    for (const auto& id : workload::model_ids(models_dir())) models.push_back(workload::load_model(id, models_dir()));
    if (list_json) std::cout << report::model_list_document(provenance(false, false), models).dump(2) << "\n";
    else std::cout << report::model_list_text(models);
    return 0;
  }
  core::Diagnostics d;  // the lengths' range, in the words every other count is judged in
  config::check_positive_count(d, "--seq", seq);
  config::check_positive_count(d, "--context", context);
  d.throw_if_any();
  const auto figures =
      report::model_figures(workload::load_model(what, models_dir()), seq.value_or(0), context.value_or(0));
  if (show_json) std::cout << report::model_show_document(provenance(false, false), what, figures).dump(2) << "\n";
  else std::cout << report::model_show_text(figures);
  return 0;
}

}  // namespace xpusim::cli
