// Tensor-level quantisation: block layouts (contiguous along an axis, Trainium3 8x4), ragged
// tails, NVFP4, GEMM, and the .npy / .safetensors readers with their diagnostics.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "../../npy_bytes.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/numerics/mx.h"
#include "xpusim/numerics/stats.h"
#include "xpusim/numerics/tensor_io.h"

namespace xpusim::numerics {
namespace {

std::string error_text(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const core::InputError& e) {
    std::string s;
    for (const auto& d : e.diagnostics()) s += d.to_string() + "\n";
    return s;
  }
  return "<no error>";
}

TEST(MxTensor, ContiguousAlongLastAxisWithRaggedTail) {
  // 2 rows of 40: blocks [0,32) and [32,40) per row -> scale shape [2, 2].
  std::vector<float> x(80);
  for (int i = 0; i < 80; ++i) x[i] = static_cast<float>(i % 40 + 1) * (i < 40 ? 1.0f : 16.0f);
  const QuantizedTensor q = quantize(x.data(), {2, 40}, QuantOptions{});
  EXPECT_EQ(q.scale_shape, (std::vector<int64_t>{2, 2}));
  // OCP E4M3: s = floor(log2 amax) - 8; amax = 32, 40, 512, 640.
  const std::vector<uint8_t> want = {127 + 5 - 8, 127 + 5 - 8, 127 + 9 - 8, 127 + 9 - 8};
  EXPECT_EQ(q.scales, want);
}

TEST(MxTensor, ContiguousAlongFirstAxisUsesColumns) {
  // [64, 3], axis 0: column j's two blocks have amax 2^j * 32 and 2^j * 64.
  std::vector<float> x(64 * 3);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 3; ++c) x[r * 3 + c] = std::ldexp(static_cast<float>(r + 1), c);
  QuantOptions o;
  o.axis = 0;
  const QuantizedTensor q = quantize(x.data(), {64, 3}, o);
  EXPECT_EQ(q.scale_shape, (std::vector<int64_t>{2, 3}));
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(q.scales[b * 3 + c], 127 + (5 + b + c) - 8);
  // 4-bit significands (r + 1 <= 16) are exact in E4M3.
  const std::vector<float> y = dequantize(q);
  for (int i = 0; i < 16 * 3; ++i) EXPECT_EQ(y[i], x[i]) << i;
}

TEST(MxTensor, Trn3LayoutGroupsEightPartitionsByFourElements) {
  // [16, 8] with axis 0 as the partition axis: groups are rows 8r..8r+7 x columns 4c..4c+3.
  // Put a distinct maximum 2^(g+3) in each group g = 2r + c, everything else 1.
  std::vector<float> x(16 * 8, 1.0f);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c) x[(8 * r + 7) * 8 + 4 * c + 3] = std::ldexp(1.0f, 2 * r + c + 3);
  QuantOptions o;
  o.layout = Layout::Trn3;
  o.axis = 0;
  o.scale_rule = ScaleRule::Trn3;
  const QuantizedTensor q = quantize(x.data(), {16, 8}, o);
  EXPECT_EQ(q.scale_shape, (std::vector<int64_t>{2, 2}));
  // Trn3 rule: s = floor(log2 amax) - (8 - 1).
  for (int g = 0; g < 4; ++g) EXPECT_EQ(q.scales[g], 127 + (g + 3) - 7) << g;
  EXPECT_EQ(dequantize(q), x);
  // The same tensor in contiguous rows of 8 has one block per row instead.
  QuantOptions c;
  EXPECT_EQ(quantize(x.data(), {16, 8}, c).scale_shape, (std::vector<int64_t>{16, 1}));
}

TEST(MxTensor, Trn3LayoutDefaultAxisPutsPartitionsOnLastAxis) {
  // [4, 16] with axis -1: partitions along columns (8), free along rows (4).
  std::vector<float> x(64, 1.0f);
  QuantOptions o;
  o.layout = Layout::Trn3;
  const QuantizedTensor q = quantize(x.data(), {4, 16}, o);
  EXPECT_EQ(q.scale_shape, (std::vector<int64_t>{1, 2}));
}

