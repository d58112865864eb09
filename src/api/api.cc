#include "xpusim/api/api.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <tuple>
#include <utility>

#include "xpusim/config/values.h"
#include "xpusim/core/suggest.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/unit_parse.h"
#include "xpusim/report/catalog_report.h"
#include "xpusim/report/model_report.h"
#include "xpusim/report/serve_report.h"
#include "xpusim/report/scale_report.h"
#include "xpusim/report/train_report.h"
#include "xpusim/report/trust_report.h"
#include "xpusim/report/validation_report.h"
#include "xpusim/serve/software_range.h"
#include "xpusim/scenario/sweep.h"
#include "xpusim/validation/summary.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::api {

namespace {

// Keys as the scenario file writes them (flat keys accepted), judged by the scenario reader.
config::Json nested(const std::string& command, const Json& keys) {
  core::Diagnostics d;
  config::Json out = scenario::nest_scenario_keys(command, keys, "", d);
  d.throw_if_any();
  return out;
}

// A reader over a command's own keys (collective, validate, catalog, model): strict, with the
// closest known key for a typo.
template <typename Body>
auto read_keys(const Json& keys, Body body) {
  core::Diagnostics d;
  if (!keys.is_object()) core::fail("", "keys must be a mapping", config::brief(keys), "keyword arguments");
  config::FieldReader r(keys, "", d);
  auto out = body(r);
  r.finish();
  d.throw_if_any();
  return out;
}

}  // namespace

std::string default_data_dir() { return core::find_data_dir(XS_DATA_DIR).path; }

core::DataDir data_dir_in_use() { return core::find_data_dir(XS_DATA_DIR); }

validation::TrustData load_trust_data(const std::string& data_dir) {
  const std::string file = validation::default_trust_file(data_dir);
  if (std::filesystem::exists(file)) return validation::load_trust(file);
  validation::TrustData none;
  none.basis = "no uncertainty data: " + file + " is missing (xpusim validate --cv --write-bands)";
  return none;
}

Session::Session(std::string dir, std::string calibration, std::vector<std::string> user_catalogs)
    : data_dir(std::move(dir)),
      calibration_file(std::move(calibration)),
      catalog_dirs(std::move(user_catalogs)),
      catalog(hw::Catalog::load(data_dir + "/catalog", catalog_dirs)),
      params(calib::load_shipped(data_dir)),
      trust(load_trust_data(data_dir)) {
  if (!calibration_file.empty()) calib::apply_override(params, calibration_file);
}

report::Provenance Session::provenance(bool uses_catalog, bool uses_calibration) const {
  report::Provenance p = report::provenance(uses_catalog ? data_dir + "/catalog" : "",
                                            uses_calibration ? data_dir + "/calibration" : "",
                                            uses_calibration ? calibration_file : "");
  if (uses_catalog) report::set_user_catalog(p, data_dir + "/catalog", catalog_dirs, catalog.user_entries());
  return p;
}

Json train_document(const report::Provenance& prov, const validation::TrustData& trust,
                    const scenario::TrainInputs& in, const scenario::TrainRun& run) {
  Json doc = report::train_document(prov, in, run);
  const auto assessment = validation::assess(trust, report::train_query(run.built.scenario));
  report::add_trust_json(doc, trust, assessment, report::train_metrics(run.result));
  return doc;
}

Json serve_document(const report::Provenance& prov, const validation::TrustData& trust, const hw::Catalog& cat,
                    const std::string& models_dir, const scenario::ServeInputs& in, const serve::ServeReport& rep) {
  Json doc = report::serve_document(prov, in, rep);
  const auto model = workload::load_model(rep.scenario.model, models_dir);
  const auto assessment = validation::assess(trust, report::serve_query(rep, cat.system(rep.scenario.system), model));
  report::add_trust_json(doc, trust, assessment, report::serve_metrics(rep));
  return doc;
}

Json train_solver_document(const report::Provenance& prov, const validation::TrustData& trust,
                           const scenario::TrainInputs& in, const scenario::SolverResult& result) {
  Json doc = train_document(prov, trust, in, result.run);
  doc["solver"] = report::solver_json(result);
  return doc;
}

Json train(const Json& keys, const Session& s) {
  const scenario::TrainInputs in = scenario::train_inputs_from_json(nested("train", keys), "");
  if (in.deadline || in.budget)
    return train_solver_document(s.provenance(true, true), s.trust, in,
                                 scenario::run_solver(in, s.catalog, s.models_dir(), s.params));
  const scenario::TrainRun run = scenario::run_train(in, s.catalog, s.models_dir(), s.params, false);
  return train_document(s.provenance(true, true), s.trust, in, run);
}

Json serve(const Json& keys, const Session& s, bool with_software_range) {
  const scenario::ServeInputs in = scenario::serve_inputs_from_json(nested("serve", keys), "");
  const serve::ServeEnv env{&s.catalog, s.models_dir(), &s.params};
  const auto result = serve::run_scenario(scenario::build_serve(in), env);
  if (!result) return report::serve_infeasible_document(s.provenance(true, true), in, result.error());
  serve::ServeReport rep = *result;
  if (with_software_range) rep.software_range = serve::software_range(rep, env);
  return serve_document(s.provenance(true, true), s.trust, s.catalog, s.models_dir(), in, rep);
}

net::CollectiveKind parse_collective_op(const std::string& op, const std::string& path) {
  static const std::vector<std::pair<std::string, net::CollectiveKind>> ops = {
      {"all-reduce", net::CollectiveKind::AllReduce},         {"all-gather", net::CollectiveKind::AllGather},
      {"reduce-scatter", net::CollectiveKind::ReduceScatter}, {"all-to-all", net::CollectiveKind::AllToAll},
      {"broadcast", net::CollectiveKind::Broadcast},
  };
  std::vector<std::string> names;
  for (const auto& [name, kind] : ops) {
    if (name == op) return kind;
    names.push_back(name);
  }
  core::fail(path, "unknown collective '" + op + "'", op, "one of: " + core::join(names),
             core::did_you_mean(op, names));
}

