#pragma once
// Rendering of `xpusim mx quantize | stats | gemm` (OCP MX / NVFP4 block floating point): text
// and JSON. The numbers come from numerics/; this computes nothing new.

#include <string>
#include <vector>

#include "xpusim/numerics/mx.h"
#include "xpusim/numerics/stats.h"
#include "xpusim/numerics/tensor_io.h"
#include "xpusim/report/json_convention.h"

namespace xpusim::report {

/// One `mx quantize`: the input tensor, the quantised form and its error against the input.
struct MxQuantizeRun {
  std::string input, output;
  const numerics::Tensor* tensor = nullptr;
  numerics::QuantOptions options;
  const numerics::QuantizedTensor* quantized = nullptr;
  numerics::ErrorStats error;
};

/// One tensor of `mx stats`: every format's statistics under the same options.
struct MxTensorStats {
  const numerics::Tensor* tensor = nullptr;
  std::vector<numerics::QuantStats> formats;
};

/// One `mx gemm`: the operands' shapes and formats and the error against the fp32 GEMM.
struct MxGemmRun {
  std::string a_path, b_path;
  long long m = 0, k = 0, n = 0;
  numerics::QuantOptions options_a, options_b;
  numerics::ErrorStats error;
};

Json mx_quantize_document(const Provenance& provenance, const MxQuantizeRun& run);
std::string mx_quantize_text(const MxQuantizeRun& run);
Json mx_stats_document(const Provenance& provenance, const std::string& input, const numerics::QuantOptions& options,
                       const std::vector<MxTensorStats>& tensors);
std::string mx_stats_text(const numerics::QuantOptions& options, const std::vector<MxTensorStats>& tensors);
Json mx_gemm_document(const Provenance& provenance, const MxGemmRun& run);
std::string mx_gemm_text(const MxGemmRun& run);

}  // namespace xpusim::report
