#pragma once
// Block floating point: OCP MX v1.0 (E8M0 scale per 32 elements) and NVIDIA NVFP4 (E4M3 scale
// per 16 elements plus a per-tensor fp32 scale). Quantise to element and scale codes,
// dequantise, MX dot products and GEMM with fp32 accumulation.
// Facts and worked examples: ../shared/reference/formats.md Part 1.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/numerics/element.h"

namespace xpusim::numerics {

/// A block format: element type + scale type + block size.
enum class Format { Mxfp8E4m3, Mxfp8E5m2, Mxfp6E3m2, Mxfp6E2m3, Mxfp4E2m1, Mxint8, Nvfp4 };

/// How a block's power-of-two scale X = 2^s is chosen from its amax (formats.md §1.6).
/// Ocp: s = floor(log2 amax) - emax (the spec's sample rule; saturates the block max).
/// Trn3: s = floor(log2 amax) - (emax - 1), twice the OCP scale (Trainium3 QuantizeMX doc).
/// Rceil: s = ceil(log2(amax / max_normal)) (NVIDIA; never saturates).
/// For NVFP4 the scale is amax/6 converted to E4M3: Rceil rounds it up (cuDNN), the others
/// round it to nearest-even (torchao).
enum class ScaleRule { Ocp, Trn3, Rceil };

/// Which elements share a scale. Contiguous: runs of block_size along `axis` (a ragged tail is
/// a shorter block). Trn3: 8 partitions x 4 free elements (NeuronCore-v4 QuantizeMX): 8 along
/// `axis` (the partition / contraction axis) by 4 along the free axis, which is the last axis,
/// or the second to last when `axis` is the last; a rank-1 tensor has groups of 8.
enum class Layout { Contiguous, Trn3 };

/// Static facts of a format.
struct FormatInfo {
  const char* name;          ///< "mxfp8_e4m3", ..., "mxint8", "nvfp4"
  ElementType element;
  int block_size;            ///< 32 for MX, 16 for NVFP4
  bool nvfp4;                ///< E4M3 block scale and per-tensor fp32 scale
};

const FormatInfo& format_info(Format f);
/// All formats in declaration order.
const std::vector<Format>& all_formats();
std::vector<std::string> all_format_names();
/// Parses a name (case-insensitive); throws core::InputError naming `field`, listing the valid
/// names and the closest match.
Format parse_format(const std::string& name, const std::string& field = "--format");
ScaleRule parse_scale_rule(const std::string& name, const std::string& field = "--scale-rule");
Rounding parse_rounding(const std::string& name, const std::string& field = "--rounding");
Layout parse_layout(const std::string& name, const std::string& field = "--layout");
std::string scale_rule_name(ScaleRule r);
std::string layout_name(Layout l);

/// Storage bits per element including the block scales (and, for NVFP4, the per-tensor fp32
/// scale amortised over `elements`; pass 0 to ignore it).
double bits_per_element(Format f, int64_t elements = 0);

struct QuantOptions {
  Format format = Format::Mxfp8E4m3;
  Rounding rounding = Rounding::Even;
  ScaleRule scale_rule = ScaleRule::Ocp;
  Layout layout = Layout::Contiguous;
  int axis = -1;  ///< block axis; negative counts from the end
  /// NVFP4 only: per-tensor scale; when empty it is amax(|x|) / (448 * 6) (1 when that is 0 or
  /// not finite).
  std::optional<float> nvfp4_tensor_scale;
};

/// A quantised tensor. Codes are one byte per element in the input's (C) order; scales are one
/// byte per block, laid out as a tensor of shape `scale_shape` (the input shape with the block
/// axes divided, rounded up, by the block extent).
struct QuantizedTensor {
  QuantOptions options;
  std::vector<int64_t> shape;
  std::vector<uint8_t> codes;
  std::vector<int64_t> scale_shape;
  std::vector<uint8_t> scales;  ///< E8M0 codes (MX) or E4M3 codes (NVFP4)
  float tensor_scale = 1.0f;    ///< NVFP4 per-tensor scale; 1 for MX
};

/// E8M0 scale code 0..254 -> 2^(code-127); 0xFF -> NaN.
float decode_e8m0(uint8_t code);

/// Power-of-two exponent s of a block's scale for a given amax (|x| max over the block, finite
/// and > 0) under `rule`, clamped to [-127, 127].
int mx_scale_exponent(ElementType t, ScaleRule rule, float amax);

/// Quantises one MX block of n values (any n >= 1) into `codes` (n bytes); returns the E8M0
/// scale code. Zero block: code 0 (OCP rule: 2^(-126-emax) clamped, i.e. 0x01 for MXINT8, as the
/// reference). Any NaN/Inf: 0xFF with every element NaN (its NaN code, or 0 when it has none).
uint8_t quantize_mx_block(ElementType t, const float* x, int n, uint8_t* codes,
                          Rounding rounding, ScaleRule rule);

/// Decodes one MX block: out[i] = X * P_i (exact; NaN when the scale code is 0xFF).
void dequantize_mx_block(ElementType t, uint8_t scale, const uint8_t* codes, int n, float* out);

/// Quantises a tensor (float32, C order, `shape` may have any rank >= 0). Throws
/// core::InputError for an axis out of range or an unsupported layout/format pair.
QuantizedTensor quantize(const float* x, const std::vector<int64_t>& shape,
                         const QuantOptions& options);
/// Dequantises to float32 in the tensor's (C) order.
std::vector<float> dequantize(const QuantizedTensor& q);
/// quantize + dequantize.
std::vector<float> fake_quantize(const float* x, const std::vector<int64_t>& shape,
                                 const QuantOptions& options);

/// MX dot product of two blocks of n elements (formats.md §1.7, TOSA semantics):
/// (sum_i P_A,i * P_B,i in fp32, in order) * X_A * X_B. Element types may differ.
float mx_dot_block(ElementType ta, uint8_t scale_a, const uint8_t* codes_a, ElementType tb,
                   uint8_t scale_b, const uint8_t* codes_b, int n);

/// C[M,N] = A[M,K] x B[K,N] with fp32 accumulation. A must be quantised along axis 1 and B
/// along axis 0 with the same block size and contiguous layout: per block the fp32 sum of the
/// element products is scaled by both block scales and added to an fp32 accumulator (block order
/// along K). Otherwise (Trn3 layout) both operands are dequantised to fp32 and multiplied with
/// fp32 accumulation (the NKI golden model). Throws core::InputError on shape mismatch.
std::vector<float> mx_gemm(const QuantizedTensor& a, const QuantizedTensor& b);

/// Reference fp32 GEMM (fp32 accumulation in K order), for comparisons.
std::vector<float> gemm_f32(const float* a, const float* b, int64_t m, int64_t k, int64_t n);

}  // namespace xpusim::numerics
