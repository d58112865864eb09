#pragma once
// Flags that fill the optional inputs of the scenario layer: a flag left out stays unset (the
// library's default), a flag given is set, whatever its value (the library judges it).

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "xpusim/scenario/overrides.h"

namespace xpusim::cli {

/// An empty value (`--seed ""`) is refused rather than read as 0 or as an empty name, as for
/// every flag that takes a value (cli::parse).
template <typename T>
CLI::Option* add_optional(CLI::App& app, const std::string& name, std::optional<T>& out, const std::string& help) {
  return app.add_option_function<T>(name, [&out](const T& v) { out = v; }, help);
}

inline CLI::Option* add_optional_flag(CLI::App& app, const std::string& name, std::optional<bool>& out,
                                      const std::string& help) {
  return app.add_flag_function(name, [&out](std::int64_t) { out = true; }, help);
}

/// --price and --tdp: the simulated system's estimated price and chip TDP, replaced.
inline void add_estimate_flags(CLI::App& app, scenario::EstimateOverrides& o) {
  add_optional(app, "--price", o.price_usd_per_chip_hour,
               "USD per chip-hour for the simulated system (replaces the catalog's estimate)");
  add_optional(app, "--tdp", o.tdp_w, "chip TDP in W for the simulated system (replaces the catalog's estimate)");
}

}  // namespace xpusim::cli
