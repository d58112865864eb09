#pragma once
// A user's values for a system's estimated inputs: its price per chip-hour (--price) and its
// chips' TDP (--tdp). The catalog marks both as estimates with a range where nothing was
// published (Trainium3); a study with a quote or a measured power replaces them here.

#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/hw/catalog.h"

namespace xpusim::scenario {

struct EstimateOverrides {
  std::optional<double> price_usd_per_chip_hour;  ///< --price
  std::optional<double> tdp_w;                    ///< --tdp
  bool any() const { return price_usd_per_chip_hour || tdp_w; }
};

/// Each value given must be a finite positive number; diagnostics name the flag.
void check_overrides(const EstimateOverrides& o, core::Diagnostics& d);

/// A site power usage effectiveness (--pue) must lie in (1, 3); the diagnostic names --pue.
void check_pue(const std::optional<double>& pue, core::Diagnostics& d);

/// `sys` with the overrides applied (source "user override (--price)", confidence published so
/// that reports no longer call the value estimated). The overhead power per chip is unchanged.
hw::SystemSpec with_overrides(const hw::SystemSpec& sys, const EstimateOverrides& o);

/// One line per override: the value used and the catalog value it replaces, with its range.
std::vector<std::string> override_notes(const hw::SystemSpec& catalog_sys, const EstimateOverrides& o);

/// Checks the overrides (InputError naming the flag) and replaces system `id` of `cat` by its
/// overridden copy; returns override_notes(). Nothing changes when no override is given.
std::vector<std::string> apply_overrides(hw::Catalog& cat, const std::string& id, const EstimateOverrides& o);

}  // namespace xpusim::scenario
