#pragma once
// The software range of a Trainium serving forecast (docs/serving.md, "Software range"): the
// same deployment under the slowest validated Neuron serving stack and under GPU-grade serving
// software on the same chip's peaks, beside the stack the run assumed. It bounds what the Neuron
// software alone does to the answer; the statistical band (validation/trust.h) is the other half.

#include <optional>
#include <string>

#include "xpusim/serve/scenario.h"

namespace xpusim::serve {

/// The serving keys GPU-grade software sets (the high end): TensorRT-LLM's per-step, per-layer,
/// per-sequence and prompt overheads and prompt efficiencies, and the newest GPU family's
/// serving-kernel efficiencies (fractions of peak: hardware-independent). Not TensorRT-LLM's
/// eager_operator_host_time: that is the PyTorch backend's dispatch of prompt steps outside CUDA
/// graphs, a cost a Neuron stack's compiled graphs do not pay (0), so the high end keeps the
/// Neuron stack's value rather than take on a weakness of the GPU stack.
const std::vector<std::string>& gpu_grade_framework_keys();
const std::vector<std::string>& gpu_grade_kernel_keys();

/// For a run on a Trainium chip (empty otherwise, and when an end cannot run): the low end is
/// the slowest (highest mean end-to-end latency) of the validated Neuron stacks the chip runs,
/// the run's own included; the high end is the run's stack with gpu_grade_* keys from
/// serving.frameworks.trtllm and serving.kernels.nvidia-blackwell.
std::optional<SoftwareRange> software_range(const ServeReport& central, const ServeEnv& env);

}  // namespace xpusim::serve
