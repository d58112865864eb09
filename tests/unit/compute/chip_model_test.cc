// compute/: op times from a roofline plus tile/wave quantisation, derived in the tests.

#include <gtest/gtest.h>

#include "../shipped_data.h"

#include "xpusim/compute/chip_model.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;
using core::Dtype;

namespace {

using xpusim::test::shipped;

using xpusim::test::catalog;

workload::Op gemm(long long m, long long n, long long k) {
  workload::Op o;
  o.kind = workload::OpKind::Gemm;
  o.m = m;
  o.n = n;
  o.k = k;
  o.weights = true;
  return o;
}

compute::Precision prec(Dtype d) {
  compute::Precision p;
  p.gemm = d;
  return p;
}

}  // namespace

// A large square GEMM is compute-bound: time = 2mnk / (peak × gemm_eff × low-precision factor)
// + overhead, with full tiles and K = 8192 (the reference K of the calibration).
TEST(ChipModel, LargeGemmRunsAtTheCalibratedFractionOfPeak) {
  for (const char* id : {"h100-sxm", "gb300", "a100-sxm-80g"}) {
    const auto& chip = catalog().chip(id);
    const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
    const auto& cal = m.calibration();
    const auto op = gemm(8192, 8192, 8192);
    const auto t = m.time(op, prec(Dtype::Bf16), compute::Pass::Forward);
    const double expected = 2.0 * 8192.0 * 8192.0 * 8192.0 /
                                (chip.peak_for(Dtype::Bf16).base() * cal.gemm_efficiency) +
                            core::to_seconds(cal.kernel_overhead);
    EXPECT_TRUE(t.compute_bound) << id;
    // Wave quantisation of 64 × 64 tiles over the SMs costs at most one partial wave.
    EXPECT_GE(core::to_seconds(t.time), expected * 0.999) << id;
    EXPECT_LE(core::to_seconds(t.time), expected * 1.10) << id;
    // Backward = data + weight gradients = twice the FLOPs.
    const auto b = m.time(op, prec(Dtype::Bf16), compute::Pass::Backward);
    EXPECT_NEAR(core::to_flops(b.flops), 2.0 * core::to_flops(t.flops), 1.0);
  }
}

// A batch-1 GEMV is bound by reading the weights: time ≈ k·n·bytes / (HBM × hbm_eff).
TEST(ChipModel, DecodeGemvIsBoundByWeightBytes) {
  const auto& chip = catalog().chip("h200-sxm");
  const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
  const auto op = gemm(1, 8192, 8192);
  auto p = prec(Dtype::Fp8);
  p.weights = Dtype::Fp8;
  const auto t = m.time(op, p, compute::Pass::Forward);
  EXPECT_FALSE(t.compute_bound);
  const double bytes = 8192.0 * 8192.0 * 1.0 + (8192.0 + 8192.0) * 2.0;
  const double expected_mem = bytes / (chip.hbm_bandwidth.value.base() * m.calibration().hbm_efficiency);
  // Plus the fp8 cast of the 1 × 8192 input (3 bytes per element) and the kernel overheads.
  EXPECT_NEAR(core::to_seconds(t.time),
              expected_mem + 8192.0 * 3.0 / (chip.hbm_bandwidth.value.base() * m.calibration().hbm_efficiency) +
                  2.0 * core::to_seconds(m.calibration().kernel_overhead),
              1e-9);
}

