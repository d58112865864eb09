#pragma once
// Flags that fill the optional inputs of the scenario layer: a flag left out stays unset (the
// library's default), a flag given is set, whatever its value (the library judges it).

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace xpusim::cli {

template <typename T>
CLI::Option* add_optional(CLI::App& app, const std::string& name, std::optional<T>& out, const std::string& help) {
  return app.add_option_function<T>(name, [&out](const T& v) { out = v; }, help);
}

inline CLI::Option* add_optional_flag(CLI::App& app, const std::string& name, std::optional<bool>& out,
                                      const std::string& help) {
  return app.add_flag_function(name, [&out](std::int64_t) { out = true; }, help);
}

}  // namespace xpusim::cli
