#include "xpusim/report/calibration_report.h"

#include <nlohmann/json.hpp>

namespace xpusim::report {

namespace {

Json parameter_json(const calib::Parameter& p) {
  Json j = {{"key", p.key},
            {"value", p.value.text},
            {"unit", calib::unit_kind(p.value)},
            {"meaning", p.meaning},
            {"basis", p.basis},
            {"kind", calib::kind_name(p.kind)}};
  j["range"] = p.range_low && p.range_high ? Json::array({p.range_low->text, p.range_high->text}) : Json(nullptr);
  j["source"] = p.source;
  return j;
}

}  // namespace

Json calibration_document(const Provenance& provenance, const calib::Params& params,
                          const std::string& override_file) {
  Json inputs = Json::object();
  if (!override_file.empty()) inputs["calibration"] = override_file;
  Json parameters = Json::array();
  for (const auto& [key, p] : params.all()) parameters.push_back(parameter_json(p));
  return document("calibration show", provenance, inputs, Json{{"parameters", parameters}});
}

std::string calibration_text(const calib::Params& params) {
  std::string out;
  for (const auto& [key, p] : params.all()) {
    out += key + " = " + p.value.text + "  (" + calib::kind_name(p.kind) + ", " + calib::unit_kind(p.value);
    if (p.range_low && p.range_high) out += ", range [" + p.range_low->text + ", " + p.range_high->text + "]";
    out += ")\n    meaning: " + p.meaning + "\n    basis:   " + p.basis + "\n";
  }
  out += "\n" + std::to_string(params.all().size()) +
         " parameters from data/calibration/; override any subset with --calibration FILE\n";
  return out;
}

}  // namespace xpusim::report
