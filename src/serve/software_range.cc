// The software range of a Trainium serving forecast (include/xpusim/serve/software_range.h).

#include "xpusim/serve/software_range.h"

#include "xpusim/calib/params.h"

namespace xpusim::serve {

namespace {

const char* const kGpuGradeFramework = "trtllm";
const char* const kGpuGradeKernels = "nvidia-blackwell";

/// One end: its software (`stack`, and `software` = the stack and what it stands for) and figures.
SoftwareEnd end_of(const ServeReport& r, std::string stack, const std::string& what) {
  SoftwareEnd e;
  e.software = stack + what;
  e.stack = std::move(stack);
  e.ttft_mean_ms = r.sim.ttft_ms.mean;
  e.tpot_mean_ms = r.sim.tpot_ms.mean;
  e.ttft_p90_ms = r.sim.ttft_ms.p90;
  e.tpot_p90_ms = r.sim.tpot_ms.p90;
  e.output_tokens_per_s_per_chip = r.output_tokens_per_s_per_chip;
  e.e2e_mean_s = r.sim.e2e_s.mean;
  return e;
}

std::string stack_text(const ServeReport& r) { return r.framework + " " + r.framework_version_range; }

bool default_range_validated(Framework f, const calib::Params& params) {
  const calib::Stack* stack = params.stack("serving." + framework_name(f));
  return stack != nullptr && stack->default_range().validated;
}

/// The slowest run of the validated Neuron stacks on the same deployment (the central run's
/// own stack among them): the low end.
SoftwareEnd slowest_validated_stack(const ServeReport& central, const ServeEnv& env) {
  const std::string what = " (the slowest validated Neuron serving stack on this deployment and load)";
  SoftwareEnd low = end_of(central, stack_text(central), what);
  for (const std::string& name : framework_names()) {
    const Framework f = *parse_framework(name);
    if (!is_neuron(f) || name == central.framework || !default_range_validated(f, *env.calibration)) continue;
    ServeScenario sc = central.scenario;
    sc.framework = f;
    sc.framework_version.clear();
    sc.trace = false;
    const auto run = run_scenario(sc, env);
    if (run && run->sim.e2e_s.mean > low.e2e_mean_s) low = end_of(*run, stack_text(*run), what);
  }
  return low;
}

/// The run's stack with GPU-grade serving software's keys on the same chip: the high end.
std::optional<SoftwareEnd> gpu_grade(const ServeReport& central, const ServeEnv& env) {
  calib::Params params = *env.calibration;
  auto copy = [&](const std::string& from, const std::string& to) {
    calib::Parameter p = params.get(from);
    p.key = to;
    p.basis = "GPU-grade serving software: the value of " + from;
    params.set(p);
  };
  for (const auto& k : gpu_grade_framework_keys())
    copy("serving.frameworks." + std::string(kGpuGradeFramework) + "." + k, "serving.frameworks." + central.framework + "." + k);
  for (const auto& k : gpu_grade_kernel_keys())
    copy("serving.kernels." + std::string(kGpuGradeKernels) + "." + k, "serving.kernels.trainium." + k);
  ServeScenario sc = central.scenario;
  sc.trace = false;
  const auto run = run_scenario(sc, ServeEnv{env.catalog, env.models_dir, &params});
  if (!run) return std::nullopt;
  return end_of(*run, central.framework + " with GPU-grade serving software",
                ": TensorRT-LLM's step, layer, sequence and prompt overheads and prompt efficiencies, and the "
                "Blackwell serving kernels' GEMM, attention and HBM efficiencies, on this chip's peaks");
}

}  // namespace

const std::vector<std::string>& gpu_grade_framework_keys() {
  static const std::vector<std::string> keys = {"step_overhead",          "layer_overhead",
                                                "host_time_per_sequence", "prefill_efficiency",
                                                "prefill_step_overhead",  "moe_prefill_efficiency"};
  return keys;
}

const std::vector<std::string>& gpu_grade_kernel_keys() {
  static const std::vector<std::string> keys = {"gemm_efficiency", "low_precision_efficiency", "attention_efficiency",
                                                "hbm_efficiency"};
  return keys;
}

std::optional<SoftwareRange> software_range(const ServeReport& central, const ServeEnv& env) {
  const auto f = parse_framework(central.framework);
  if (!f || !is_neuron(*f) || !central.pools.empty()) return std::nullopt;
  const auto high = gpu_grade(central, env);
  if (!high) return std::nullopt;
  return SoftwareRange{stack_text(central), slowest_validated_stack(central, env), *high};
}

}  // namespace xpusim::serve