TEST(MxTensor, AxisOutOfRangeIsAnInputError) {
  std::vector<float> x(4);
  QuantOptions o;
  o.axis = 2;
  const std::string msg = error_text([&] { quantize(x.data(), {2, 2}, o); });
  EXPECT_NE(msg.find("--axis: block axis out of range (got '2'"), std::string::npos) << msg;
}

TEST(MxTensor, Nvfp4TwoLevelScaling) {
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<float> x(64);
  for (float& v : x) v = nd(rng);
  QuantOptions o;
  o.format = Format::Nvfp4;
  const QuantizedTensor q = quantize(x.data(), {64}, o);
  float amax = 0;
  for (float v : x) amax = std::max(amax, std::fabs(v));
  EXPECT_EQ(q.tensor_scale, amax / (448.0f * 6.0f));
  EXPECT_EQ(q.scales.size(), 4u);
  const auto st = quant_stats(x.data(), {64}, o);
  EXPECT_GT(st.error.snr_db, 10.0);
  EXPECT_DOUBLE_EQ(st.bits_per_element, 4.5 + 32.0 / 64);
}

TEST(MxGemm, MatchesPerBlockFormulaAndIsCloseToFp32) {
  const int64_t m = 3, k = 70, n = 5;
  std::mt19937 rng(9);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> a(m * k), b(k * n);
  for (float& v : a) v = nd(rng);
  for (float& v : b) v = nd(rng);
  QuantOptions oa, ob;
  ob.axis = 0;
  const QuantizedTensor qa = quantize(a.data(), {m, k}, oa), qb = quantize(b.data(), {k, n}, ob);
  const std::vector<float> c = mx_gemm(qa, qb);
  // Expected: sum over blocks of mx_dot_block, accumulated in fp32 in block order.
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t blk = 0; blk < 3; ++blk) {
        const int64_t k0 = blk * 32, len = std::min<int64_t>(32, k - k0);
        std::vector<uint8_t> bc(len);
        for (int64_t t = 0; t < len; ++t) bc[t] = qb.codes[(k0 + t) * n + j];
        acc += mx_dot_block(ElementType::Fp8E4m3, qa.scales[i * 3 + blk], &qa.codes[i * k + k0],
                            ElementType::Fp8E4m3, qb.scales[blk * n + j], bc.data(),
                            static_cast<int>(len));
      }
      EXPECT_EQ(c[i * n + j], acc);
    }
  const std::vector<float> ref = gemm_f32(a.data(), b.data(), m, k, n);
  EXPECT_GT(error_stats(ref.data(), c.data(), m * n).snr_db, 25.0);
}

TEST(MxGemm, ShapeMismatchIsAnInputError) {
  std::vector<float> a(6), b(6);
  QuantOptions o;
  const auto qa = quantize(a.data(), {2, 3}, o), qb = quantize(b.data(), {2, 3}, o);
  EXPECT_NE(error_text([&] { mx_gemm(qa, qb); }).find("inner dimensions differ"), std::string::npos);
}

TEST(MxNames, UnknownFormatSuggestsClosest) {
  const std::string msg = error_text([] { parse_format("mxfp8_e4m2"); });
  EXPECT_NE(msg.find("--format: unknown format (got 'mxfp8_e4m2'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'mxfp8_e4m3'?"), std::string::npos) << msg;
  EXPECT_EQ(parse_format("NVFP4"), Format::Nvfp4);
  EXPECT_EQ(parse_rounding("floor"), Rounding::Floor);
  EXPECT_EQ(parse_scale_rule("rceil"), ScaleRule::Rceil);
  EXPECT_EQ(parse_layout("trn3"), Layout::Trn3);
  EXPECT_NE(error_text([] { parse_layout("contigous"); }).find("did you mean 'contiguous'?"),
            std::string::npos);
}

TEST(MxNames, BitsPerElementIncludeScales) {
  // element bits + 8 scale bits per 32 (MX) or per 16 (NVFP4).
  EXPECT_EQ(bits_per_element(Format::Mxfp8E4m3), 8.25);
  EXPECT_EQ(bits_per_element(Format::Mxfp6E2m3), 6.25);
  EXPECT_EQ(bits_per_element(Format::Mxfp4E2m1), 4.25);
  EXPECT_EQ(bits_per_element(Format::Nvfp4), 4.5);
}

