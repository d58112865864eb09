#include "xpusim/report/mx_report.h"

#include <nlohmann/json.hpp>
#include <cmath>
#include <sstream>

#include "xpusim/core/format.h"

namespace xpusim::report {

using namespace xpusim::numerics;

namespace {

std::string pct(double f) { return core::strformat("%.4f%%", 100.0 * f); }

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return core::strformat("%.6g", v);
}

Json options_json(const QuantOptions& o) {
  return {{"rounding", rounding_name(o.rounding)},
          {"scale_rule", scale_rule_name(o.scale_rule)},
          {"layout", layout_name(o.layout)},
          {"axis", o.axis}};
}

Json error_json(const ErrorStats& e) {
  Json j = {{"elements", e.elements}, {"rmse", e.rmse}, {"max_abs_error", e.max_abs_error},
            {"max_rel_error", e.max_rel_error}};
  j["snr_db"] = std::isfinite(e.snr_db) ? Json(e.snr_db) : Json(nullptr);
  return j;
}

Json format_stats_json(const QuantStats& r) {
  Json e = error_json(r.error);
  e["format"] = format_info(r.format).name;
  e["saturated_fraction"] = r.saturated_fraction;
  e["flushed_to_zero_fraction"] = r.flushed_fraction;
  e["bits_per_element"] = r.bits_per_element;
  return e;
}

void format_stats_text(std::ostream& o, const QuantStats& r) {
  const std::string snr =
      std::isfinite(r.error.snr_db) ? core::strformat("%.2f", r.error.snr_db)
                                    : std::string(std::isnan(r.error.snr_db) ? "n/a" : "inf");
  o << core::strformat("  %-11s %12s %9s %12s %12s %11s %11s %9.4f\n", format_info(r.format).name,
                       num(r.error.rmse).c_str(), snr.c_str(), num(r.error.max_abs_error).c_str(),
                       num(r.error.max_rel_error).c_str(), pct(r.saturated_fraction).c_str(),
                       pct(r.flushed_fraction).c_str(), r.bits_per_element);
}

}  // namespace

Json mx_quantize_document(const Provenance& provenance, const MxQuantizeRun& run) {
  const Tensor& t = *run.tensor;
  const QuantizedTensor& q = *run.quantized;
  const Json inputs = {{"input", run.input}, {"format", format_info(run.options.format).name},
                       {"options", options_json(run.options)}, {"output", run.output}};
  Json j = {{"input", run.input},
            {"tensor", t.name},
            {"shape", t.shape},
            {"format", format_info(run.options.format).name},
            {"options", options_json(run.options)},
            {"blocks", q.scales.size()},
            {"scale_shape", q.scale_shape},
            {"bits_per_element", bits_per_element(run.options.format, static_cast<int64_t>(t.data.size()))},
            {"error", error_json(run.error)},
            {"output", run.output}};
  if (format_info(run.options.format).nvfp4) j["tensor_scale"] = q.tensor_scale;
  return document("mx quantize", provenance, inputs, j);
}

std::string mx_quantize_text(const MxQuantizeRun& run) {
  const Tensor& t = *run.tensor;
  const QuantizedTensor& q = *run.quantized;
  const QuantOptions& o = run.options;
  const ErrorStats& e = run.error;
  std::ostringstream out;
  out << "quantized " << run.input << " " << shape_string(t.shape) << " to " << format_info(o.format).name
      << " (rounding " << rounding_name(o.rounding) << ", scale rule " << scale_rule_name(o.scale_rule)
      << ", layout " << layout_name(o.layout) << "): " << q.scales.size() << " blocks, scales "
      << shape_string(q.scale_shape) << "\n"
      << "rmse " << num(e.rmse) << ", snr " << num(e.snr_db) << " dB, max abs error " << num(e.max_abs_error)
      << "\nwrote " << run.output << "\n";
  return out.str();
}

Json mx_stats_document(const Provenance& provenance, const std::string& input, const QuantOptions& options,
                       const std::vector<MxTensorStats>& tensors) {
  Json list = Json::array();
  for (const auto& ts : tensors) {
    const Tensor& t = *ts.tensor;
    Json formats = Json::array();
    for (const auto& r : ts.formats) formats.push_back(format_stats_json(r));
    list.push_back({{"name", t.name}, {"dtype", t.dtype}, {"shape", t.shape}, {"elements", t.data.size()},
                    {"formats", formats}});
  }
  const Json inputs = {{"input", input}, {"options", options_json(options)}};
  return document("mx stats", provenance, inputs, Json{{"input", input}, {"options", options_json(options)},
                                                        {"tensors", list}});
}

std::string mx_stats_text(const QuantOptions& options, const std::vector<MxTensorStats>& tensors) {
  std::ostringstream o;
  for (const auto& ts : tensors) {
    const Tensor& t = *ts.tensor;
    o << t.name << " " << t.dtype << " " << shape_string(t.shape) << "  (rounding " << rounding_name(options.rounding)
      << ", scale rule " << scale_rule_name(options.scale_rule) << ", layout " << layout_name(options.layout) << ")\n";
    o << core::strformat("  %-11s %12s %9s %12s %12s %11s %11s %9s\n", "format", "rmse", "snr_dB", "max_abs_err",
                         "max_rel_err", "saturated", "flushed", "bits/elem");
    for (const auto& r : ts.formats) format_stats_text(o, r);
  }
  return o.str();
}

Json mx_gemm_document(const Provenance& provenance, const MxGemmRun& run) {
  const Json inputs = {{"a", run.a_path}, {"b", run.b_path}, {"format_a", format_info(run.options_a.format).name},
                       {"format_b", format_info(run.options_b.format).name}, {"options", options_json(run.options_a)}};
  const Json j = {{"a", run.a_path}, {"b", run.b_path}, {"m", run.m}, {"k", run.k}, {"n", run.n},
                  {"format_a", format_info(run.options_a.format).name},
                  {"format_b", format_info(run.options_b.format).name},
                  {"options", options_json(run.options_a)}, {"error", error_json(run.error)}};
  return document("mx gemm", provenance, inputs, j);
}

std::string mx_gemm_text(const MxGemmRun& run) {
  const ErrorStats& e = run.error;
  std::ostringstream o;
  o << "MX GEMM [" << run.m << " x " << run.k << "] x [" << run.k << " x " << run.n << "], A "
    << format_info(run.options_a.format).name << ", B " << format_info(run.options_b.format).name
    << ", fp32 accumulation, against the fp32 GEMM:\n"
    << "  rmse " << num(e.rmse) << "\n  snr " << num(e.snr_db) << " dB\n  max abs error " << num(e.max_abs_error)
    << "\n  max rel error " << num(e.max_rel_error) << "\n";
  return o.str();
}

}  // namespace xpusim::report
