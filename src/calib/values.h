#pragma once
// The calib layer's own helpers shared by params.cc and stacks.cc (not part of its interface).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "xpusim/calib/params.h"

namespace xpusim::calib::detail {

bool same_unit(const Value& a, const Value& b);
/// A value node: a YAML bool is a flag, a number or a numeric string a plain number, any other
/// string a quantity with a unit; a diagnostic at `path` otherwise.
std::optional<Value> parse_value(const nlohmann::ordered_json& node, const std::string& path,
                                 core::Diagnostics& diags);
/// A diagnostic when p.value lies outside [range_low, range_high] or is in another unit.
void check_range(const Parameter& p, const std::string& path, core::Diagnostics& diags);
/// Reads dir/*.yaml version tables into `params` (stacks.cc); a missing directory is no table.
void load_stacks(const std::string& dir, Params& params);

}  // namespace xpusim::calib::detail