// ---------------------------------------------------------------- files

std::string npy_with_header(const std::string& dict, const std::string& data) { return test::npy_file(dict, data); }

TEST(TensorIo, NpyRoundTripFloat32AndFloat64) {
  const std::vector<float> v = {1.5f, -2.0f, 0.25f, 3.0f, 5.0f, 6.0f};
  const Tensor t = parse_npy(npy_bytes_f32({2, 3}, v.data()), "x.npy");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.data, v);
  const std::vector<double> d = {0.1, -1e10};
  std::string raw(reinterpret_cast<const char*>(d.data()), 16);
  const Tensor t2 = parse_npy(
      npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", raw), "d.npy");
  EXPECT_EQ(t2.data, (std::vector<float>{0.1f, -1e10f}));
  const Tensor t3 = parse_npy(npy_bytes_f32({}, v.data()), "s.npy");
  EXPECT_TRUE(t3.shape.empty());
  EXPECT_EQ(t3.data.size(), 1u);
}

TEST(TensorIo, NpyDiagnostics) {
  struct Case {
    std::string name, bytes, expect;
  };
  const std::string ok = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  const std::vector<Case> cases = {
      {"not npy", "hello", "x.npy: npy magic: not a NumPy .npy file"},
      {"int dtype", npy_with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", "abcd"),
       "x.npy: npy header.descr: unsupported dtype (got '<i4'; expected float32 ('<f4') or float64"},
      {"fortran", npy_with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "abcd"),
       "only C-order arrays are supported (got 'True'"},
      {"truncated data", npy_with_header(ok, "abcdefgh"),
       "x.npy: npy data: file truncated (got '8 data bytes'; expected 16 bytes for shape [4] of float32)"},
      {"truncated header", std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "file truncated in the header"},
      {"bad shape", npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", ""),
       "npy header.shape: malformed shape"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_text([&] { parse_npy(c.bytes, "x.npy"); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
  }
}

std::string safetensors(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + data;
}

TEST(TensorIo, SafetensorsF32F16Bf16) {
  // F32 [1.5, -2]; F16 1.0 = 0x3C00, -0.5 = 0xB800; BF16 3.0 = 0x4040.
  std::string data;
  const float f[2] = {1.5f, -2.0f};
  data.append(reinterpret_cast<const char*>(f), 8);
  const uint16_t h[3] = {0x3C00, 0xB800, 0x4040};
  data.append(reinterpret_cast<const char*>(h), 6);
  const std::string hdr =
      R"({"__metadata__":{"a":"b"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("h":{"dtype":"F16","shape":[2,1],"data_offsets":[8,12]},)"
      R"("b":{"dtype":"BF16","shape":[1],"data_offsets":[12,14]}})";
  const std::string file = safetensors(hdr, data);
  EXPECT_EQ(safetensors_names(file, "m.safetensors"), (std::vector<std::string>{"w", "h", "b"}));
  EXPECT_EQ(parse_safetensors(file, "m.safetensors", "w").data, (std::vector<float>{1.5f, -2.0f}));
  const Tensor th = parse_safetensors(file, "m.safetensors", "h");
  EXPECT_EQ(th.shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(th.data, (std::vector<float>{1.0f, -0.5f}));
  EXPECT_EQ(parse_safetensors(file, "m.safetensors", "b").data, (std::vector<float>{3.0f}));
  const std::string msg = error_text([&] { parse_safetensors(file, "m.safetensors", "ww"); });
  EXPECT_NE(msg.find("m.safetensors: --tensor: no tensor of that name (got 'ww'; expected one of w, h, b; did you mean 'w'?)"),
            std::string::npos) << msg;
}

TEST(TensorIo, SafetensorsDiagnostics) {
  struct Case {
    std::string name, bytes, tensor, expect;
  };
  const std::vector<Case> cases = {
      {"short", "abc", "w", "m.st: safetensors header: file truncated"},
      {"bad len", safetensors("{}", "").substr(0, 8) + "x", "w", "header length exceeds the file"},
      {"bad json", safetensors("{\"w\":", ""), "w", "malformed JSON header"},
      {"dtype", safetensors(R"({"w":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})", "abcd"), "w",
       "tensor 'w'.dtype: unsupported dtype (got 'I32'; expected F32, F16 or BF16)"},
      {"size", safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "abcd"), "w",
       "size does not match dtype and shape"},
      {"truncated", safetensors(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", "abcd"), "w",
       "tensor 'w': file truncated"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_text([&] { parse_safetensors(c.bytes, "m.st", c.tensor); });
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.name << ": " << msg;
  }
}

std::string npy_with_shape(const std::string& shape, const std::string& data = "") {
  return test::npy_file(test::npy_dict("<f4", shape), data);
}

TEST(TensorIoLimits, NpyShapesThatOverflowOrExceedTheLimitsAreDiagnosed) {
  // 2^32 · 2^32 · 16 wraps to 0 elements in int64 arithmetic: it must not read as an empty array.
  for (const char* shape : {"(4294967296, 4294967296, 16)", "(100000000000,)", "(99999999999999999999999,)",
                            "(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)"}) {
    const std::string msg = error_text([&] { parse_npy(npy_with_shape(shape), "x.npy"); });
    EXPECT_NE(msg, "<no error>") << shape;
    EXPECT_NE(msg.find("x.npy: npy header.shape"), std::string::npos) << msg;
  }
  const Tensor empty = parse_npy(npy_with_shape("(0, 4)"), "e.npy");  // zero elements: no memcpy of null
  EXPECT_TRUE(empty.data.empty());
}

TEST(TensorIoLimits, SafetensorsOffsetsAndShapesThatOverflowAreDiagnosed) {
  const struct { const char* header; const char* want; } cases[] = {
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[18446744073709551608,0]}})", "data_offsets"},
      {R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}})", "data_offsets"},
      {R"({"w":{"dtype":"F32","shape":[9223372036854775807,4],"data_offsets":[0,0]}})", "shape"},
      {R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", "shape"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_text([&] { parse_safetensors(safetensors(c.header, "abcd"), "m.st", "w"); });
    EXPECT_NE(msg.find(c.want), std::string::npos) << c.header << " -> " << msg;
  }
  const std::string deep = safetensors(std::string(100000, '['), "");
  EXPECT_NE(error_text([&] { safetensors_names(deep, "d.st"); }).find("nesting depth"), std::string::npos);
}