// A weight the checkpoint keeps in bf16 (Op::unquantized, gpt-oss's attention beside its MXFP4
// experts) is read at 2 bytes and multiplied in bf16 with no activation cast, whatever the plan's
// formats: the batch-1 GEMV above at 2 bytes a weight and one kernel.
TEST(ChipModel, AnUnquantizedWeightIsReadAndMultipliedInBf16) {
  const auto& chip = catalog().chip("h200-sxm");
  const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
  auto op = gemm(1, 8192, 8192);
  op.unquantized = true;
  auto p = prec(Dtype::Mxfp4);
  p.weights = Dtype::Mxfp4;
  const auto t = m.time(op, p, compute::Pass::Forward);
  EXPECT_EQ(t.dtype, Dtype::Bf16);
  const double bytes = 8192.0 * 8192.0 * 2.0 + (8192.0 + 8192.0) * 2.0;
  EXPECT_NEAR(core::to_bytes(t.hbm_bytes), bytes, 1.0);
  EXPECT_NEAR(core::to_seconds(t.time),
              bytes / (chip.hbm_bandwidth.value.base() * m.calibration().hbm_efficiency) +
                  core::to_seconds(m.calibration().kernel_overhead),
              1e-9);
  // Under a bf16 or wider plan the flag changes nothing.
  p = prec(Dtype::Bf16);
  const auto wide = m.time(op, p, compute::Pass::Forward);
  op.unquantized = false;
  EXPECT_EQ(core::to_seconds(wide.time), core::to_seconds(m.time(op, p, compute::Pass::Forward).time));
}

// Trainium TensorE: a contraction of 129 rows needs two passes of the 128-row array, so it runs
// at 129/256 of the rate of K = 256 per FLOP.
TEST(ChipModel, TrainiumTileQuantisationOnTheContraction) {
  const auto& chip = catalog().chip("trainium2");
  const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
  const auto full = m.time(gemm(4096, 4096, 256), prec(Dtype::Bf16), compute::Pass::Forward);
  const auto ragged = m.time(gemm(4096, 4096, 129), prec(Dtype::Bf16), compute::Pass::Forward);
  const double per_flop_full = core::to_seconds(full.time - m.calibration().kernel_overhead) / core::to_flops(full.flops);
  const double per_flop_ragged =
      core::to_seconds(ragged.time - m.calibration().kernel_overhead) / core::to_flops(ragged.flops);
  EXPECT_NEAR(per_flop_ragged / per_flop_full, 256.0 / 129.0, 0.01);
}

// PSUM read-out: VectorE and ScalarE read each fp32 accumulator once. A chip whose engines read
// slowly (a user's own NeuronCore with one VectorE lane for fp32 and no ScalarE) is bound by it:
// time = m·n / (cores × 1 × VectorE clock) forward, (m·k + k·n) / the same backward.
TEST(ChipModel, TrainiumPsumReadOutBoundsAGemmWhenTheEnginesReadSlowly) {
  hw::ChipSpec chip = catalog().chip("trainium2");
  chip.neuron->vector_lanes_fp32 = 1;
  chip.neuron->scalar_lanes_fp32 = 0;
  const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
  const long long M = 4096, N = 4096, K = 256;
  const double rate = chip.neuron->vector_clock.value.base() * chip.neuron->cores_per_chip;
  const auto fwd = m.time(gemm(M, N, K), prec(Dtype::Bf16), compute::Pass::Forward);
  EXPECT_TRUE(fwd.psum_bound);
  EXPECT_NEAR(core::to_seconds(fwd.time - m.calibration().kernel_overhead), double(M) * N / rate, 1e-12);
  const auto bwd = m.time(gemm(M, N, K), prec(Dtype::Bf16), compute::Pass::Backward);
  EXPECT_TRUE(bwd.psum_bound);
  EXPECT_NEAR(core::to_seconds(bwd.time - m.calibration().kernel_overhead * 2.0), (double(M) * K + double(K) * N) / rate,
              1e-12);
  EXPECT_DOUBLE_EQ(core::to_seconds(m.psum_readout_time(1e6)), 1e6 / rate);
}

