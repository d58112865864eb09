#include "xpusim/compute/chip_model.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "xpusim/core/check.h"

namespace xpusim::compute {

using core::Dtype;

namespace {

double round_up(double x, double q) { return std::ceil(x / q) * q; }

bool is_low_precision(Dtype d) {
  return d == Dtype::Fp8 || d == Dtype::Mxfp8 || d == Dtype::Mxfp6 || d == Dtype::Mxfp4 ||
         d == Dtype::Nvfp4 || d == Dtype::Int8 || d == Dtype::Int4;
}

}  // namespace

ChipModel::ChipModel(const hw::ChipSpec& chip, Calibration cal) : chip_(chip), cal_(std::move(cal)) {}

Dtype ChipModel::best_dtype(Dtype d) const { return executed_dtype(chip_, d); }

namespace {

// The formats a request falls back through, best first (static: executed_dtype sits on the serve
// simulator's per-step path and allocates nothing).
std::span<const Dtype> fallback_chain(Dtype d) {
  static constexpr Dtype nvfp4[] = {Dtype::Nvfp4, Dtype::Mxfp4, Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype mxfp4[] = {Dtype::Mxfp4, Dtype::Nvfp4, Dtype::Mxfp8, Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype mxfp6[] = {Dtype::Mxfp6, Dtype::Mxfp8, Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype mxfp8[] = {Dtype::Mxfp8, Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype fp8[] = {Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype int8[] = {Dtype::Int8, Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype int4[] = {Dtype::Int4, Dtype::Int8, Dtype::Fp8, Dtype::Bf16};
  static constexpr Dtype fp16[] = {Dtype::Fp16, Dtype::Bf16};
  static constexpr Dtype tf32[] = {Dtype::Tf32, Dtype::Fp32};
  static constexpr Dtype fp32[] = {Dtype::Fp32};
  static constexpr Dtype bf16[] = {Dtype::Bf16, Dtype::Fp16};
  switch (d) {
    case Dtype::Nvfp4: return nvfp4;
    case Dtype::Mxfp4: return mxfp4;
    case Dtype::Mxfp6: return mxfp6;
    case Dtype::Mxfp8: return mxfp8;
    case Dtype::Fp8: return fp8;
    case Dtype::Int8: return int8;
    case Dtype::Int4: return int4;
    case Dtype::Fp16: return fp16;
    case Dtype::Tf32: return tf32;
    case Dtype::Fp32: return fp32;
    case Dtype::Bf16: return bf16;
  }
  return {};
}

}  // namespace

Dtype executed_dtype(const hw::ChipSpec& chip, Dtype d) {
  for (Dtype c : fallback_chain(d))
    if (chip.supports(c)) return c;
  XS_CHECK(chip.supports(Dtype::Bf16), "chip has no bf16 peak");
  return Dtype::Bf16;
}

std::vector<std::string> precision_names(const hw::ChipSpec& chip) {
  std::vector<std::string> have;
  for (const auto& name : core::all_dtype_names()) {
    const auto dt = core::parse_dtype(name);
    if (dt && chip.supports(*dt)) have.push_back(name);
  }
  return have;
}

core::FlopRate ChipModel::achievable_flops(Dtype d) const {
  const Dtype r = best_dtype(d);
  double eff = cal_.gemm_efficiency * cal_.power_cap_factor;
  if (is_low_precision(r)) eff *= cal_.low_precision_efficiency;
  if (r == Dtype::Nvfp4 || r == Dtype::Mxfp4 || r == Dtype::Int4) eff *= cal_.fp4_efficiency;
  return chip_.peak_for(r) * eff;
}

core::ByteRate ChipModel::achievable_hbm() const {
  return chip_.hbm_bandwidth.value * cal_.hbm_efficiency;
}

core::Seconds ChipModel::memory_time(core::Bytes b) const { return b / achievable_hbm(); }

core::Seconds ChipModel::psum_readout_time(double elements) const {
  if (!chip_.neuron || elements <= 0) return core::Seconds{};
  const auto& nc = *chip_.neuron;
  const double per_core = static_cast<double>(nc.vector_lanes_fp32) * nc.vector_clock.value.base() +
                          static_cast<double>(nc.scalar_lanes_fp32) * nc.scalar_clock.value.base();
  if (per_core <= 0 || nc.cores_per_chip <= 0) return core::Seconds{};
  return core::seconds(elements / (per_core * static_cast<double>(nc.cores_per_chip)));
}

double ChipModel::gemm_utilisation(const workload::Op& op, Dtype d) const {
  const double m = static_cast<double>(op.m), n = static_cast<double>(op.n),
               k = static_cast<double>(op.k);
  if (m <= 0 || n <= 0 || k <= 0) return 1.0;
  if (chip_.neuron) {
    // TensorE: the contraction k sits on the 128 PE rows (×2 for fp8 double-row, ×4 for MX
    // quad-row), the stationary operand's n on the 128 columns, m streams through in chunks of
    // up to psum_free_dim. Partial tiles waste the unused rows/columns.
    const auto& nc = *chip_.neuron;
    int mult = 1;
    auto it = nc.tensor_rate_multiplier.find(d);
    if (it != nc.tensor_rate_multiplier.end()) mult = it->second;
    const double kq = static_cast<double>(nc.pe_rows) * mult;
    const double nq = static_cast<double>(nc.pe_cols);
    const double u = (k / round_up(k, kq)) * (n / round_up(n, nq));
    // Moving-dimension chunks shorter than the pipeline fill (~matmul_init_cycles) idle the array.
    const double mchunk = std::min(m, static_cast<double>(nc.psum_free_dim));
    const double fill = mchunk / (mchunk + static_cast<double>(nc.matmul_init_cycles));
    return u * fill / (512.0 / (512.0 + nc.matmul_init_cycles));  // normalised: full chunk = 1
  }
  if (chip_.gpu) {
    // Wave quantisation: output tiles spread over SMs in waves; the last wave may be partial.
    const auto& g = *chip_.gpu;
    // Skinny GEMMs (decode, small expert batches) run with narrower CTA tiles (the MMA
    // instruction granularity is 16 rows) and split K across SMs when the output tiles cannot
    // fill the machine, as cuBLAS/CUTLASS heuristics do.
    const double tm = std::min<double>(g.tensor_tile_m, std::max(16.0, round_up(m, 16.0)));
    const double tn = g.tensor_tile_n;
    const double sms = g.sm_count > 0 ? g.sm_count : 1;
    double tiles = std::ceil(m / tm) * std::ceil(n / tn) * static_cast<double>(op.count);
    if (tiles < sms) tiles *= std::max(1.0, std::min(std::floor(sms / tiles), std::floor(k / 512.0)));
    const double waves = std::ceil(tiles / sms);
    const double wave_eff = tiles / (waves * sms);
    const double tile_eff = (m / round_up(m, tm)) * (n / round_up(n, tn));
    // Each output tile pays a prologue/epilogue (first operand loads, accumulator store) worth
    // about gpu_tile_prologue_k of its K loop: short-K GEMMs run below the large-GEMM rate. A
    // LoRA adapter's rank-r GEMM is left out of it: a K loop of one or two steps has no pipeline
    // to fill, and its time is the stream of its input or output, which the memory term prices.
    const double prologue = op.adapter ? 0.0 : cal_.gpu_tile_prologue_k, ref = cal_.reference_gemm_k;
    const double k_eff = k / (k + prologue);
    return wave_eff * tile_eff * k_eff / (ref / (ref + prologue));
  }
  return 1.0;
}

namespace {

/// Mean keys a query sees in one kernel call: its keys split over the op's kernel calls (ring
/// attention: one call per context-parallel step).
double keys_per_call(const workload::Op& op) {
  return std::max(1.0, op.mean_keys() / static_cast<double>(std::max<long long>(1, op.kv_chunks)));
}

}  // namespace

/// Flash attention pays a prologue/epilogue per query tile and kernel call (load Q, rescale and
/// write O): a fixed number of cycles on one SM, worth k0 keys of the loop at the kernel's rate
/// per SM. A query seeing K keys per call runs at K/(K+k0), relative to reference_attention_keys
/// (docs/validation.md, "Attention length").
double ChipModel::attention_utilisation(const workload::Op& op, core::FlopRate rate) const {
  if (!chip_.gpu || cal_.attention_prologue_rate.base() <= 0 || cal_.attention_prologue_sms <= 0) return 1.0;
  const double sms = chip_.gpu->sm_count > 0 ? chip_.gpu->sm_count : cal_.attention_prologue_sms;
  const double per_sm = rate.base() / sms;
  const double reference_per_sm = cal_.attention_prologue_rate.base() / cal_.attention_prologue_sms;
  const double k0 = cal_.attention_prologue_keys * per_sm / reference_per_sm;
  const double keys = keys_per_call(op), ref = cal_.reference_attention_keys;
  return (keys / (keys + k0)) / (ref / (ref + k0));
}

// Mamba-2's chunked SSD (mamba_chunk_scan_combined) and DeltaNet's chunked delta rule: five
// kernels (dt cumsum, chunk states, state passing, C·Bᵀ, chunk scan) of small bf16 matmuls, timed
// like flash attention. HBM: x, B, C and dt read by the chunk-state and chunk-scan kernels, y
// written once, and the fp32 chunk states written, read and rewritten by the state passing, and
// read by the scan. Mamba-1's selective scan is one kernel that keeps its state on chip over the
// whole sequence: no chunk states.
OpTime ChipModel::scan_time(const workload::Op& op, bool bwd, double act_b) const {
  OpTime out;
  const Dtype d = best_dtype(Dtype::Bf16);
  out.dtype = d;
  const double f = op.flops() * (bwd ? 2.5 : 1.0);
  const core::FlopRate rate = chip_.peak_for(d) * (cal_.attention_efficiency * cal_.power_cap_factor *
                                                   (bwd ? cal_.attention_bwd_ratio : 1.0));
  const double tokens = static_cast<double>(op.m);
  const double x = static_cast<double>(op.heads * op.d_v), bc = 2.0 * static_cast<double>(op.kv_heads * op.d_qk);
  const bool selective = op.scan_kind == workload::Op::ScanKind::Selective;
  const double chunks = selective ? 0.0 : std::ceil(tokens / static_cast<double>(std::max<long long>(1, op.q_len)));
  const double states = chunks * static_cast<double>(op.heads * op.d_v * op.d_qk) * 4.0 * 4.0;
  const double bytes = (tokens * act_b * (2.0 * (x + bc + static_cast<double>(op.heads)) + x) + states) *
                       (bwd ? 2.5 : 1.0);
  const core::Seconds tm = memory_time(core::bytes(bytes));
  const double kernels = (selective ? 1.0 : 5.0) * (bwd ? 2.0 : 1.0);
  out.time = core::max(core::flops(f) / rate, tm) + cal_.kernel_overhead * kernels;
  out.flops = core::flops(f);
  out.hbm_bytes = core::bytes(bytes);
  out.compute_bound = core::flops(f) / rate >= tm;
  return out;
}

// A GEMM: the TensorE/tensor-core time at the tile utilisation, the HBM stream of W, X and Y,
// Trainium's PSUM read-out, and the quantisation kernels of a low-precision GEMM.
OpTime ChipModel::gemm_time(const workload::Op& op, const Precision& p, bool bwd, bool dgrad_only) const {
  OpTime out;
  const double act_b = core::bytes_per_element(p.activations);
  // Adapters and the weights a checkpoint keeps unquantized run in bf16 whatever the plan's format.
  const Dtype d = best_dtype(op.adapter || op.unquantized ? Dtype::Bf16 : p.gemm);
  out.dtype = d;
  const double util = std::max(1e-3, gemm_utilisation(op, d));
  const double f = op.flops() * (bwd ? 2.0 : 1.0);  // dgrad + wgrad; forward or dgrad alone: 1
  const core::Seconds tc = core::flops(f) / (achievable_flops(d) * util);
  const double cnt = static_cast<double>(op.count);
  const double mk = static_cast<double>(op.m) * static_cast<double>(op.k) * cnt;
  const double mn = static_cast<double>(op.m) * static_cast<double>(op.n) * cnt;
  const double kn = static_cast<double>(op.k) * static_cast<double>(op.n) * cnt;
  const double wb = core::bytes_per_element(op.unquantized ? workload::unquantized_weight_dtype(p.weights) : p.weights);
  // Forward reads W, X and writes Y; dgrad alone reads W, dY and writes dX (the same bytes).
  double bytes = kn * wb + (mk + mn) * act_b;
  if (bwd) bytes = 2.0 * bytes + kn * 4.0;  // read W, dY, X; write dX, dW (fp32 accumulate)
  const core::Seconds tm = memory_time(core::bytes(bytes));
  // Trainium: the fp32 accumulators are read out of PSUM by VectorE/ScalarE, once per output
  // element: m·n forward; m·k (dgrad) and k·n (wgrad) backward. Bound below K ≈ 100 (bf16) to
  // 350 (MX) per core, where the array outpaces the read-out (docs/calibration.md).
  const core::Seconds tpsum = psum_readout_time(bwd ? (mk + kn) : dgrad_only ? mk : mn);
  // Low-precision GEMMs need their activation inputs quantised by separate kernels (read
  // bf16, write the 1-byte format: 3 bytes per element): X forward; dY and Xᵀ backward; dY
  // alone for dgrad.
  double cast = 0.0;
  if (is_low_precision(d)) cast = (bwd ? (mn + mk) : dgrad_only ? mn : mk) * 3.0;
  out.time = core::max(core::max(tc, tm), tpsum) + memory_time(core::bytes(cast)) +
             cal_.kernel_overhead * (bwd ? 2.0 : 1.0) * (cast > 0 ? 2.0 : 1.0);
  bytes += cast;
  out.flops = core::flops(f);
  out.hbm_bytes = core::bytes(bytes);
  out.compute_bound = tc >= tm;
  out.psum_bound = tpsum > core::max(tc, tm);
  return out;
}

// Flash attention in bf16 (fp8 attention is not used by the training recipes modelled; serving
// kernels read the KV cache in its own dtype).
OpTime ChipModel::attention_time(const workload::Op& op, const Precision& p, bool bwd) const {
  OpTime out;
  const double act_b = core::bytes_per_element(p.activations);
  const Dtype d = best_dtype(Dtype::Bf16);
  out.dtype = d;
  const double f = op.flops() * (bwd ? 2.5 : 1.0);  // backward: 5 GEMMs vs 2 forward
  const core::FlopRate forward = chip_.peak_for(d) * (cal_.attention_efficiency * cal_.power_cap_factor);
  const core::FlopRate rate = forward * (attention_utilisation(op, forward) * (bwd ? cal_.attention_bwd_ratio : 1.0));
  const core::Seconds tc = core::flops(f) / rate;
  const double b = static_cast<double>(op.batch);
  const double q = b * static_cast<double>(op.q_len) * static_cast<double>(op.heads) *
                   static_cast<double>(op.d_qk + op.d_v) * act_b;
  double kvlen = static_cast<double>(op.kv_len);
  if (op.window > 0) kvlen = std::min(kvlen, static_cast<double>(op.window));
  const double kv = b * kvlen * static_cast<double>(op.kv_heads) * static_cast<double>(op.d_qk + op.d_v) *
                    core::bytes_per_element(p.kv);
  const double bytes = (q + kv) * (bwd ? 2.5 : 1.0);
  const core::Seconds tm = memory_time(core::bytes(bytes));
  out.time = core::max(tc, tm) + cal_.kernel_overhead * (bwd ? 2.0 : 1.0);
  out.flops = core::flops(f);
  out.hbm_bytes = core::bytes(bytes);
  out.compute_bound = tc >= tm;
  return out;
}

// Elementwise work and MoE dispatch: the HBM stream of the elements; on Trainium also VectorE
// (lanes × clock per NeuronCore), whichever is slower.
OpTime ChipModel::elementwise_time(const workload::Op& op, const Precision& p, bool bwd) const {
  OpTime out;
  const double bytes = op.elements * core::bytes_per_element(p.activations) * (bwd ? 2.0 : 1.0);
  core::Seconds t = memory_time(core::bytes(bytes));
  if (chip_.neuron && chip_.neuron->vector_lanes_bf16 > 0) {
    const auto& nc = *chip_.neuron;
    const core::Hertz lanes =
        nc.vector_clock.value * static_cast<double>(nc.vector_lanes_bf16) * static_cast<double>(nc.cores_per_chip);
    const double elements = op.elements * (bwd ? 2.0 : 1.0);
    t = core::max(t, core::seconds(elements / lanes.base()));
  }
  out.time = t + cal_.kernel_overhead;
  out.flops = core::flops(op.elements);
  out.hbm_bytes = core::bytes(bytes);
  out.compute_bound = false;
  return out;
}

OpTime ChipModel::time(const workload::Op& op, const Precision& p, Pass pass) const {
  // A frozen weight's GEMM (LoRA) computes its input gradient only: one GEMM like the forward.
  const bool dgrad_only = pass == Pass::Backward && op.kind == workload::OpKind::Gemm && op.frozen;
  const bool bwd = pass == Pass::Backward && !dgrad_only;
  switch (op.kind) {
    case workload::OpKind::Gemm: return gemm_time(op, p, bwd, dgrad_only);
    case workload::OpKind::Attention: return attention_time(op, p, bwd);
    case workload::OpKind::Scan: return scan_time(op, bwd, core::bytes_per_element(p.activations));
    case workload::OpKind::Elementwise:
    case workload::OpKind::MoeDispatch: return elementwise_time(op, p, bwd);
  }
  return OpTime{};
}

}  // namespace xpusim::compute