TEST(TensorIoLimits, TwentyThousandTensorsParseTheHeaderOnce) {
  constexpr int kTensors = 20000;
  std::string header = "{", data;
  for (int i = 0; i < kTensors; ++i) {
    header += (i ? "," : "") + std::string("\"t") + std::to_string(i) + "\":{\"dtype\":\"F32\",\"shape\":[1],"
              "\"data_offsets\":[" + std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
    const float v = static_cast<float>(i);
    data.append(reinterpret_cast<const char*>(&v), 4);
  }
  const std::string bytes = safetensors(header + "}", data);
  const auto start = std::chrono::steady_clock::now();
  const SafetensorsFile file(bytes, "many.st");
  const std::vector<std::string> names = file.names();
  double sum = 0;
  for (const auto& n : names) sum += file.tensor(n).data.at(0);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(names.size(), static_cast<size_t>(kTensors));
  EXPECT_EQ(names[12345], "t12345");  // file (offset) order
  EXPECT_EQ(sum, 0.5 * kTensors * (kTensors - 1));
  EXPECT_LT(secs, 5.0);  // parsing the ~1.3 MB header once per tensor took minutes
}

TEST(QuantStats, NoFiniteReferenceIsNotAnExactResult) {
  const float ref[2] = {NAN, INFINITY};
  const float approx[2] = {NAN, INFINITY};
  const ErrorStats e = error_stats(ref, approx, 2);
  EXPECT_EQ(e.elements, 0);
  EXPECT_TRUE(std::isnan(e.snr_db));  // not +inf ("exact")
}

TEST(TensorIo, Bf16AndFp16ConversionsAreExact) {
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0f);
  EXPECT_EQ(fp16_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(fp16_to_float(0x7BFF), 65504.0f);
  EXPECT_TRUE(std::isinf(fp16_to_float(0xFC00)));
}

