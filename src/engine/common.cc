#include "common.h"

#include <algorithm>
#include <cmath>

#include "xpusim/core/format.h"

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