// On every shipped NeuronCore the read-out keeps up with the array from one full contraction
// tile (128 rows × the dtype's row multiplier) upwards at the calibrated rate; on v3 and v4 even
// at the array's peak: the threshold K* = peak / (2 × read-out rate) is 104 (v3 bf16), 203 (v3
// fp8) and 341 (v4 MX) against tiles of 128, 256 and 512 (v2: 147 against 128, so only above 87%
// of peak).
TEST(ChipModel, ShippedNeuronCoresNeverWaitOnPsumFromAFullContractionTile) {
  for (const auto& [id, d] : std::vector<std::pair<std::string, Dtype>>{{"trainium1", Dtype::Bf16},
                                                                        {"trainium2", Dtype::Bf16},
                                                                        {"trainium2", Dtype::Fp8},
                                                                        {"trainium3", Dtype::Mxfp8},
                                                                        {"trainium3", Dtype::Bf16}}) {
    const auto& chip = catalog().chip(id);
    const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
    ASSERT_GT(chip.neuron->vector_lanes_fp32, 0) << id;
    const long long tile = 128LL * chip.neuron->tensor_rate_multiplier.at(d);
    for (long long k : {tile, 2 * tile, 8 * tile}) {
      EXPECT_FALSE(m.time(gemm(4096, 4096, k), prec(d), compute::Pass::Forward).psum_bound) << id << " k " << k;
      EXPECT_FALSE(m.time(gemm(4096, 4096, k), prec(d), compute::Pass::Backward).psum_bound) << id << " k " << k;
    }
    if (id == "trainium1") continue;  // at the peak v2 would wait (K* 147 > 128): the calibrated rate does not
    // At the array's peak (no calibration factors) the read-out still keeps up with a full tile.
    const double peak_per_core = chip.peak_for(d).base() / chip.neuron->cores_per_chip;
    const double readout = chip.neuron->vector_lanes_fp32 * chip.neuron->vector_clock.value.base() +
                           chip.neuron->scalar_lanes_fp32 * chip.neuron->scalar_clock.value.base();
    EXPECT_LT(peak_per_core / (2.0 * readout), static_cast<double>(tile)) << id;
  }
}

// Trainium3 runs MXFP4 at the MXFP8 rate (formats.md §1.9): same GEMM time; fewer weight bytes.
TEST(ChipModel, Trainium3Mxfp4AtTheMxfp8Rate) {
  const auto& chip = catalog().chip("trainium3");
  const compute::ChipModel m(chip, compute::calibration_for(chip, shipped()));
  EXPECT_EQ(m.achievable_flops(Dtype::Mxfp4), m.achievable_flops(Dtype::Mxfp8));
  EXPECT_GT(m.achievable_flops(Dtype::Mxfp8), m.achievable_flops(Dtype::Bf16) * 3.0);
}

// A dtype the chip lacks falls back to the nearest slower one.
TEST(ChipModel, MissingDtypesFallBack) {
  const compute::ChipModel a100(catalog().chip("a100-sxm-80g"), compute::calibration_for(catalog().chip("a100-sxm-80g"), shipped()));
  EXPECT_EQ(a100.best_dtype(Dtype::Fp8), Dtype::Bf16);
  EXPECT_EQ(a100.best_dtype(Dtype::Nvfp4), Dtype::Bf16);
  const compute::ChipModel h100(catalog().chip("h100-sxm"), compute::calibration_for(catalog().chip("h100-sxm"), shipped()));
  EXPECT_EQ(h100.best_dtype(Dtype::Nvfp4), Dtype::Fp8);
  EXPECT_EQ(h100.best_dtype(Dtype::Mxfp8), Dtype::Fp8);
  const compute::ChipModel trn2(catalog().chip("trainium2"), compute::calibration_for(catalog().chip("trainium2"), shipped()));
  EXPECT_EQ(trn2.best_dtype(Dtype::Mxfp4), Dtype::Fp8);
}

// A power cap lowers the sustained math rate by ((cap − idle·TDP)/((1 − idle)·TDP))^(1/3).
TEST(ChipModel, PowerCapDeratesTheMathRate) {
  const auto& capped = catalog().chip("h100-sxm-96g-500w");
  ASSERT_TRUE(capped.power_cap.has_value());
  const auto cal = compute::calibration_for(capped, shipped());
  const double tdp = core::to_watts(capped.tdp.value), cap = core::to_watts(capped.power_cap->value);
  const double idle = shipped().number("cost.idle_power_fraction");
  EXPECT_NEAR(cal.power_cap_factor, std::cbrt((cap - idle * tdp) / ((1.0 - idle) * tdp)), 1e-12);
  EXPECT_LT(cal.power_cap_factor, 1.0);
}

