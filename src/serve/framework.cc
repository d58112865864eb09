#include "xpusim/serve/framework.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "xpusim/core/diagnostics.h"

namespace xpusim::serve {

namespace {

struct Name { Framework f; const char* name; };
constexpr Name kNames[] = {
    {Framework::TensorRtLlm, "trtllm"},    {Framework::Vllm, "vllm"},
    {Framework::Nim, "nim"},               {Framework::Sglang, "sglang"},
    {Framework::NeuronTnx, "neuron-tnx"},  {Framework::NeuronNxdi, "neuron-nxdi"},
    {Framework::NeuronOptimum, "optimum-neuron"}, {Framework::NeuronVllm, "vllm-neuron"},
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

bool is_neuron(Framework f) {
  return f == Framework::NeuronTnx || f == Framework::NeuronNxdi || f == Framework::NeuronOptimum ||
         f == Framework::NeuronVllm;
}

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

namespace {

/// Serving-kernel efficiencies per hardware family (serving.kernels.<family>): properties of the
/// inference kernels (fused fp8/fp4 GEMMs, paged/flash attention, CUDA graphs), not of the
/// training recipes compute.yaml was fitted on, so every kernel parameter is replaced; only the
/// power-cap factor and the attention backward ratio come from the compute calibration.
compute::Calibration serving_kernels(const hw::ChipSpec& chip, const calib::Params& params) {
  compute::Calibration c = compute::calibration_for(chip, params);
  compute::read_kernel_efficiencies(params, "serving.kernels." + c.family + ".", c);
  return c;
}

/// The scheduler behaviour a user of the framework gets (what the framework does, not a number).
void scheduler_behaviour(Framework f, FrameworkProfile& p) {
  switch (f) {
    case Framework::TensorRtLlm:
    case Framework::Nim:
      p.scheduler = SchedulerKind::DecodePriority;
      p.kv_policy = KvPolicy::Reserve;  // GUARANTEED_NO_EVICT
      p.chunked_prefill = true;
      break;
    case Framework::Vllm:
      p.scheduler = SchedulerKind::DecodePriority;  // v1: chunked prefill, decodes first
      p.kv_policy = KvPolicy::OnDemand;
      p.chunked_prefill = true;
      break;
    case Framework::Sglang:
      p.scheduler = SchedulerKind::PrefillPriority;
      p.kv_policy = KvPolicy::OnDemand;
      p.chunked_prefill = true;
      break;
    case Framework::NeuronTnx:
    case Framework::NeuronNxdi:
    case Framework::NeuronOptimum:
    case Framework::NeuronVllm:
      // Both Neuron stacks compile a fixed batch and bucketed whole prompts (no chunking) and
      // reserve the KV cache of a sequence at admission.
      p.scheduler = SchedulerKind::DecodePriority;
      p.kv_policy = KvPolicy::Reserve;
      p.chunked_prefill = false;
      break;
  }
}

/// Reads the framework's parameters under its version range: a range's setting, else the
/// framework's value (serving.frameworks.<name>.<key>).
class StackReader {
 public:
  StackReader(const calib::Params& params, Framework f, const std::string& version) : params_(params) {
    section_ = "serving.frameworks." + framework_name(f);
    if (const calib::Stack* stack = params.stack("serving." + framework_name(f)))
      choice_ = calib::choose_stack(*stack, version, "framework");
    else if (!version.empty())
      core::fail("framework", "no version table for " + framework_name(f), version,
                 "no version (data/calibration/stacks/serving.yaml lists none for it)");
  }
  const calib::StackChoice& choice() const { return choice_; }
  double number(const std::string& name) const {
    return choice_.stack ? calib::stack_value(params_, choice_, name).quantity.value : params_.number(section_ + "." + name);
  }
  core::Seconds seconds(const std::string& name) const {
    return choice_.stack ? core::seconds(calib::stack_value(params_, choice_, name).quantity.value)
                         : params_.seconds(section_ + "." + name);
  }
  long long count(const std::string& name) const { return static_cast<long long>(number(name)); }
  bool on(const std::string& name) const { return number(name) > 0.5; }

 private:
  const calib::Params& params_;
  std::string section_;
  calib::StackChoice choice_;
};

}  // namespace

// Values and how they were fitted: data/calibration/serving.yaml, docs/serving.md; version
// ranges: data/calibration/stacks/serving.yaml.
FrameworkProfile framework_profile(Framework f, const std::string& version, const hw::ChipSpec& chip,
                                   const calib::Params& params) {
  FrameworkProfile p;
  p.framework = f;
  p.calibration = serving_kernels(chip, params);
  scheduler_behaviour(f, p);
  const StackReader k(params, f, version);
  if (const calib::StackRange* range = k.choice().range) {
    p.version = k.choice().version;
    p.version_range = range->versions.text;
    p.version_validated = range->validated;
  }
  p.step_overhead = k.seconds("step_overhead");
  p.layer_overhead = k.seconds("layer_overhead");
  p.host_time_per_sequence = k.seconds("host_time_per_sequence");
  p.eager_operator_host_time = k.seconds("eager_operator_host_time");
  p.moe_eager_operators = k.number("moe_eager_operators");
  p.prefill_efficiency = k.number("prefill_efficiency");
  p.prefill_step_overhead = k.seconds("prefill_step_overhead");
  p.max_num_seqs = k.count("max_num_seqs");
  p.max_batched_tokens = k.count("max_batched_tokens");
  p.block_size = k.count("block_size");
  p.kv_memory_fraction = k.number("kv_memory_fraction");
  p.new_token_ratio = k.number("new_token_ratio");
  p.schedule_ahead = k.on("schedule_ahead");
  p.gqa_kv_sharing = k.on("gqa_kv_sharing");
  p.moe_skip_idle_experts = k.on("moe_skip_idle_experts");
  p.prefix_caching = k.on("prefix_caching");
  p.kv_load_layerwise = k.on("kv_load_layerwise");
  p.moe_prefill_block = k.count("moe_prefill_block");
  p.max_prefill_seqs = k.count("max_prefill_seqs");
  p.moe_prefill_efficiency = k.number("moe_prefill_efficiency");
  p.static_shape_min_bucket = k.count("static_shape_min_bucket");
  // The permute and unpermute kernels' HBM traffic per routed element (serving.moe,
  // docs/serving.md "MoE token routing").
  p.moe_route_bytes_per_element = params.bytes("serving.moe.route_bytes_per_element");
  return p;
}

}  // namespace xpusim::serve
