#include "xpusim/numerics/mx.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>

#include "kernels.h"
#include "xpusim/core/check.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"

namespace xpusim::numerics {

using detail::f2u;
using detail::u2f;

// ---------------------------------------------------------------- names and facts

const FormatInfo& format_info(Format f) {
  static const FormatInfo kInfo[] = {
      {"mxfp8_e4m3", ElementType::Fp8E4m3, 32, false},
      {"mxfp8_e5m2", ElementType::Fp8E5m2, 32, false},
      {"mxfp6_e3m2", ElementType::Fp6E3m2, 32, false},
      {"mxfp6_e2m3", ElementType::Fp6E2m3, 32, false},
      {"mxfp4_e2m1", ElementType::Fp4E2m1, 32, false},
      {"mxint8", ElementType::Int8, 32, false},
      {"nvfp4", ElementType::Fp4E2m1, 16, true},
  };
  return kInfo[static_cast<int>(f)];
}

const std::vector<Format>& all_formats() {
  static const std::vector<Format> kAll = {Format::Mxfp8E4m3, Format::Mxfp8E5m2,
                                           Format::Mxfp6E3m2, Format::Mxfp6E2m3,
                                           Format::Mxfp4E2m1, Format::Mxint8, Format::Nvfp4};
  return kAll;
}

std::vector<std::string> all_format_names() {
  std::vector<std::string> names;
  for (Format f : all_formats()) names.push_back(format_info(f).name);
  return names;
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

template <class E>
E parse_enum(const std::string& name, const std::string& field, const char* what,
             const std::vector<std::pair<std::string, E>>& table) {
  const std::string l = lower(name);
  std::vector<std::string> names;
  for (const auto& [n, v] : table) {
    if (n == l) return v;
    names.push_back(n);
  }
  core::fail(field, std::string("unknown ") + what, name, "one of " + core::join(names),
             core::did_you_mean(name, names));
}

}  // namespace

Format parse_format(const std::string& name, const std::string& field) {
  std::vector<std::pair<std::string, Format>> t;
  for (Format f : all_formats()) t.emplace_back(format_info(f).name, f);
  return parse_enum(name, field, "format", t);
}

Rounding parse_rounding(const std::string& name, const std::string& field) {
  return parse_enum<Rounding>(name, field, "rounding mode",
                              {{"even", Rounding::Even},
                               {"nearest", Rounding::Nearest},
                               {"floor", Rounding::Floor}});
}

ScaleRule parse_scale_rule(const std::string& name, const std::string& field) {
  return parse_enum<ScaleRule>(name, field, "scale rule",
                               {{"ocp", ScaleRule::Ocp}, {"trn3", ScaleRule::Trn3},
                                {"rceil", ScaleRule::Rceil}});
}

Layout parse_layout(const std::string& name, const std::string& field) {
  return parse_enum<Layout>(name, field, "block layout",
                            {{"contiguous", Layout::Contiguous}, {"trn3", Layout::Trn3}});
}

std::string scale_rule_name(ScaleRule r) {
  switch (r) {
    case ScaleRule::Ocp: return "ocp";
    case ScaleRule::Trn3: return "trn3";
    case ScaleRule::Rceil: return "rceil";
  }
  return "?";
}

std::string layout_name(Layout l) { return l == Layout::Contiguous ? "contiguous" : "trn3"; }

double bits_per_element(Format f, int64_t elements) {
  const FormatInfo& fi = format_info(f);
  double bits = element_info(fi.element).bits + 8.0 / fi.block_size;
  if (fi.nvfp4 && elements > 0) bits += 32.0 / static_cast<double>(elements);
  return bits;
}

float decode_e8m0(uint8_t code) {
  if (code == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  return detail::pow2f(static_cast<int>(code) - 127);
}

// ---------------------------------------------------------------- scale selection

namespace {

constexpr uint32_t kNonFinite = 0x7F800000u;

int zero_block_exponent(ElementType t, ScaleRule rule) {
  // Reference (OCP): log2 of FP32_MIN_NORMAL (-126) minus emax, clamped to -127.
  if (rule == ScaleRule::Ocp) return std::max(-126 - element_info(t).emax, -127);
  return -127;
}

int scale_exponent_bits(ElementType t, ScaleRule rule, uint32_t amax_bits) {
  const ElementInfo& in = element_info(t);
  const int fl = detail::floor_log2_bits(amax_bits);
  int s = fl - in.emax;
  if (rule == ScaleRule::Trn3) {
    s += 1;
  } else if (rule == ScaleRule::Rceil) {
    // ceil(log2(amax / max_normal)): amax = A 2^fl, max_normal = M 2^emax with A, M in [1, 2),
    // so the result is fl - emax, plus one when A > M.
    if (static_cast<double>(u2f(amax_bits)) > std::ldexp(in.max_normal, s)) s += 1;
  }
  return std::clamp(s, -127, 127);
}

uint8_t nan_code(ElementType t) { return element_info(t).has_nan ? 0x7F : 0x00; }

template <ElementType T, Rounding R>
uint8_t quant_block(const float* x, int n, uint8_t* codes, ScaleRule rule) {
  uint32_t amax = 0;
  for (int i = 0; i < n; ++i) amax = std::max(amax, f2u(x[i]) & 0x7FFFFFFFu);
  if (amax >= kNonFinite) {
    std::fill(codes, codes + n, nan_code(T));
    return 0xFF;
  }
  const int s = amax == 0 ? zero_block_exponent(T, rule) : scale_exponent_bits(T, rule, amax);
  for (int i = 0; i < n; ++i) codes[i] = detail::encode_scaled<T, R>(x[i], s);
  return static_cast<uint8_t>(s + 127);
}

template <class Fn>
void with_types(ElementType t, Rounding r, Fn&& fn) {
  auto by_r = [&]<ElementType T>() {
    switch (r) {
      case Rounding::Even: fn.template operator()<T, Rounding::Even>(); break;
      case Rounding::Nearest: fn.template operator()<T, Rounding::Nearest>(); break;
      case Rounding::Floor: fn.template operator()<T, Rounding::Floor>(); break;
    }
  };
  switch (t) {
    case ElementType::Fp8E4m3: by_r.template operator()<ElementType::Fp8E4m3>(); break;
    case ElementType::Fp8E5m2: by_r.template operator()<ElementType::Fp8E5m2>(); break;
    case ElementType::Fp6E3m2: by_r.template operator()<ElementType::Fp6E3m2>(); break;
    case ElementType::Fp6E2m3: by_r.template operator()<ElementType::Fp6E2m3>(); break;
    case ElementType::Fp4E2m1: by_r.template operator()<ElementType::Fp4E2m1>(); break;
    case ElementType::Int8: by_r.template operator()<ElementType::Int8>(); break;
  }
}

/// Value of every code of every element type (256 entries; codes above 2^bits repeat).
const std::array<float, 256>& lut(ElementType t) {
  static const auto kTables = [] {
    std::array<std::array<float, 256>, 6> tables{};
    for (int ti = 0; ti < 6; ++ti)
      for (int c = 0; c < 256; ++c)
        tables[ti][c] = decode_element(static_cast<ElementType>(ti), static_cast<uint8_t>(c));
    return tables;
  }();
  return kTables[static_cast<int>(t)];
}

}  // namespace

int mx_scale_exponent(ElementType t, ScaleRule rule, float amax) {
  XS_CHECK(std::isfinite(amax) && amax > 0, "amax must be finite and positive");
  return scale_exponent_bits(t, rule, f2u(amax) & 0x7FFFFFFFu);
}

uint8_t quantize_mx_block(ElementType t, const float* x, int n, uint8_t* codes,
                          Rounding rounding, ScaleRule rule) {
  uint8_t scale = 0;
  with_types(t, rounding, [&]<ElementType T, Rounding R>() {
    scale = quant_block<T, R>(x, n, codes, rule);
  });
  return scale;
}

void dequantize_mx_block(ElementType t, uint8_t scale, const uint8_t* codes, int n, float* out) {
  const auto& table = lut(t);
  if (scale == 0xFF) {
    std::fill(out, out + n, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  const float x = decode_e8m0(scale);
  for (int i = 0; i < n; ++i) out[i] = table[codes[i]] * x;
}

// ---------------------------------------------------------------- block geometry

namespace {

/// Which elements form each block of a tensor.
struct Geometry {
  std::vector<int64_t> shape;        // tensor shape (rank >= 1)
  std::vector<int64_t> strides;      // element strides
  std::vector<int64_t> scale_shape;  // blocks per dimension
  int64_t num_blocks = 0;
  Layout layout = Layout::Contiguous;
  int axis = 0;       // block (partition) axis
  int free_axis = -1; // Trn3 free axis, -1 when none
  int k = 32;         // block size (contiguous)
  int64_t outer = 1, len = 1, inner = 1, nb = 0;  // contiguous decomposition

  bool fast() const { return layout == Layout::Contiguous && inner == 1; }

  /// Fills idx with the element offsets of block bi; returns their count.
  int block(int64_t bi, int64_t* idx) const {
    if (layout == Layout::Contiguous) {
      const int64_t i = bi % inner;
      const int64_t ob = bi / inner;
      const int64_t b = ob % nb;
      const int64_t o = ob / nb;
      const int64_t base = o * len * inner + b * k * inner + i;
      const int n = static_cast<int>(std::min<int64_t>(k, len - b * k));
      for (int j = 0; j < n; ++j) idx[j] = base + j * inner;
      return n;
    }
    // Trn3: decompose bi over scale_shape (row-major).
    const int rank = static_cast<int>(shape.size());
    int64_t base = 0;
    int64_t rem = bi;
    int64_t pa = 0, pf = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t c = rem % scale_shape[d];
      rem /= scale_shape[d];
      int64_t start = c;
      if (d == axis) start = c * 8, pa = start;
      else if (d == free_axis) start = c * 4, pf = start;
      base += start * strides[d];
    }
    const int64_t na = std::min<int64_t>(8, shape[axis] - pa);
    const int64_t nf = free_axis >= 0 ? std::min<int64_t>(4, shape[free_axis] - pf) : 1;
    const int64_t sf = free_axis >= 0 ? strides[free_axis] : 0;
    int n = 0;
    for (int64_t p = 0; p < na; ++p)
      for (int64_t q = 0; q < nf; ++q) idx[n++] = base + p * strides[axis] + q * sf;
    return n;
  }
};

Geometry make_geometry(const std::vector<int64_t>& shape_in, Layout layout, int axis_in, int k) {
  Geometry g;
  g.shape = shape_in.empty() ? std::vector<int64_t>{1} : shape_in;
  g.layout = layout;
  g.k = k;
  const int rank = static_cast<int>(g.shape.size());
  const int rank_in = static_cast<int>(shape_in.size());
  int axis = axis_in;
  if (axis < 0) axis += std::max(rank_in, 1);
  if (axis < 0 || axis >= rank) {
    core::fail("--axis", "block axis out of range", std::to_string(axis_in),
               "an axis of a rank-" + std::to_string(rank_in) + " tensor, -" +
                   std::to_string(std::max(rank_in, 1)) + ".." + std::to_string(std::max(rank_in, 1) - 1));
  }
  for (int64_t d : g.shape) XS_CHECK(d >= 0, "negative dimension");
  g.axis = axis;
  // A tensor with no elements has nothing to walk, however long its other axes ((3753193637, 0),
  // or (0, 115, 751321, 694, 751321, 344) from an .npy header: fuzz_npy): its products are 0
  // rather than overflowing. Otherwise every product is bounded by the element count.
  const bool empty = std::find(g.shape.begin(), g.shape.end(), 0) != g.shape.end();
  const auto times = [empty](int64_t a, int64_t b) { return empty ? int64_t{0} : a * b; };
  g.strides.assign(rank, 1);
  for (int d = rank - 2; d >= 0; --d) g.strides[d] = times(g.strides[d + 1], g.shape[d + 1]);
  g.scale_shape = g.shape;
  if (layout == Layout::Contiguous) {
    for (int d = 0; d < axis; ++d) g.outer = times(g.outer, g.shape[d]);
    if (empty) g.outer = 0;
    g.len = g.shape[axis];
    for (int d = axis + 1; d < rank; ++d) g.inner = times(g.inner, g.shape[d]);
    g.nb = (g.len + k - 1) / k;
    g.scale_shape[axis] = g.nb;
  } else {
    if (rank >= 2) g.free_axis = axis == rank - 1 ? rank - 2 : rank - 1;
    g.scale_shape[axis] = (g.shape[axis] + 7) / 8;
    if (g.free_axis >= 0) g.scale_shape[g.free_axis] = (g.shape[g.free_axis] + 3) / 4;
  }
  g.num_blocks = 1;
  for (int64_t d : g.scale_shape) g.num_blocks = times(g.num_blocks, d);
  return g;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// ---------------------------------------------------------------- NVFP4

float nvfp4_tensor_scale(const float* x, int64_t n) {
  uint32_t amax = 0;
  for (int64_t i = 0; i < n; ++i) amax = std::max(amax, f2u(x[i]) & 0x7FFFFFFFu);
  if (amax >= kNonFinite) return 1.0f;
  const float ts = u2f(amax) / (448.0f * 6.0f);
  return ts > 0 && std::isfinite(ts) ? ts : 1.0f;
}

/// One NVFP4 block (torchao nvfp4_quantize order of operations, in fp32).
template <Rounding R>
uint8_t nvfp4_block(const float* x, int n, uint8_t* codes, float ts, ScaleRule rule) {
  uint32_t amax = 0;
  for (int i = 0; i < n; ++i) amax = std::max(amax, f2u(x[i]) & 0x7FFFFFFFu);
  if (amax >= kNonFinite) {
    std::fill(codes, codes + n, uint8_t{0});
    return 0x7F;  // E4M3 NaN
  }
  float bs = u2f(amax) / 6.0f;
  bs = bs / ts;
  bs = std::clamp(bs, 0.015625f, 448.0f);  // [E4M3 min normal, max normal]
  uint8_t sc;
  if (rule == ScaleRule::Rceil) {  // round the scale up (cuDNN)
    sc = detail::encode_scaled<ElementType::Fp8E4m3, Rounding::Floor>(bs, 0);
    if (decode_element(ElementType::Fp8E4m3, sc) < bs) ++sc;
  } else {
    sc = detail::encode_scaled<ElementType::Fp8E4m3, Rounding::Even>(bs, 0);
  }
  const float total = ts * decode_element(ElementType::Fp8E4m3, sc);
  for (int i = 0; i < n; ++i)
    codes[i] = detail::encode_scaled<ElementType::Fp4E2m1, R>(x[i] / total, 0);
  return sc;
}

template <class Fn>
void for_each_block(const Geometry& g, Fn&& fn) {
  std::array<int64_t, 32> idx{};
  for (int64_t bi = 0; bi < g.num_blocks; ++bi) {
    const int n = g.block(bi, idx.data());
    fn(bi, idx.data(), n);
  }
}

}  // namespace

// ---------------------------------------------------------------- tensors

QuantizedTensor quantize(const float* x, const std::vector<int64_t>& shape,
                         const QuantOptions& options) {
  const FormatInfo& fi = format_info(options.format);
  if (fi.nvfp4 && options.layout == Layout::Trn3) {
    core::fail("--layout", "the trn3 block layout applies to MX formats only", "trn3",
               "contiguous for nvfp4");
  }
  const Geometry g = make_geometry(shape, options.layout, options.axis, fi.block_size);
  QuantizedTensor q;
  q.options = options;
  q.shape = shape;
  q.scale_shape = shape.empty() ? g.scale_shape : g.scale_shape;
  const int64_t n = numel(shape);
  q.codes.resize(static_cast<size_t>(n));
  q.scales.resize(static_cast<size_t>(g.num_blocks));
  uint8_t* codes = q.codes.data();
  uint8_t* scales = q.scales.data();
  std::array<float, 32> buf{};
  std::array<uint8_t, 32> cbuf{};

  if (fi.nvfp4) {
    q.tensor_scale = options.nvfp4_tensor_scale ? *options.nvfp4_tensor_scale
                                                : nvfp4_tensor_scale(x, n);
    if (!(q.tensor_scale > 0) || !std::isfinite(q.tensor_scale)) {
      core::fail("nvfp4_tensor_scale", "per-tensor scale must be positive and finite",
                 std::to_string(q.tensor_scale), "a positive finite fp32 value");
    }
    with_types(ElementType::Fp4E2m1, options.rounding, [&]<ElementType T, Rounding R>() {
      for_each_block(g, [&](int64_t bi, const int64_t* idx, int m) {
        if (g.fast()) {
          scales[bi] = nvfp4_block<R>(x + idx[0], m, codes + idx[0], q.tensor_scale,
                                      options.scale_rule);
          return;
        }
        for (int j = 0; j < m; ++j) buf[j] = x[idx[j]];
        scales[bi] = nvfp4_block<R>(buf.data(), m, cbuf.data(), q.tensor_scale,
                                    options.scale_rule);
        for (int j = 0; j < m; ++j) codes[idx[j]] = cbuf[j];
      });
    });
    return q;
  }

  with_types(fi.element, options.rounding, [&]<ElementType T, Rounding R>() {
    if (g.fast()) {
      // Row-contiguous blocks: no gather.
      for (int64_t o = 0; o < g.outer; ++o) {
        for (int64_t b = 0; b < g.nb; ++b) {
          const int64_t start = o * g.len + b * g.k;
          const int m = static_cast<int>(std::min<int64_t>(g.k, g.len - b * g.k));
          scales[o * g.nb + b] = quant_block<T, R>(x + start, m, codes + start,
                                                   options.scale_rule);
        }
      }
      return;
    }
    for_each_block(g, [&](int64_t bi, const int64_t* idx, int m) {
      for (int j = 0; j < m; ++j) buf[j] = x[idx[j]];
      scales[bi] = quant_block<T, R>(buf.data(), m, cbuf.data(), options.scale_rule);
      for (int j = 0; j < m; ++j) codes[idx[j]] = cbuf[j];
    });
  });
  return q;
}

std::vector<float> dequantize(const QuantizedTensor& q) {
  const FormatInfo& fi = format_info(q.options.format);
  const Geometry g = make_geometry(q.shape, q.options.layout, q.options.axis, fi.block_size);
  std::vector<float> out(q.codes.size());
  XS_CHECK(q.scales.size() == static_cast<size_t>(g.num_blocks), "scale count mismatch");
  const auto& table = lut(fi.element);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto block_scale = [&](int64_t bi) -> float {
    const uint8_t s = q.scales[bi];
    if (fi.nvfp4) return decode_element(ElementType::Fp8E4m3, s);
    return decode_e8m0(s);
  };
  if (g.fast() && !fi.nvfp4) {
    for (int64_t o = 0; o < g.outer; ++o) {
      for (int64_t b = 0; b < g.nb; ++b) {
        const int64_t start = o * g.len + b * g.k;
        const int m = static_cast<int>(std::min<int64_t>(g.k, g.len - b * g.k));
        dequantize_mx_block(fi.element, q.scales[o * g.nb + b], q.codes.data() + start, m,
                            out.data() + start);
      }
    }
    return out;
  }
  for_each_block(g, [&](int64_t bi, const int64_t* idx, int m) {
    const float x = block_scale(bi);
    for (int j = 0; j < m; ++j) {
      const float v = std::isnan(x) ? nan : table[q.codes[idx[j]]] * x;
      out[idx[j]] = fi.nvfp4 ? v * q.tensor_scale : v;
    }
  });
  return out;
}

std::vector<float> fake_quantize(const float* x, const std::vector<int64_t>& shape,
                                 const QuantOptions& options) {
  return dequantize(quantize(x, shape, options));
}

// ---------------------------------------------------------------- dot products and GEMM

float mx_dot_block(ElementType ta, uint8_t scale_a, const uint8_t* codes_a, ElementType tb,
                   uint8_t scale_b, const uint8_t* codes_b, int n) {
  if (scale_a == 0xFF || scale_b == 0xFF) return std::numeric_limits<float>::quiet_NaN();
  const auto& la = lut(ta);
  const auto& lb = lut(tb);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += la[codes_a[i]] * lb[codes_b[i]];
  return std::ldexp(sum, (static_cast<int>(scale_a) - 127) + (static_cast<int>(scale_b) - 127));
}

std::vector<float> gemm_f32(const float* a, const float* b, int64_t m, int64_t k, int64_t n) {
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    float* row = c.data() + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float av = a[i * k + kk];
      const float* brow = b + kk * n;
      for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
    }
  }
  return c;
}

std::vector<float> mx_gemm(const QuantizedTensor& a, const QuantizedTensor& b) {
  if (a.shape.size() != 2 || b.shape.size() != 2) {
    core::fail("gemm", "operands must be matrices", std::to_string(a.shape.size()) + "-D and " +
               std::to_string(b.shape.size()) + "-D", "A[M,K] and B[K,N]");
  }
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  if (b.shape[0] != k) {
    core::fail("gemm", "inner dimensions differ", std::to_string(k) + " vs " +
               std::to_string(b.shape[0]), "A[M,K] x B[K,N]");
  }
  const FormatInfo& fa = format_info(a.options.format);
  const FormatInfo& fb = format_info(b.options.format);
  const auto norm = [](int axis) { return axis < 0 ? axis + 2 : axis; };
  const bool blockwise = a.options.layout == Layout::Contiguous &&
                         b.options.layout == Layout::Contiguous && norm(a.options.axis) == 1 &&
                         norm(b.options.axis) == 0 && fa.block_size == fb.block_size &&
                         fa.nvfp4 == fb.nvfp4;
  if (!blockwise) {
    const std::vector<float> da = dequantize(a), db = dequantize(b);
    return gemm_f32(da.data(), db.data(), m, k, n);
  }
  const int bs = fa.block_size;
  const int64_t nb = (k + bs - 1) / bs;
  // Element values: A row-major [M,K]; B transposed to [N,K] so a block is contiguous.
  const auto& la = lut(fa.element);
  const auto& lb = lut(fb.element);
  std::vector<float> av(static_cast<size_t>(m * k)), bt(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < m * k; ++i) av[i] = la[a.codes[i]];
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) bt[j * k + kk] = lb[b.codes[kk * n + j]];
  // Block scales: A scale_shape [M, nb]; B scale_shape [nb, N].
  auto scale_value = [&](const FormatInfo& f, uint8_t s) {
    return f.nvfp4 ? decode_element(ElementType::Fp8E4m3, s) : decode_e8m0(s);
  };
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t blk = 0; blk < nb; ++blk) {
        const int64_t k0 = blk * bs;
        const int64_t k1 = std::min<int64_t>(k, k0 + bs);
        float sum = 0.0f;
        for (int64_t kk = k0; kk < k1; ++kk) sum += av[i * k + kk] * bt[j * k + kk];
        const uint8_t sa = a.scales[i * nb + blk], sb = b.scales[blk * n + j];
        float part;
        if (fa.nvfp4) {
          part = sum * (scale_value(fa, sa) * scale_value(fb, sb));
        } else if (sa == 0xFF || sb == 0xFF) {
          part = std::numeric_limits<float>::quiet_NaN();
        } else {
          part = std::ldexp(sum, (static_cast<int>(sa) - 127) + (static_cast<int>(sb) - 127));
        }
        acc += part;
      }
      if (fa.nvfp4) acc *= a.tensor_scale * b.tensor_scale;
      c[i * n + j] = acc;
    }
  }
  return c;
}

}  // namespace xpusim::numerics