TEST(QuantStats, ExactTensorHasInfiniteSnrAndSaturationIsCounted) {
  const std::vector<float> x = {1, 2, 4, 0.5f};
  QuantOptions o;
  const auto st = quant_stats(x.data(), {4}, o);
  EXPECT_EQ(st.error.rmse, 0.0);
  EXPECT_TRUE(std::isinf(st.error.snr_db));
  // FP4 OCP: 7.9 saturates to 6 (1 of 5), 0.2 flushes to 0 (1 of 5) — §1.9 example.
  const std::vector<float> d = {7.9f, 1, -3.3f, 0.5f, 0.2f};
  o.format = Format::Mxfp4E2m1;
  const auto s4 = quant_stats(d.data(), {5}, o);
  EXPECT_DOUBLE_EQ(s4.saturated_fraction, 0.2);
  EXPECT_DOUBLE_EQ(s4.flushed_fraction, 0.2);
  EXPECT_DOUBLE_EQ(s4.error.max_abs_error, static_cast<double>(7.9f) - 6.0);
}

}  // namespace
/// A .npy file whose header is `dict` (padded), with no data.
std::string npy_with_header(const std::string& dict) {
  std::string h = dict;
  h.resize(118, ' ');
  h += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size() & 0xff) +
         static_cast<char>(h.size() >> 8) + h;
}

/// A string literal with its embedded NULs, without the terminating one.
template <std::size_t N>
std::string with_nuls(const char (&literal)[N]) {
  return std::string(literal, N - 1);
}

// A NUL inside a shape item ended its C string early, so "0037\0 6" read as 37 and "\0 4" as 0
// (found by fuzz_npy): every item must be digits to its end.
TEST(Npy, AShapeItemWithANulInsideIsMalformed) {
  const std::string bad = npy_with_header(with_nuls("{'descr': '<f4', 'fortran_order': False, 'shape': (37\0 6, 4), }"));
  EXPECT_THROW(parse_npy(bad, "bad.npy"), core::InputError);
  const std::string empty_item = npy_with_header(with_nuls("{'descr': '<f4', 'fortran_order': False, 'shape': (3, \0 4), }"));
  EXPECT_THROW(parse_npy(empty_item, "bad.npy"), core::InputError);
}

// An empty tensor with a long axis, (3,753,193,637, 0), has no blocks: quantising it walks no rows
// along either axis (it used to walk 3.75e9 empty rows, a hang found by fuzz_npy).
TEST(MxTensor, AnEmptyTensorWithALongAxisHasNoRowsToWalk) {
  const Tensor t = parse_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (3753193637, 0), }"),
                             "empty.npy");
  ASSERT_EQ(t.data.size(), 0u);
  for (int axis : {-1, 0}) {
    QuantOptions o;
    o.format = Format::Mxfp4E2m1;
    o.axis = axis;
    const auto start = std::chrono::steady_clock::now();
    const QuantizedTensor q = quantize(t.data.data(), t.shape, o);
    EXPECT_TRUE(q.codes.empty());
    EXPECT_TRUE(dequantize(q).empty());
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 1.0);
  }
}

// An empty tensor whose other axes multiply past int64, (0, 115, 751321, 694, 751321, 344): its
// strides, rows and block count used to overflow (UBSan, found by fuzz_npy in CI); it has no blocks
// in either layout.
TEST(MxTensor, AnEmptyTensorWhoseAxesOverflowHasNoBlocks) {
  const Tensor t = parse_npy(
      npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 115, 751321, 694, 751321, 344), }"),
      "empty.npy");
  ASSERT_EQ(t.data.size(), 0u);
  for (Layout layout : {Layout::Contiguous, Layout::Trn3}) {
    for (int axis : {-1, 0, 2}) {
      QuantOptions o;
      o.format = Format::Mxfp8E4m3;
      o.layout = layout;
      o.axis = axis;
      const QuantizedTensor q = quantize(t.data.data(), t.shape, o);
      EXPECT_TRUE(q.codes.empty());
      EXPECT_TRUE(q.scales.empty());
      EXPECT_TRUE(dequantize(q).empty());
    }
  }
}

}  // namespace xpusim::numerics
