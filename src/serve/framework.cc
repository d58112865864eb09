#include "xpusim/serve/framework.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace xpusim::serve {

namespace {

struct Name { Framework f; const char* name; };
constexpr Name kNames[] = {
    {Framework::TensorRtLlm, "trtllm"},    {Framework::Vllm, "vllm"},
    {Framework::Nim, "nim"},               {Framework::Sglang, "sglang"},
    {Framework::NeuronTnx, "neuron-tnx"},  {Framework::NeuronNxdi, "neuron-nxdi"},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

std::string framework_name(Framework f) {
  for (const auto& n : kNames) if (n.f == f) return n.name;
  return "?";
}

std::optional<Framework> parse_framework(const std::string& name) {
  const std::string l = lower(name);
  for (const auto& n : kNames) if (l == n.name) return n.f;
  if (l == "tensorrt-llm" || l == "trt-llm") return Framework::TensorRtLlm;
  if (l == "nxdi" || l == "neuron") return Framework::NeuronNxdi;
  if (l == "tnx" || l == "transformers-neuronx") return Framework::NeuronTnx;
  return std::nullopt;
}

std::vector<std::string> framework_names() {
  std::vector<std::string> v;
  for (const auto& n : kNames) v.push_back(n.name);
  return v;
}

Framework default_framework(const hw::ChipSpec& chip) {
  return chip.family == hw::ChipFamily::Trainium ? Framework::NeuronNxdi : Framework::TensorRtLlm;
}

std::string scheduler_name(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::StaticBatch: return "static";
    case SchedulerKind::DecodePriority: return "decode-priority";
    case SchedulerKind::PrefillPriority: return "prefill-priority";
  }
  return "?";
}

std::optional<SchedulerKind> parse_scheduler(const std::string& name) {
  const std::string l = lower(name);
  if (l == "static" || l == "static-batch") return SchedulerKind::StaticBatch;
  if (l == "decode-priority" || l == "continuous" || l == "inflight") return SchedulerKind::DecodePriority;
  if (l == "prefill-priority") return SchedulerKind::PrefillPriority;
  return std::nullopt;
}

// The serving-kernel parameters. Fitted by hand on the infer rows of
// ../shared/validation/public.csv, one family at a time (docs/serving.md): kernel efficiencies
// per hardware family (they are properties of the inference kernels — fused fp8/fp4 GEMMs,
// paged/flash attention, CUDA graphs — not of the training recipes the compute layer's
// calibration was fitted on), and per framework the host overheads.
FrameworkProfile framework_profile(Framework f, const hw::ChipSpec& chip) {
  FrameworkProfile p;
  p.framework = f;
  p.calibration = compute::calibration_for(chip);
  auto& c = p.calibration;
  const std::string fam = c.family;
  const bool neuron = chip.family == hw::ChipFamily::Trainium;
  // Every kernel parameter is set here, not inherited: the compute layer's calibration is
  // refitted on training rows and must not move the serving predictions with it.
  c.power_cap_factor = compute::calibration_for(chip).power_cap_factor;
  c.fp4_efficiency = 1.0;
  if (!neuron) {
    // Inference GEMMs on NVIDIA run fused, large-M kernels (cuBLASLt / CUTLASS fp8 and fp4
    // with per-tensor or block scales) close to peak; CUDA graphs hide launch overhead.
    c.gemm_efficiency = 0.80;
    c.low_precision_efficiency = 0.80;
    c.attention_efficiency = 0.55;
    c.hbm_efficiency = 0.85;
    c.kernel_overhead = core::microseconds(1.0);
    if (fam == "nvidia-blackwell") c.fp4_efficiency = 0.75;  // fp4 kernels, v4.1-era: 0.80 x 0.75 = 0.60
  } else {
    c.gemm_efficiency = 0.75;
    c.low_precision_efficiency = 0.85;
    c.attention_efficiency = 0.45;
    c.hbm_efficiency = 0.80;
    c.kernel_overhead = core::microseconds(2.0);
  }
  switch (f) {
    case Framework::TensorRtLlm:
    case Framework::Nim:
      // NIM adds its HTTP front end, detokenisation and per-token streaming to every step.
      p.step_overhead = core::microseconds(f == Framework::Nim ? 4500 : 600);
      p.layer_overhead = core::microseconds(0);
      p.scheduler = SchedulerKind::DecodePriority;
      p.kv_policy = KvPolicy::Reserve;  // GUARANTEED_NO_EVICT
      p.chunked_prefill = true;
      p.max_num_seqs = 2048;
      p.max_batched_tokens = 8192;
      p.block_size = 32;
      p.kv_memory_fraction = 0.90;
      break;
    case Framework::Vllm:
      p.step_overhead = core::microseconds(2500);
      p.layer_overhead = core::microseconds(10);
      p.scheduler = SchedulerKind::DecodePriority;  // v1: chunked prefill, decodes first
      p.kv_policy = KvPolicy::OnDemand;
      p.chunked_prefill = true;
      p.max_num_seqs = 256;
      p.max_batched_tokens = 8192;
      p.block_size = 16;
      p.kv_memory_fraction = 0.90;  // gpu_memory_utilization
      break;
    case Framework::Sglang:
      p.step_overhead = core::microseconds(1000);
      p.layer_overhead = core::microseconds(0);
      p.scheduler = SchedulerKind::PrefillPriority;
      p.kv_policy = KvPolicy::OnDemand;
      p.chunked_prefill = true;
      p.max_num_seqs = 1024;
      p.max_batched_tokens = 8192;
      p.block_size = 1;
      p.kv_memory_fraction = 0.88;
      break;
    case Framework::NeuronTnx:
    case Framework::NeuronNxdi: {
      // Both Neuron stacks compile a fixed batch and bucketed whole prompts (no chunking) and
      // reserve the KV cache of a sequence at admission.
      const bool tnx = f == Framework::NeuronTnx;
      p.prefill_efficiency = tnx ? 0.34 : 0.45;
      p.prefill_step_overhead = core::microseconds(tnx ? 7000 : 0);
      p.step_overhead = core::microseconds(tnx ? 1000 : 11000);
      p.layer_overhead = core::microseconds(tnx ? 130 : 20);
      p.scheduler = SchedulerKind::DecodePriority;
      p.kv_policy = KvPolicy::Reserve;
      p.chunked_prefill = false;
      p.max_num_seqs = 64;  // compiled batch size; NxD samples use 4-64
      p.max_batched_tokens = 1 << 20;
      p.block_size = 128;
      break;
    }
  }
  return p;
}

void apply_framework_version(FrameworkProfile& p, const std::string& version) {
  if (version.empty()) return;
  const double v = std::atof(version.c_str());
  if ((p.framework == Framework::TensorRtLlm || p.framework == Framework::Nim) && v > 0 && v < 0.7)
    p.gqa_kv_sharing = false;  // masked MHA before the XQA kernel
}

}  // namespace xpusim::serve
