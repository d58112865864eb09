#pragma once
// Numeric formats used for math and storage. Shared by hw (peak rate per dtype) and workload
// (bytes per element); neither layer owns the other.

#include <optional>
#include <string>
#include <vector>

namespace xpusim::core {

enum class Dtype { Fp32, Tf32, Bf16, Fp16, Fp8, Mxfp8, Mxfp6, Mxfp4, Nvfp4, Int8, Int4 };

/// Canonical lower-case name: "fp32", "tf32", "bf16", "fp16", "fp8", "mxfp8", "mxfp6",
/// "mxfp4", "nvfp4", "int8", "int4".
std::string dtype_name(Dtype d);
/// Parses a canonical name (case-insensitive); nullopt when unknown.
std::optional<Dtype> parse_dtype(const std::string& name);
/// All dtypes in declaration order (for listings and "did you mean").
const std::vector<Dtype>& all_dtypes();
std::vector<std::string> all_dtype_names();

/// Storage bytes per element including block-scale overhead: MX formats add one E8M0 byte per
/// 32 elements; NVFP4 adds one E4M3 byte per 16 elements (the per-tensor fp32 scale is ignored).
double bytes_per_element(Dtype d);

}  // namespace xpusim::core
