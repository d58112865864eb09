#include "common.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/check.h"
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
  XS_CHECK(s.calibration != nullptr, "TrainScenario::calibration not set");
  compute::Calibration c = compute::calibration_for(s.system->chip, *s.calibration);
  if (c.family == "nvidia-hopper" || c.family == "nvidia-blackwell") {
    c.gemm_efficiency *= s.framework.compute_efficiency;
    c.attention_efficiency *= s.framework.attention_efficiency;
  }
  if (c.family == "trainium") {  // the same stack's kernels, against NxD's NKI kernels
    c.gemm_efficiency *= s.framework.compute_efficiency;
    c.attention_efficiency *= s.framework.compute_efficiency;
  }
  return c;
}

net::TopologyOptions topology_options(const TrainScenario& s) {
  XS_CHECK(s.calibration != nullptr, "TrainScenario::calibration not set");
  net::TopologyOptions o;
  o.params = net::network_params(*s.calibration);
  return o;
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
  // MFU against the peak of the precision that ran (the requested one, or its fallback when
  // the user allowed one).
  r.executed_precision = compute::executed_dtype(chip, plan.precision);
  r.mfu = r.model_tflops_per_chip * 1e12 / chip.peak_for(r.executed_precision).base();
  r.schedule = mapping::schedule_name(plan);
  r.stage_layers = mapping::layers_per_stage(s.model.layers, plan.pp);
  const auto& schedule = mapping::schedule_of(plan);
  const auto shape = mapping::pipeline_shape(plan);
  r.stage_placement = schedule.chunks_per_rank(shape) == 1 ? "rank r: stage r"
                      : schedule.weight_copies() == 2
                          ? "rank r: stages r and " + std::to_string(plan.pp - 1) + "-r (one per direction)"
                          : "rank r: " + std::to_string(schedule.chunks_per_rank(shape)) + " chunks of stage r";
  r.memory = mapping::train_memory_per_chip(s.model, plan, mapping::memory_params(*s.calibration));
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

FrameworkParams framework_params(const std::string& name, const calib::Params& params) {
  const std::vector<std::string> names = framework_names(params);
  // NAME@VERSION: training presets name their recipe and era themselves (megatron,
  // megatron-lm-2021, …); no training framework has a version table (serving stacks do).
  if (const size_t at = name.find('@'); at != std::string::npos)
    core::fail("framework", "training presets have no version ranges", name,
               "a preset name without @VERSION: one of " + core::join(names) +
                   " (a preset is one framework's recipe and era; versioned stacks are the serving frameworks')");
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    core::fail("framework", "unknown framework '" + name + "'", name, "one of: " + core::join(names),
               core::did_you_mean(name, names));
  }
  const std::string key = "training.frameworks." + name + ".";
  FrameworkParams f;
  f.name = name;
  f.compute_efficiency = params.number(key + "compute_efficiency");
  f.attention_efficiency = params.number(key + "attention_efficiency");
  f.tp_comm_exposed = params.number(key + "tp_comm_exposed");
  f.ep_comm_exposed = params.number(key + "ep_comm_exposed");
  f.dp_overlap = params.flag(key + "dp_overlap");
  f.selective_scope = params.flag(key + "selective_saves_projections_only")
                          ? mapping::SelectiveScope::AllButProjections
                          : mapping::SelectiveScope::AttentionCore;
  f.recompute_some_layers = params.flag(key + "recompute_some_layers");
  f.moe_route_cost_per_element = params.seconds("training.common.moe_route_cost_per_element");
  f.fsdp_overlap = params.number("training.common.fsdp_overlap");
  f.step_overhead = params.seconds("training.common.step_overhead");
  f.optimizer_kernels = params.number("training.common.optimizer_kernels");
  f.cp_attention_backward_ratio = params.number("training.common.cp_attention_backward_ratio");
  return f;
}

std::vector<std::string> framework_names(const calib::Params& params) {
  return params.sections("training.frameworks");
}

}  // namespace xpusim::engine
