#include "xpusim/core/dtype.h"

#include <algorithm>
#include <cctype>

namespace xpusim::core {

namespace {
struct Row {
  Dtype d;
  const char* name;
  double bytes;
};
const Row kRows[] = {
    {Dtype::Fp32, "fp32", 4.0},
    {Dtype::Tf32, "tf32", 4.0},
    {Dtype::Bf16, "bf16", 2.0},
    {Dtype::Fp16, "fp16", 2.0},
    {Dtype::Fp8, "fp8", 1.0},
    {Dtype::Mxfp8, "mxfp8", 1.0 + 1.0 / 32.0},
    {Dtype::Mxfp6, "mxfp6", 0.75 + 1.0 / 32.0},
    {Dtype::Mxfp4, "mxfp4", 0.5 + 1.0 / 32.0},
    {Dtype::Nvfp4, "nvfp4", 0.5 + 1.0 / 16.0},
    {Dtype::Int8, "int8", 1.0},
    {Dtype::Int4, "int4", 0.5},
};
}  // namespace

std::string dtype_name(Dtype d) {
  for (const auto& r : kRows)
    if (r.d == d) return r.name;
  return "?";
}

std::optional<Dtype> parse_dtype(const std::string& name) {
  std::string s = name;
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& r : kRows)
    if (s == r.name) return r.d;
  return std::nullopt;
}

const std::vector<Dtype>& all_dtypes() {
  static const std::vector<Dtype> v = [] {
    std::vector<Dtype> out;
    for (const auto& r : kRows) out.push_back(r.d);
    return out;
  }();
  return v;
}

std::vector<std::string> all_dtype_names() {
  std::vector<std::string> out;
  for (const auto& r : kRows) out.push_back(r.name);
  return out;
}

double bytes_per_element(Dtype d) {
  for (const auto& r : kRows)
    if (r.d == d) return r.bytes;
  return 0.0;
}

}  // namespace xpusim::core
