// End-to-end tests of `xpusim mx`: quantize/stats/gemm outputs and every input diagnostic.
// Fixtures (.npy, .safetensors) are written by the tests into a temporary directory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../npy_bytes.h"
#include "cli_runner.h"

namespace {

using xpusim::test::run_cli;

std::string tmp(const std::string& name) { return testing::TempDir() + "xs_mx_" + name; }

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// .npy v1.0 with the given descr and shape text, e.g. ("<f4", "(2, 3)").
std::string npy(const std::string& descr, const std::string& shape, const std::string& data) {
  return xpusim::test::npy_file(xpusim::test::npy_dict(descr, shape), data);
}

std::string f32(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

/// The payload of a float32 .npy written by the CLI (header length from bytes 8-9).
std::vector<float> read_f32(const std::string& path) {
  const std::string b = slurp(path);
  if (b.size() < 10) return {};
  const size_t off = 10 + static_cast<unsigned char>(b[8]) + 256u * static_cast<unsigned char>(b[9]);
  std::vector<float> v((b.size() - off) / 4);
  std::memcpy(v.data(), b.data() + off, v.size() * 4);
  return v;
}

TEST(MxCli, QuantizeWritesDequantisedCodesAndScales) {
  // §1.10 example 1 padded to 8 elements: nearest rounding gives 416 for 400.
  const std::vector<float> x = {485, 475, 400, -485, -475, -450, 0.015625f, -0.015625f};
  write(tmp("ex1.npy"), npy("<f4", "(2, 4)", f32(x)));
  const auto r = run_cli("mx quantize --format mxfp8_e4m3 --rounding nearest " + tmp("ex1.npy") + " " +
                         tmp("ex1_out.npy") + " --codes " + tmp("ex1_c.npy") + " --scales " +
                         tmp("ex1_s.npy") + " --axis 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Axis 0: columns are blocks of two: (485, -475), (475, -450), (400, 2^-6), (-485, -2^-6).
  const std::vector<float> y = read_f32(tmp("ex1_out.npy"));
  ASSERT_EQ(y.size(), 8u);
  EXPECT_EQ(y[0], 448);
  EXPECT_EQ(y[2], 416);
  EXPECT_EQ(y[6], 0.015625f);
  const std::string c = slurp(tmp("ex1_c.npy"));
  EXPECT_NE(c.find("'descr': '|u1'"), std::string::npos);
  EXPECT_NE(slurp(tmp("ex1_s.npy")).find("'shape': (1, 4)"), std::string::npos);
  EXPECT_NE(slurp(tmp("ex1_out.npy")).find("'shape': (2, 4)"), std::string::npos);
}

TEST(MxCli, QuantizeJsonAndSafetensorsBf16) {
  // BF16 1.0, 3.0, -0.5, 6.5 -> MXFP4 OCP even: 1, 3, -0.5, 6.
  const uint16_t h[4] = {0x3F80, 0x4040, 0xBF00, 0x40D0};
  const std::string hdr = R"({"w":{"dtype":"BF16","shape":[4],"data_offsets":[0,8]}})";
  std::string file(8, '\0');
  const uint64_t n = hdr.size();
  std::memcpy(file.data(), &n, 8);
  file += hdr + std::string(reinterpret_cast<const char*>(h), 8);
  write(tmp("m.safetensors"), file);
  const auto r = run_cli("mx quantize --format mxfp4_e2m1 --tensor w --json " + tmp("m.safetensors") +
                         " " + tmp("m_out.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "mxfp4_e2m1");
  EXPECT_EQ(j["blocks"], 1);
  EXPECT_EQ(read_f32(tmp("m_out.npy")), (std::vector<float>{1, 3, -0.5f, 6}));
  const auto bad = run_cli("mx quantize --format mxfp4_e2m1 --tensor ww " + tmp("m.safetensors") +
                           " " + tmp("m_out.npy"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("m.safetensors: --tensor: no tensor of that name (got 'ww'; expected one of w; did you mean 'w'?)"),
            std::string::npos) << bad.err;
}

TEST(MxCli, StatsTableAndJson) {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * std::exp2(static_cast<float>(i % 9));
  write(tmp("st.npy"), npy("<f4", "(8, 32)", f32(x)));
  const auto r = run_cli("mx stats " + tmp("st.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8", "nvfp4"})
    EXPECT_NE(r.out.find(f), std::string::npos) << f;
  const auto j = run_cli("mx stats --json --scale-rule trn3 " + tmp("st.npy"));
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  const auto& fs = doc["tensors"][0]["formats"];
  ASSERT_EQ(fs.size(), 7u);
  EXPECT_EQ(fs[0]["bits_per_element"], 8.25);
  EXPECT_EQ(fs[4]["bits_per_element"], 4.25);
  // More element bits, less error: E4M3 beats E2M1.
  EXPECT_GT(fs[0]["snr_db"].get<double>(), fs[4]["snr_db"].get<double>());
  for (const auto& f : fs) {
    EXPECT_GE(f["saturated_fraction"].get<double>(), 0.0);
    EXPECT_TRUE(f.contains("flushed_to_zero_fraction"));
    EXPECT_TRUE(f.contains("max_rel_error"));
  }
}

TEST(MxCli, GemmAgainstFp32) {
  std::vector<float> a(3 * 64), b(64 * 2);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.5f + 0.4f * std::cos(0.1f * static_cast<float>(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f + 0.49f * std::sin(0.2f * static_cast<float>(i));
  write(tmp("ga.npy"), npy("<f4", "(3, 64)", f32(a)));
  write(tmp("gb.npy"), npy("<f4", "(64, 2)", f32(b)));
  // B's block maxima are just below 1: the OCP rule (s = -1 - 8) saturates values above
  // 448 * 2^-9 = 0.875 while RCEIL (s = -8) keeps them, so RCEIL is more accurate here.
  const auto r = run_cli("mx gemm " + tmp("ga.npy") + " " + tmp("gb.npy") +
                         " --format mxfp8_e4m3 --scale-rule rceil --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto ocp = nlohmann::json::parse(
      run_cli("mx gemm " + tmp("ga.npy") + " " + tmp("gb.npy") + " --format mxfp8_e4m3 --json").out);
  EXPECT_LT(ocp["error"]["snr_db"].get<double>(), j["error"]["snr_db"].get<double>());
  EXPECT_EQ(j["m"], 3);
  EXPECT_EQ(j["k"], 64);
  EXPECT_EQ(j["n"], 2);
  EXPECT_GT(j["error"]["snr_db"].get<double>(), 25.0);
  const auto bad = run_cli("mx gemm " + tmp("ga.npy") + " " + tmp("ga.npy") + " --format mxfp8_e4m3");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("inner dimensions differ"), std::string::npos) << bad.err;
}

TEST(MxCli, BadInputDiagnostics) {
  write(tmp("ok.npy"), npy("<f4", "(4,)", f32({1, 2, 3, 4})));
  write(tmp("int.npy"), npy("<i4", "(1,)", "abcd"));
  write(tmp("trunc.npy"), npy("<f4", "(4,)", "abcdefgh"));
  write(tmp("junk.npy"), "not a numpy file");
  write(tmp("junk.safetensors"), std::string("\x07\x00\x00\x00\x00\x00\x00\x00{\"w\": [", 15));
  struct Case {
    std::string name, args, expect;
  };
  const std::string out = " " + tmp("o.npy");
  const std::vector<Case> cases = {
      {"unknown format", "mx quantize --format mxfp4_e2m2 " + tmp("ok.npy") + out,
       "--format: unknown format (got 'mxfp4_e2m2'; expected one of mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, "
       "mxfp6_e2m3, mxfp4_e2m1, mxint8, nvfp4; did you mean 'mxfp4_e2m1'?)"},
      {"unknown rounding", "mx quantize --format mxint8 --rounding neerest " + tmp("ok.npy") + out,
       "--rounding: unknown rounding mode (got 'neerest'"},
      {"unknown scale rule", "mx stats --scale-rule trn " + tmp("ok.npy"), "did you mean 'trn3'?"},
      {"wrong dtype", "mx quantize --format nvfp4 " + tmp("int.npy") + out,
       "int.npy: npy header.descr: unsupported dtype (got '<i4'; expected float32 ('<f4') or float64 ('<f8')"},
      {"truncated", "mx stats " + tmp("trunc.npy"),
       "trunc.npy: npy data: file truncated (got '8 data bytes'; expected 16 bytes for shape [4] of float32)"},
      {"malformed npy", "mx stats " + tmp("junk.npy"), "junk.npy: npy magic: not a NumPy .npy file"},
      {"malformed safetensors", "mx stats " + tmp("junk.safetensors"),
       "junk.safetensors: safetensors header: malformed JSON header"},
      {"missing file", "mx stats " + tmp("nope.npy"), "cannot open file '" + tmp("nope.npy") + "'"},
      {"axis", "mx quantize --format mxint8 --axis 3 " + tmp("ok.npy") + out,
       "--axis: block axis out of range (got '3'"},
      {"nvfp4 trn3", "mx quantize --format nvfp4 --layout trn3 " + tmp("ok.npy") + out,
       "--layout: the trn3 block layout applies to MX formats only"},
      {"gemm vector", "mx gemm " + tmp("ok.npy") + " " + tmp("ok.npy") + " --format mxint8",
       "ok.npy: shape: GEMM operands must be matrices (got '[4]'"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.name << ": " << r.err;
  }
  // Usage errors from the parser also exit 2.
  EXPECT_EQ(run_cli("mx quantize " + tmp("ok.npy")).exit_code, 2);
  EXPECT_EQ(run_cli("mx").exit_code, 2);
}

}  // namespace
