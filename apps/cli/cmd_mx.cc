// xpusim mx: OCP MX / NVFP4 block floating point.
//   mx quantize --format F [--rounding R] [--scale-rule S] [--layout L] [--axis N] IN OUT.npy
//               [--tensor NAME] [--codes C.npy] [--scales S.npy] [--json]
//   mx stats IN [--tensor NAME | --all] [--rounding R] [--scale-rule S] [--layout L] [--axis N] [--json]
//   mx gemm A.npy B.npy --format F [--format-b F] [--rounding R] [--scale-rule S] [--out C.npy] [--json]
// Argument parsing and printing only; the numerics live in xpusim_numerics.
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/suggest.h"
#include "xpusim/numerics/mx.h"
#include "xpusim/numerics/stats.h"
#include "xpusim/numerics/tensor_io.h"
#include "xpusim/report/mx_report.h"

namespace xpusim::cli {

namespace {

using namespace xpusim::numerics;

struct CommonOpts {
  std::string rounding = "even";
  std::string scale_rule = "ocp";
  std::string layout = "contiguous";
  int axis = -1;
};

void add_common(CLI::App* app, CommonOpts& o) {
  app->add_option("--rounding", o.rounding, "element rounding: even (default), nearest (ties away), floor");
  app->add_option("--scale-rule", o.scale_rule, "block scale rule: ocp (default), trn3, rceil");
  app->add_option("--layout", o.layout, "block layout: contiguous (default) or trn3 (8 partitions x 4)");
  app->add_option("--axis", o.axis, "block axis (default -1, the last)");
}

QuantOptions to_options(const CommonOpts& c) {
  QuantOptions o;
  o.rounding = parse_rounding(c.rounding);
  o.scale_rule = parse_scale_rule(c.scale_rule);
  o.layout = parse_layout(c.layout);
  o.axis = c.axis;
  return o;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Reads IN: a .npy (one tensor), or a .safetensors file (the named tensor, or all of them).
std::vector<Tensor> read_inputs(const std::string& path, const std::string& tensor, bool all,
                                bool default_all) {
  const std::string bytes = read_file(path);
  if (is_npy(bytes) || ends_with(path, ".npy")) {
    if (!tensor.empty()) {
      core::fail("--tensor", "a .npy file holds a single unnamed tensor", tensor,
                 "--tensor only with a .safetensors file");
    }
    Tensor t = parse_npy(bytes, path);
    t.name = path;
    return {std::move(t)};
  }
  if (!ends_with(path, ".safetensors")) {
    throw core::InputError(core::Diagnostic{path, 0, "IN", "unrecognised input file type", "",
                                            ".npy or .safetensors", ""});
  }
  const SafetensorsFile file(bytes, path);
  const std::vector<std::string> names = file.names();
  std::vector<std::string> chosen;
  if (!tensor.empty()) {
    chosen = {tensor};
  } else if (all || default_all || names.size() == 1) {
    chosen = names;
  } else {
    throw core::InputError(core::Diagnostic{path, 0, "--tensor", "missing tensor name", "",
                                            "one of " + core::join(names), ""});
  }
  std::vector<Tensor> out;
  for (const auto& n : chosen) out.push_back(file.tensor(n));
  return out;
}

// ---------------------------------------------------------------- quantize

int quantize_cmd(const std::string& format, const CommonOpts& common, const std::string& in,
                 const std::string& out, const std::string& tensor, const std::string& codes,
                 const std::string& scales, bool as_json) {
  QuantOptions o = to_options(common);
  o.format = parse_format(format);
  const std::vector<Tensor> ts = read_inputs(in, tensor, false, false);
  const Tensor& t = ts.front();
  const QuantizedTensor q = quantize(t.data.data(), t.shape, o);
  const std::vector<float> y = dequantize(q);
  write_file(out, npy_bytes_f32(t.shape, y.data()));
  if (!codes.empty()) write_file(codes, npy_bytes_u8(q.shape, q.codes.data()));
  if (!scales.empty()) write_file(scales, npy_bytes_u8(q.scale_shape, q.scales.data()));
  const report::MxQuantizeRun run{in, out, &t, o, &q, error_stats(t.data.data(), y.data(), static_cast<int64_t>(y.size()))};
  if (as_json) std::cout << report::mx_quantize_document(provenance(false, false), run).dump(2) << "\n";
  else std::cout << report::mx_quantize_text(run);
  return 0;
}

// ---------------------------------------------------------------- stats

int stats_cmd(const CommonOpts& common, const std::string& in, const std::string& tensor,
              bool all, bool as_json) {
  const QuantOptions base = to_options(common);
  const std::vector<Tensor> ts = read_inputs(in, tensor, all, true);
  std::vector<report::MxTensorStats> stats;
  for (const Tensor& t : ts) {
    report::MxTensorStats s{&t, {}};
    for (Format f : all_formats()) {
      QuantOptions o = base;
      o.format = f;
      if (format_info(f).nvfp4) o.layout = Layout::Contiguous;  // NVFP4 blocks are rows of 16
      s.formats.push_back(quant_stats(t.data.data(), t.shape, o));
    }
    stats.push_back(std::move(s));
  }
  if (as_json) std::cout << report::mx_stats_document(provenance(false, false), in, base, stats).dump(2) << "\n";
  else std::cout << report::mx_stats_text(base, stats);
  return 0;
}

// ---------------------------------------------------------------- gemm

Tensor read_matrix(const std::string& path) {
  Tensor t = read_inputs(path, "", false, false).front();
  if (t.shape.size() != 2) {
    throw core::InputError(core::Diagnostic{path, 0, "shape", "GEMM operands must be matrices",
                                            shape_string(t.shape), "a 2-D array", ""});
  }
  // A NaN or inf operand has no fp32 reference to compare against: the error figures would be
  // empty and read as an exact result.
  const auto bad = std::find_if(t.data.begin(), t.data.end(), [](float x) { return !std::isfinite(x); });
  if (bad != t.data.end()) {
    const auto i = bad - t.data.begin();
    throw core::InputError(core::Diagnostic{path, 0, "element " + std::to_string(i), "GEMM operands must be finite",
                                            std::isnan(*bad) ? "nan" : (*bad > 0 ? "inf" : "-inf"),
                                            "finite numbers", ""});
  }
  return t;
}

int gemm_cmd(const std::string& format, const std::string& format_b, const CommonOpts& common,
             const std::string& a_path, const std::string& b_path, const std::string& out,
             bool as_json) {
  QuantOptions oa = to_options(common);
  oa.format = parse_format(format);
  QuantOptions ob = oa;
  if (!format_b.empty()) ob.format = parse_format(format_b, "--format-b");
  oa.axis = 1;  // blocks along K for both operands
  ob.axis = 0;
  const Tensor a = read_matrix(a_path), b = read_matrix(b_path);
  if (a.shape[1] != b.shape[0]) {
    core::fail("B", "inner dimensions differ: A is " + shape_string(a.shape) + " (" + a_path +
                        "), B is " + shape_string(b.shape) + " (" + b_path + ")",
               std::to_string(b.shape[0]), std::to_string(a.shape[1]) + " rows in B");
  }
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  const double macs = static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  const double outputs = static_cast<double>(m) * static_cast<double>(n);
  if (macs > core::limits::kGemmMultiplyAdds || outputs > core::limits::kGemmOutputElements)
    core::fail("A, B", "GEMM too large for the reference product", shape_string(a.shape) + " x " + shape_string(b.shape),
               "at most 1e10 multiply-adds (M x K x N) and 2^28 output elements (M x N) (docs/errors.md, \"Limits\")");
  const QuantizedTensor qa = quantize(a.data.data(), a.shape, oa);
  const QuantizedTensor qb = quantize(b.data.data(), b.shape, ob);
  const std::vector<float> c = mx_gemm(qa, qb);
  const std::vector<float> ref = gemm_f32(a.data.data(), b.data.data(), m, k, n);
  if (!out.empty()) write_file(out, npy_bytes_f32({m, n}, c.data()));
  const report::MxGemmRun run{a_path, b_path, m, k, n, oa, ob, error_stats(ref.data(), c.data(), m * n)};
  if (as_json) std::cout << report::mx_gemm_document(provenance(false, false), run).dump(2) << "\n";
  else std::cout << report::mx_gemm_text(run);
  return 0;
}

}  // namespace

int run_mx(const Args& args) {
  CLI::App app{"OCP MX / NVFP4 block floating point: quantize, stats, gemm", "xpusim mx"};
  app.require_subcommand(1);
  const std::string formats = core::join(all_format_names());

  CommonOpts qc, sc, gc;
  std::string q_format, q_in, q_out, q_tensor, q_codes, q_scales;
  bool q_json = false;
  auto* q = app.add_subcommand("quantize", "quantise and dequantise a tensor to a block format");
  q->add_option("--format", q_format, "one of " + formats)->required();
  add_common(q, qc);
  q->add_option("IN", q_in, ".npy (float32/float64) or .safetensors (F32/F16/BF16)")->required();
  q->add_option("OUT", q_out, "dequantised tensor, float32 .npy")->required();
  q->add_option("--tensor", q_tensor, "tensor name in a .safetensors file");
  q->add_option("--codes", q_codes, "element codes, uint8 .npy of the input shape");
  q->add_option("--scales", q_scales, "block scale codes, uint8 .npy");
  q->add_flag("--json", q_json, "print one JSON document");

  std::string s_in, s_tensor;
  bool s_all = false, s_json = false;
  auto* s = app.add_subcommand("stats", "quantisation error of every format side by side");
  s->add_option("IN", s_in, ".npy or .safetensors")->required();
  auto* st = s->add_option("--tensor", s_tensor, "one tensor of a .safetensors file");
  s->add_flag("--all", s_all, "every tensor of a .safetensors file (the default)")->excludes(st);
  add_common(s, sc);
  s->add_flag("--json", s_json, "print one JSON document");

  std::string g_a, g_b, g_format, g_format_b, g_out;
  bool g_json = false;
  auto* g = app.add_subcommand("gemm", "MX GEMM A[M,K] x B[K,N] against fp32");
  g->add_option("A", g_a, "A[M,K] .npy")->required();
  g->add_option("B", g_b, "B[K,N] .npy")->required();
  g->add_option("--format", g_format, "format of A (and of B unless --format-b): " + formats)->required();
  g->add_option("--format-b", g_format_b, "format of B");
  g->add_option("--rounding", gc.rounding, "element rounding: even, nearest, floor");
  g->add_option("--scale-rule", gc.scale_rule, "block scale rule: ocp, trn3, rceil");
  g->add_option("--layout", gc.layout, "contiguous (blocks of K) or trn3");
  g->add_option("--out", g_out, "write C as float32 .npy");
  g->add_flag("--json", g_json, "print one JSON document");

  const int rc = parse(app, args);
  if (rc >= 0) return rc;
  if (q->parsed()) return quantize_cmd(q_format, qc, q_in, q_out, q_tensor, q_codes, q_scales, q_json);
  if (s->parsed()) return stats_cmd(sc, s_in, s_tensor, s_all, s_json);
  return gemm_cmd(g_format, g_format_b, gc, g_a, g_b, g_out, g_json);
}

}  // namespace xpusim::cli
