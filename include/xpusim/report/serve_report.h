#pragma once
// Rendering of serving results (one run, plan search, comparison of systems): text and JSON
// (docs/json.md). Computes nothing new.

#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/scenario/serve_inputs.h"

namespace xpusim::report {

/// The whole `serve --json` document of one run.
Json serve_document(const Provenance& provenance, const scenario::ServeInputs& in, const serve::ServeReport& rep);
/// `serve --json` of a scenario that does not fit (exit 1).
Json serve_infeasible_document(const Provenance& provenance, const scenario::ServeInputs& in, const std::string& reason);
std::string serve_text(const serve::ServeReport& rep);

/// `serve --search/--compare --json`: one entry per system under "results".
Json search_document(const Provenance& provenance, const scenario::ServeInputs& in, const std::vector<serve::SearchResult>& results, bool compare);
std::string search_text(const std::vector<serve::SearchResult>& results);
/// A Trainium run's software range (serve/software_range.h): `central` and each end's software and figures.
Json software_range_json(const serve::SoftwareRange& r);
/// The `results` array of a search document (one entry per system searched).
Json search_results_json(const std::vector<serve::SearchResult>& results);
/// The same search with one thing left out: the prefix cache ("prefix cache", --prefix-cache off)
/// or one KV offload tier ("host tier", "ssd tier", "remote pool").
struct SearchWithout {
  std::string what;
  std::vector<serve::SearchResult> results;
};
/// SearchWithout::what of the search with --prefix-cache off.
inline constexpr const char* kWithoutPrefixCache = "prefix cache";
/// A trace with shared prefixes: chips and $/M output tokens per system as searched and, side by
/// side, without the prefix cache and without each offload tier the run named.
std::string search_without_text(const std::vector<serve::SearchResult>& as_run, const std::vector<SearchWithout>& without);

}  // namespace xpusim::report
