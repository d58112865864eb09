#include "xpusim/mapping/schedule.h"

#include "schedules/builtin.h"
#include "xpusim/core/check.h"
#include "xpusim/mapping/plan.h"

namespace xpusim::mapping {

const char* pass_letter(Pass p) {
  switch (p) {
    case Pass::Forward: return "F";
    case Pass::Backward: return "B";
    case Pass::BackwardInput: return "B";
    case Pass::BackwardWeight: return "W";
  }
  return "?";
}

void register_builtin_schedules(ScheduleRegistry& reg) {
  for (auto s : {make_one_f_one_b(), make_interleaved(), make_dualpipe()}) reg.add(s->name(), s->description(), s);
}

const ScheduleRegistry& schedules() {
  static const ScheduleRegistry reg = [] {
    ScheduleRegistry r("pipeline schedule");
    register_builtin_schedules(r);
    return r;
  }();
  return reg;
}

std::string schedule_name(const TrainPlan& plan) {
  if (!plan.schedule.empty()) return plan.schedule;
  return plan.vpp > 1 ? "interleaved" : "1f1b";
}

const Schedule& schedule_of(const TrainPlan& plan) {
  return *schedules().get(schedule_name(plan), "plan.schedule");
}

PipelineShape pipeline_shape(const TrainPlan& plan) {
  return PipelineShape{plan.pp, plan.vpp, static_cast<int>(std::max<long long>(1, plan.micro_batches()))};
}

std::vector<int> layers_per_stage(int layers, int pp) {
  XS_CHECK(pp >= 1, "pp must be positive");
  std::vector<int> per(static_cast<size_t>(pp), layers / pp);
  int rem = layers % pp;
  for (int i = 0; rem > 0; i = (i + 1) % pp) {
    const int idx = pp <= 2 ? i : 1 + (i % (pp - 2));
    ++per[static_cast<size_t>(idx)];
    --rem;
  }
  return per;
}

namespace detail {

std::vector<Slot> one_f_one_b_order(int warmup, int total, const std::function<ComputeTask(int)>& fwd,
                                    const std::function<ComputeTask(int)>& bwd) {
  std::vector<Slot> out;
  out.reserve(static_cast<size_t>(2 * total));
  warmup = std::min(warmup, total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) out.push_back(Slot{fwd(f), {}, false});
  while (f < total) {
    out.push_back(Slot{fwd(f++), {}, false});
    out.push_back(Slot{bwd(b++), {}, false});
  }
  while (b < total) out.push_back(Slot{bwd(b++), {}, false});
  return out;
}

core::Seconds max_over(const PipelineTimes& t, core::Seconds (*f)(const ChunkTimes&)) {
  core::Seconds best;
  for (const auto& c : t.rank) best = core::max(best, f(c));
  return best;
}

core::Seconds mean_over(const PipelineTimes& t, core::Seconds (*f)(const ChunkTimes&)) {
  core::Seconds sum;
  for (const auto& c : t.rank) sum += f(c);
  return t.rank.empty() ? sum : sum / static_cast<double>(t.rank.size());
}

}  // namespace detail

}  // namespace xpusim::mapping
