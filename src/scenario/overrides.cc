#include "xpusim/scenario/overrides.h"

#include <cmath>

#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"

namespace xpusim::scenario {

namespace {

void check_one(core::Diagnostics& d, const char* flag, const std::optional<double>& v, double limit,
               const std::string& expected) {
  if (v && (!std::isfinite(*v) || !(*v > 0) || *v > limit))
    d.error(flag, "must be a finite positive number within the limit", core::fmt_num(*v),
            expected + ", at most " + core::fmt_num(limit) + " (docs/errors.md, \"Limits\")");
}

std::string range_text(const hw::Sourced<core::Watts>& s) {
  if (!s.low || !s.high) return "";
  return ", range " + core::fmt_num(core::to_watts(*s.low)) + " .. " + core::fmt_num(core::to_watts(*s.high)) + " W";
}

std::string range_text(const hw::Sourced<core::DollarRate>& s) {
  if (!s.low || !s.high) return "";
  return core::strformat(", range $%.2f .. $%.2f", core::to_dollars_per_hour(*s.low), core::to_dollars_per_hour(*s.high));
}

template <typename Q>
void override_fact(hw::Sourced<Q>& fact, Q value, const char* flag) {
  fact.value = value;
  fact.source = std::string("user override (") + flag + ")";
  fact.confidence = hw::Confidence::Published;
  fact.note = "given on the command line";
  fact.low.reset();
  fact.high.reset();
}

}  // namespace

void check_overrides(const EstimateOverrides& o, core::Diagnostics& d) {
  check_one(d, "--price", o.price_usd_per_chip_hour, core::limits::kChipHourUsd, "a price in USD per chip-hour > 0, e.g. 3.78");
  check_one(d, "--tdp", o.tdp_w, core::limits::kChipWatts, "a chip TDP in watts > 0, e.g. 1000");
}

void check_pue(const std::optional<double>& pue, core::Diagnostics& d) {
  if (pue && !(*pue > 1 && *pue < 3))
    d.error("--pue", "power usage effectiveness out of range", core::strformat("%g", *pue),
            "a number greater than 1 and less than 3 (facility power / IT power)");
}

hw::SystemSpec with_overrides(const hw::SystemSpec& sys, const EstimateOverrides& o) {
  hw::SystemSpec out = sys;
  if (o.price_usd_per_chip_hour)
    override_fact(out.price_per_chip_hour, core::dollars_per_hour(*o.price_usd_per_chip_hour), "--price");
  if (o.tdp_w) override_fact(out.chip.tdp, core::watts(*o.tdp_w), "--tdp");
  return out;
}

std::vector<std::string> override_notes(const hw::SystemSpec& sys, const EstimateOverrides& o) {
  std::vector<std::string> notes;
  if (o.price_usd_per_chip_hour) {
    const auto& p = sys.price_per_chip_hour;
    notes.push_back(core::strformat("--price: $%s per chip-hour used for %s (catalog: $%.2f, %s%s)",
                                    core::fmt_num(*o.price_usd_per_chip_hour).c_str(), sys.id.c_str(),
                                    core::to_dollars_per_hour(p.value), hw::confidence_name(p.confidence).c_str(),
                                    range_text(p).c_str()));
  }
  if (o.tdp_w) {
    const auto& t = sys.chip.tdp;
    notes.push_back("--tdp: " + core::fmt_num(*o.tdp_w) + " W per chip used for " + sys.id + " (catalog: " +
                    core::fmt_num(core::to_watts(t.value)) + " W, " + hw::confidence_name(t.confidence) +
                    range_text(t) + "; overhead power per chip unchanged)");
  }
  return notes;
}

std::vector<std::string> apply_overrides(hw::Catalog& cat, const std::string& id, const EstimateOverrides& o) {
  core::Diagnostics d;
  check_overrides(o, d);
  d.throw_if_any();
  if (!o.any()) return {};
  const hw::SystemSpec& sys = cat.system(id, "--system");
  std::vector<std::string> notes = override_notes(sys, o);
  cat.replace_system(with_overrides(sys, o));
  return notes;
}

}  // namespace xpusim::scenario
