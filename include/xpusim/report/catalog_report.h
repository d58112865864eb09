#pragma once
// Rendering of `xpusim catalog`: the list of systems, and one system (with its chip) or one chip
// with the value, unit, source and confidence of every number (text and JSON). Computes nothing new.

#include <string>

#include "xpusim/hw/catalog.h"
#include "xpusim/report/json_convention.h"

namespace xpusim::report {

/// `catalog list --json`: `systems` (one summary per system) and `chips` (ids).
Json catalog_list_document(const Provenance& provenance, const hw::Catalog& cat);
std::string catalog_list_text(const hw::Catalog& cat);

/// Whether `id` names a chip only (a system id wins when a chip has the same id).
bool names_chip_only(const hw::Catalog& cat, const std::string& id);

/// `catalog show ID --json` of a system: `kind` "system", `system` and `chip`.
Json system_show_document(const Provenance& provenance, const hw::SystemSpec& s);
/// `catalog show ID --json` of a chip: `kind` "chip" and `chip`.
Json chip_show_document(const Provenance& provenance, const hw::ChipSpec& c);
std::string system_show_text(const hw::SystemSpec& s);
std::string chip_show_text(const hw::ChipSpec& c);

}  // namespace xpusim::report