core::Bytes parse_collective_bytes(const std::string& text, const std::string& path) {
  char* end = nullptr;
  const double plain = std::strtod(text.c_str(), &end);
  core::Bytes b;
  if (end != text.c_str() && *end == '\0') {
    b = core::bytes(plain);
  } else {
    auto parsed = core::parse_quantity<core::Bytes>(text);
    if (!parsed) core::fail(path, parsed.error(), text, "a size such as 1073741824 or '1 GiB'");
    b = *parsed;
  }
  if (!std::isfinite(core::to_bytes(b)) || core::to_bytes(b) < 1.0 || core::to_bytes(b) > core::limits::kCollectiveBytes)
    core::fail(path, "the per-chip buffer must be at least 1 byte and within the limit", text,
               ">= 1 B and at most 1 PiB (docs/errors.md, \"Limits\")");
  return b;
}

net::CollectiveCost collective_cost(const hw::SystemSpec& sys, const calib::Params& params,
                                    const report::CollectiveQuery& q) {
  net::TopologyOptions topology_options;
  topology_options.params = net::network_params(params);
  const net::Topology topo = net::Topology::build(sys, q.chips, topology_options);
  net::CollectiveOptions opt;
  opt.algorithm = q.algorithm;
  return net::collective_cost(topo, q.kind, q.bytes, {q.chips, 1}, opt);
}

Json collective(const Json& keys, const Session& s) {
  report::CollectiveQuery q;
  std::string op;
  read_keys(keys, [&](config::FieldReader& r) {
    q.system = r.str("system");
    q.chips = r.integer("chips");
    op = r.str("op");
    r.ignore("bytes");
    q.algorithm = r.str_or("algorithm", "auto");
    return 0;
  });
  const hw::SystemSpec& sys = s.catalog.system(q.system, "system");
  if (q.chips < 2) core::fail("chips", "a collective needs at least 2 chips", std::to_string(q.chips), ">= 2");
  q.kind = parse_collective_op(op, "op");
  const Json* bytes = keys.contains("bytes") ? &keys["bytes"] : nullptr;
  if (!bytes || !(bytes->is_string() || bytes->is_number()))
    core::fail("bytes", bytes ? "wrong type" : "required", bytes ? config::brief(*bytes) : "",
               "a size such as 1073741824 or '1 GiB'");
  q.bytes = parse_collective_bytes(bytes->is_string() ? bytes->get<std::string>() : bytes->dump(), "bytes");
  return report::collective_document(s.provenance(true, true), q, collective_cost(sys, s.params, q));
}

Json validate(const Json& keys, const Session& s) {
  const auto [file, explain, globs] = read_keys(keys, [&](config::FieldReader& r) {
    return std::tuple{r.str_or("file", validation::default_public_file(s.data_dir)), r.boolean_or("explain", false),
                      r.str_or("rows", "")};
  });
  // `rows`: validate --rows, only the rows whose id matches one of the comma-separated globs.
  const auto keep = validation::RowSelection::parse(globs);
  const auto rows = validation::kept_rows(validation::read_csv(file), keep);
  if (!globs.empty() && rows.empty()) validation::refuse_selection(file, "rows", globs, keep);
  const validation::Context ctx{&s.catalog, s.models_dir(), &s.params};
  const auto results = validation::run_all(rows, ctx);
  const report::InBand in_band = report::rows_in_band(results, s.trust, s.catalog, s.models_dir());
  Json doc = report::validation_document(s.provenance(true, true), file, results, s.catalog, nullptr, explain,
                                         keep.text(), &in_band);
  report::add_row_trust(doc, results, s.trust, s.catalog, s.models_dir());
  return doc;
}

Json catalog(const Json& keys, const Session& s) {
  const std::optional<std::string> id = read_keys(keys, [](config::FieldReader& r) {
    return r.has("id") ? std::optional<std::string>(r.str_or("id", "")) : std::nullopt;
  });
  const report::Provenance prov = s.provenance(true, false);
  if (!id) return report::catalog_list_document(prov, s.catalog);
  if (id->empty()) core::fail("id", "empty id", "", "a system or chip id (catalog() with no id lists them)");
  if (report::names_chip_only(s.catalog, *id)) return report::chip_show_document(prov, s.catalog.chip(*id));
  return report::system_show_document(prov, s.catalog.system(*id, "id"));
}

Json model(const Json& keys, const Session& s) {
  struct Show {
    std::string model;
    long long seq = 0, context = 0;
  };
  const Show show = read_keys(keys, [](config::FieldReader& r) {
    Show out{r.str_or("model", "")};
    for (auto [key, value] : {std::pair{"seq", &out.seq}, {"context", &out.context}}) {
      if (!r.has(key)) continue;
      *value = r.integer(key);
      config::check_positive_count(r.diagnostics(), key, *value);
    }
    return out;
  });
  const report::Provenance prov = s.provenance(false, false);
  if (show.model.empty()) {
    std::vector<workload::ModelSpec> models;
    for (const auto& id : workload::model_ids(s.models_dir())) models.push_back(workload::load_model(id, s.models_dir()));
    return report::model_list_document(prov, models);
  }
  const auto figures = report::model_figures(workload::load_model(show.model, s.models_dir()), show.seq, show.context);
  return report::model_show_document(prov, show.model, figures);
}

}  // namespace xpusim::api
