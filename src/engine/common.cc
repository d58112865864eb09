#include "common.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/mapping/schedule.h"

namespace xpusim::engine::detail {

int dp_buckets(const StageCost& s) { return std::max(1, s.layers); }

core::Seconds exposed_bucketed(core::Seconds comm, core::Seconds window, int buckets) {
  if (comm <= core::Seconds{}) return core::Seconds{};
  const double n = static_cast<double>(std::max(1, buckets));
  // Bucket i is ready at (i+1)/n of the window and takes comm/n; the stream finishes at
  // max over i of ready_i + (n - i)·comm/n, i.e. max(window + comm/n, window/n + comm).
  const core::Seconds end = core::max(window + comm / n, window / n + comm);
  return core::max(core::Seconds{}, end - window);
}

std::optional<TrainResult> check(const TrainScenario& s) {
  TrainResult r;
  r.feasible = false;
  if (!s.system) {
    r.reason = "no system";
    return r;
  }
  auto ok = mapping::check_train_plan(s.plan, s.model, s.plan.chips());
  if (!ok) {
    r.reason = ok.error();
    return r;
  }
  if (s.plan.micro_batches() < 1) {
    r.reason = "global batch " + std::to_string(s.plan.global_batch) +
               " is smaller than dp × micro-batch = " +
               std::to_string(static_cast<long long>(s.plan.dp) * s.plan.micro_batch);
    return r;
  }
  return std::nullopt;
}

compute::Calibration calibration(const TrainScenario& s) {
  compute::Calibration c = compute::calibration_for(s.system->chip);
  if (c.family == "nvidia-hopper" || c.family == "nvidia-blackwell") {
    c.gemm_efficiency *= s.framework.compute_efficiency;
    c.attention_efficiency *= s.framework.attention_efficiency;
  }
  return c;
}

void finish(const TrainScenario& s, const StepCosts& c, TrainResult& r) {
  const auto& plan = s.plan;
  const double chips = static_cast<double>(plan.chips());
  const double t = core::to_seconds(r.step_time);
  r.tokens_per_step = static_cast<double>(plan.global_batch) * static_cast<double>(plan.seq_len);
  r.tokens_per_s = r.tokens_per_step / t;
  r.tokens_per_s_per_chip = r.tokens_per_s / chips;
  r.model_tflops_per_chip = c.model_flops_per_step / t / chips / 1e12;
  r.hw_tflops_per_chip = c.hw_flops_per_step / t / chips / 1e12;
  const auto& chip = s.system->chip;
  const core::Dtype pd = chip.supports(plan.precision) ? plan.precision : core::Dtype::Bf16;
  r.mfu = r.model_tflops_per_chip * 1e12 / chip.peak_for(pd).base();
  r.schedule = mapping::schedule_name(plan);
  r.stage_layers = mapping::layers_per_stage(s.model.layers, plan.pp);
  const auto& schedule = mapping::schedule_of(plan);
  const auto shape = mapping::pipeline_shape(plan);
  r.stage_placement = schedule.chunks_per_rank(shape) == 1 ? "rank r: stage r"
                      : schedule.weight_copies() == 2
                          ? "rank r: stages r and " + std::to_string(plan.pp - 1) + "-r (one per direction)"
                          : "rank r: " + std::to_string(schedule.chunks_per_rank(shape)) + " chunks of stage r";
  r.memory = mapping::train_memory_per_chip(s.model, plan);
  r.hbm_capacity = chip.hbm_capacity.value;
  r.fits = r.memory.total() <= r.hbm_capacity;
  // Activity of the busiest stage: per micro-batch × micro-batches + per-step extras.
  const StageCost* busiest = &c.stages[0];
  for (const auto& st : c.stages)
    if (st.fwd() + st.bwd() > busiest->fwd() + busiest->bwd()) busiest = &st;
  r.activity = busiest->activity.scaled(static_cast<double>(c.micro_batches));
  r.activity += c.step_activity;
  if (!r.fits) {
    r.reason = "out of memory: needs " + core::fmt_num(core::to_gib(r.memory.total()), 4) +
               " GiB per chip, the chip has " + core::fmt_num(core::to_gib(r.hbm_capacity), 4) + " GiB";
  }
}

}  // namespace xpusim::engine::detail

namespace xpusim::engine {

// Framework presets. Basis (docs/calibration.md): Megatron-LM/NeMo with Transformer Engine and
// NeuronX Distributed are the vendor-tuned stacks (factor 1). The PyTorch-native stacks
// (torchtitan, llm-foundry) run FlashAttention-2 / SDPA and unfused elementwise kernels; fitted
// once on their public rows as one factor each. TP overlap: Megatron's userbuffers overlap hides
// part of the TP collectives; torchtitan's async-TP similarly; NxD overlaps little.
FrameworkParams framework_params(const std::string& name) {
  FrameworkParams f;
  f.name = name;
  f.ep_comm_exposed = 0.5;  // all-to-all partly overlapped with the other micro-batch's compute
  f.moe_route_cost_per_element = core::seconds(9e-12);
  if (name == "megatron") {
    f.compute_efficiency = 1.0;
    f.tp_comm_exposed = 0.6;
  } else if (name == "megatron-lm-2021") {
    f.compute_efficiency = 1.0;
    f.tp_comm_exposed = 1.0;
    f.ep_comm_exposed = 1.0;
    f.dp_overlap = false;
  } else if (name == "deepseek") {
    f.compute_efficiency = 1.0;
    f.tp_comm_exposed = 0.6;
    f.ep_comm_exposed = 0.1;
  } else if (name == "torchtitan") {
    f.compute_efficiency = 0.80;
    f.attention_efficiency = 0.55;
    f.tp_comm_exposed = 0.7;
  } else if (name == "llm-foundry") {
    f.compute_efficiency = 0.80;
    f.attention_efficiency = 0.40;  // 2023 Triton flash attention
    f.tp_comm_exposed = 1.0;
  } else if (name == "neuronx-distributed") {
    f.compute_efficiency = 1.0;
    f.tp_comm_exposed = 0.8;
  } else {
    core::fail("framework", "unknown framework '" + name + "'", name, "one of: " + core::join(framework_names()),
               core::did_you_mean(name, framework_names()));
  }
  return f;
}

std::vector<std::string> framework_names() {
  return {"deepseek", "llm-foundry", "megatron", "megatron-lm-2021", "neuronx-distributed", "torchtitan"};
}

}  // namespace xpusim::engine