namespace {

/// Causal self-attention over `seq` tokens, 32 heads of 128 (one kernel call unless `chunks`).
workload::Op self_attention(long long seq, long long chunks = 1) {
  workload::Op o;
  o.kind = workload::OpKind::Attention;
  o.batch = 1;
  o.heads = o.kv_heads = 32;
  o.q_len = o.kv_len = seq;
  o.d_qk = o.d_v = 128;
  o.kv_chunks = chunks;
  return o;
}

/// The compute time of an attention op: its time less the per-kernel overhead (it is
/// compute-bound at these lengths).
double math_seconds(const compute::ChipModel& m, const workload::Op& op, compute::Pass pass) {
  const auto t = m.time(op, prec(Dtype::Bf16), pass);
  EXPECT_TRUE(t.compute_bound);
  const double overhead = core::to_seconds(m.calibration().kernel_overhead) * (pass == compute::Pass::Backward ? 2 : 1);
  return core::to_seconds(t.time) - overhead;
}

}  // namespace

// At the reference length (a causal 8,192-token sequence: 4,096 keys per query on average) the
// forward runs at attention_efficiency of the bf16 peak.
// A query that sees K keys per kernel call pays the prologue k0 (in keys, scaled by the kernel's
// rate per SM against FlashAttention-3's H100): it runs at K/(K + k0) relative to the reference.
// Context-parallel ring attention is one call per ring step, so K is the mean over the steps.
TEST(ChipModel, AttentionPaysItsPrologueOncePerKernelCall) {
  const auto& chip = catalog().chip("h100-sxm");
  const auto cal = compute::calibration_for(chip, shipped());
  const compute::ChipModel m(chip, cal);
  const double rate = chip.peak_for(Dtype::Bf16).base() * cal.attention_efficiency;
  const auto reference = self_attention(8192);
  EXPECT_NEAR(math_seconds(m, reference, compute::Pass::Forward), reference.flops() / rate,
              1e-9 * reference.flops() / rate);

  const double k0 = cal.attention_prologue_keys * (rate / chip.gpu->sm_count) /
                    (cal.attention_prologue_rate.base() / cal.attention_prologue_sms);
  const double ref = cal.reference_attention_keys;
  auto ring = self_attention(4096, 4);  // a ring step's chunk: 4,096 keys over 4 calls
  ring.causal = false;
  const double keys = 4096.0 / 4.0;
  const double utilisation = (keys / (keys + k0)) / (ref / (ref + k0));
  EXPECT_NEAR(math_seconds(m, ring, compute::Pass::Forward), ring.flops() / (rate * utilisation),
              1e-9 * ring.flops() / rate);
  // The same keys in one call pay the prologue once: faster.
  ring.kv_chunks = 1;
  EXPECT_LT(math_seconds(m, ring, compute::Pass::Forward), ring.flops() / (rate * utilisation));
}

// The operator list and the accounting are independent implementations: the forward FLOPs of
// every layer plus the LM head at tp = 1 equal the model's forward FLOPs per token (one third of
// the training model FLOPs) within 1% (they differ in the causal mean context (s+1)/2 vs s/2).
TEST(Ops, LayerOperatorFlopsMatchTheAccounting) {
  const std::string dir = std::string(XS_TESTDATA_DIR) + "/models";
  for (const char* id : {"llama3.1-8b", "gpt3-175b", "mixtral-8x7b", "deepseek-v3", "qwen3-30b-a3b", "gpt-oss-120b"}) {
    const auto md = workload::load_model(id, dir);
    workload::LayerShard s;
    s.batch = 1;
    s.seq = 4096;
    double f = 0;
    for (int l = 0; l < md.layers; ++l)
      for (const auto& op : workload::layer_ops(md, l, s))
        if (op.kind == workload::OpKind::Gemm || op.kind == workload::OpKind::Attention) f += op.flops();
    for (const auto& op : workload::head_ops(md, s))
      if (op.kind == workload::OpKind::Gemm) f += op.flops();
    const double per_token = f / 4096.0;
    const double expected = workload::train_flops_per_token(md, 4096, workload::RecomputeKind::None).model / 3.0;
    EXPECT_NEAR(per_token / expected, 1.0, 0.01) << id;
  }
}
