// Throughput of MX quantise + dequantise (elements per second, one core) beside baselines
// measured in the same run: memcpy and an fp32 -> bf16 -> fp32 round trip (RNE).
// Run: build-numerics/bench/numerics_bench --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "xpusim/numerics/mx.h"

namespace {

using namespace xpusim::numerics;

constexpr int64_t kRows = 1024, kCols = 1024;  // 1 Mi elements, blocks along the rows

const std::vector<float>& input() {
  static const std::vector<float> x = [] {
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> v(kRows * kCols);
    for (float& f : v) f = nd(rng);
    return v;
  }();
  return x;
}

void BM_Memcpy(benchmark::State& state) {
  const auto& x = input();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    std::memcpy(y.data(), x.data(), x.size() * sizeof(float));
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}
BENCHMARK(BM_Memcpy);

void BM_Bf16RoundTrip(benchmark::State& state) {
  const auto& x = input();
  std::vector<uint16_t> h(x.size());
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (size_t i = 0; i < x.size(); ++i) {
      const uint32_t b = std::bit_cast<uint32_t>(x[i]);
      h[i] = static_cast<uint16_t>((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);  // RNE (finite)
    }
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::bit_cast<float>(static_cast<uint32_t>(h[i]) << 16);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}
BENCHMARK(BM_Bf16RoundTrip);

/// quantize (codes + scales) then dequantize, through the public tensor API.
void BM_MxQuantDequant(benchmark::State& state, Format f, Rounding r, ScaleRule s, Layout l) {
  const auto& x = input();
  QuantOptions o;
  o.format = f;
  o.rounding = r;
  o.scale_rule = s;
  o.layout = l;
  if (l == Layout::Trn3) o.axis = 0;
  for (auto _ : state) {
    const QuantizedTensor q = quantize(x.data(), {kRows, kCols}, o);
    std::vector<float> y = dequantize(q);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}
BENCHMARK_CAPTURE(BM_MxQuantDequant, mxfp8_e4m3_even, Format::Mxfp8E4m3, Rounding::Even,
                  ScaleRule::Ocp, Layout::Contiguous);
BENCHMARK_CAPTURE(BM_MxQuantDequant, mxfp8_e5m2_even, Format::Mxfp8E5m2, Rounding::Even,
                  ScaleRule::Ocp, Layout::Contiguous);
BENCHMARK_CAPTURE(BM_MxQuantDequant, mxfp4_e2m1_nearest, Format::Mxfp4E2m1, Rounding::Nearest,
                  ScaleRule::Ocp, Layout::Contiguous);
BENCHMARK_CAPTURE(BM_MxQuantDequant, mxint8_even, Format::Mxint8, Rounding::Even,
                  ScaleRule::Ocp, Layout::Contiguous);
BENCHMARK_CAPTURE(BM_MxQuantDequant, mxfp8_e4m3_even_trn3_layout, Format::Mxfp8E4m3,
                  Rounding::Even, ScaleRule::Trn3, Layout::Trn3);
BENCHMARK_CAPTURE(BM_MxQuantDequant, nvfp4_even, Format::Nvfp4, Rounding::Even, ScaleRule::Ocp,
                  Layout::Contiguous);

/// The block kernels alone (no allocation): one row-contiguous pass to codes and back.
void BM_MxBlockKernels(benchmark::State& state) {
  const auto& x = input();
  std::vector<uint8_t> codes(x.size()), scales(x.size() / 32);
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (size_t b = 0; b < scales.size(); ++b)
      scales[b] = quantize_mx_block(ElementType::Fp8E4m3, x.data() + 32 * b, 32,
                                    codes.data() + 32 * b, Rounding::Even, ScaleRule::Ocp);
    for (size_t b = 0; b < scales.size(); ++b)
      dequantize_mx_block(ElementType::Fp8E4m3, scales[b], codes.data() + 32 * b, 32,
                          y.data() + 32 * b);
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(x.size()));
}
BENCHMARK(BM_MxBlockKernels);

}  // namespace

BENCHMARK_MAIN();
