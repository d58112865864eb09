// Pipeline schedules and the step plan: every task exactly once, dependencies respected (the
// orders never deadlock), activations in flight bounded by each schedule's closed form, refusals
// that name the constraint, and the registry's did-you-mean.

#include <gtest/gtest.h>

#include <algorithm>

#include "xpusim/core/diagnostics.h"
#include "xpusim/mapping/plan.h"
#include "xpusim/mapping/schedule.h"
#include "xpusim/mapping/step_plan.h"

using namespace xpusim;
using mapping::Pass;
using mapping::PipelineShape;

namespace {

struct Case {
  const char* schedule;
  PipelineShape shape;
};

std::vector<Case> runnable() {
  return {{"1f1b", {1, 1, 3}},         {"1f1b", {4, 1, 6}},         {"1f1b", {8, 1, 3}},
          {"1f1b", {16, 1, 64}},       {"interleaved", {2, 2, 4}},  {"interleaved", {4, 2, 8}},
          {"interleaved", {4, 3, 4}},  {"interleaved", {8, 4, 32}}, {"dualpipe", {2, 1, 4}},
          {"dualpipe", {4, 1, 8}},     {"dualpipe", {8, 1, 20}},    {"dualpipe", {16, 1, 120}}};
}

std::vector<int> no_buckets(const mapping::Schedule& s, const PipelineShape& shape) {
  return std::vector<int>(static_cast<size_t>(shape.pp * s.chunks_per_rank(shape)), 2);
}

/// Runs the graph with unit durations, one slot per rank at a time, until nothing can start.
/// Returns the slots run per rank (equal to the order's length when nothing deadlocks).
std::vector<size_t> run_in_order(const mapping::StepPlan& plan) {
  std::vector<int> pending = plan.pred_count;
  std::vector<size_t> next(static_cast<size_t>(plan.shape.pp), 0);
  auto release = [&](int id, auto& self) -> void {
    for (int k = plan.succ_begin[static_cast<size_t>(id)]; k < plan.succ_begin[static_cast<size_t>(id) + 1]; ++k) {
      const int n = plan.succ[static_cast<size_t>(k)];
      if (--pending[static_cast<size_t>(n)] == 0 && plan.tasks[static_cast<size_t>(n)].kind == mapping::TaskKind::PpSend)
        self(n, self);  // sends run as soon as their input exists
    }
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < plan.shape.pp; ++r) {
      const auto& order = plan.order[static_cast<size_t>(r)];
      auto& i = next[static_cast<size_t>(r)];
      if (i >= order.size()) continue;
      const auto [a, b] = order[i];
      if (pending[static_cast<size_t>(a)] > 0 || (b >= 0 && pending[static_cast<size_t>(b)] > 0)) continue;
      release(a, release);
      if (b >= 0) release(b, release);
      ++i;
      progress = true;
    }
  }
  return next;
}

/// Peak chunk-micro-batches whose forward ran and whose backward (input gradient) did not.
std::vector<int> measured_inflight(const mapping::StepPlan& plan) {
  std::vector<int> peak;
  for (const auto& order : plan.order) {
    int held = 0, most = 0;
    for (const auto& [a, b] : order) {
      for (int id : {a, b}) {
        if (id < 0) continue;
        const Pass p = plan.tasks[static_cast<size_t>(id)].pass;
        if (p == Pass::Forward) most = std::max(most, ++held);
        if (p == Pass::Backward || p == Pass::BackwardInput) --held;
      }
    }
    peak.push_back(most);
  }
  return peak;
}

}  // namespace

TEST(Schedules, EveryTaskExactlyOnceAndDependenciesRespected) {
  for (const auto& c : runnable()) {
    const auto& s = *mapping::schedules().get(c.schedule, "test");
    ASSERT_FALSE(s.refusal(c.shape)) << c.schedule << ": " << *s.refusal(c.shape);
    const auto plan = mapping::build_step_plan(s, c.shape, no_buckets(s, c.shape));
    // Forward + backward (or B + W) of every chunk of every micro-batch's route.
    std::vector<int> count(static_cast<size_t>(c.shape.pp * plan.chunks_per_rank) * c.shape.micro_batches, 0);
    int compute = 0;
    for (const auto& t : plan.tasks) {
      if (t.kind != mapping::TaskKind::Compute) continue;
      ++compute;
      if (t.pass == Pass::Forward)
        ++count[static_cast<size_t>((t.rank * plan.chunks_per_rank + t.chunk) * c.shape.micro_batches + t.micro_batch)];
    }
    size_t hops = 0;
    for (int mb = 0; mb < c.shape.micro_batches; ++mb)
      hops += s.routes(c.shape)[static_cast<size_t>(s.route_of(c.shape, mb))].size();
    EXPECT_EQ(std::count(count.begin(), count.end(), 1), static_cast<long>(hops)) << c.schedule;
    EXPECT_GE(compute, static_cast<int>(2 * hops)) << c.schedule;
    const auto ran = run_in_order(plan);
    for (int r = 0; r < c.shape.pp; ++r)
      EXPECT_EQ(ran[static_cast<size_t>(r)], plan.order[static_cast<size_t>(r)].size())
          << c.schedule << " pp=" << c.shape.pp << " m=" << c.shape.micro_batches << ": rank " << r << " deadlocks";
  }
}

// The closed form's activations in flight (used by the memory model) is what the order holds.
TEST(Schedules, InflightActivationsMatchTheClosedForm) {
  for (const auto& c : runnable()) {
    const auto& s = *mapping::schedules().get(c.schedule, "test");
    const auto plan = mapping::build_step_plan(s, c.shape, no_buckets(s, c.shape));
    const auto peak = measured_inflight(plan);
    for (int r = 0; r < c.shape.pp; ++r)
      EXPECT_EQ(peak[static_cast<size_t>(r)], s.inflight_chunks(c.shape, r))
          << c.schedule << " pp=" << c.shape.pp << " vpp=" << c.shape.vpp << " m=" << c.shape.micro_batches
          << " rank " << r;
  }
}

TEST(Schedules, RefusalsNameTheConstraintAndTheValues) {
  struct Refusal {
    const char* schedule;
    PipelineShape shape;
    const char* words;
  };
  for (const auto& c : std::vector<Refusal>{{"interleaved", {4, 2, 6}, "multiple of pp: 6 micro-batches, pp = 4"},
                                            {"interleaved", {4, 1, 8}, "vpp >= 2"},
                                            {"1f1b", {4, 2, 8}, "vpp = 2"},
                                            {"dualpipe", {3, 1, 12}, "even number of pipeline stages, got pp = 3"},
                                            {"dualpipe", {4, 1, 6}, "at least 2·pp = 8, got 6"},
                                            {"dualpipe", {4, 1, 9}, "got 9"}}) {
    const auto why = mapping::schedules().get(c.schedule, "test")->refusal(c.shape);
    ASSERT_TRUE(why) << c.schedule;
    EXPECT_NE(why->find(c.words), std::string::npos) << *why;
  }
}

TEST(Schedules, DefaultIsOneFOneBOrInterleavedAndUnknownNamesSuggest) {
  mapping::TrainPlan plan;
  EXPECT_EQ(mapping::schedule_name(plan), "1f1b");
  plan.vpp = 2;
  EXPECT_EQ(mapping::schedule_name(plan), "interleaved");
  plan.schedule = "dualpip";
  try {
    mapping::schedule_of(plan);
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dualpipe"), std::string::npos) << e.what();
  }
}

// DualPipe keeps two copies of each stage's weights: rank r holds stages r and pp-1-r.
TEST(Schedules, DualPipeHoldsBothDirections) {
  const auto& s = *mapping::schedules().get("dualpipe", "test");
  const PipelineShape shape{16, 1, 120};
  EXPECT_EQ(s.weight_copies(), 2);
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(s.placement(shape, r, 0).stage, r);
    EXPECT_EQ(s.placement(shape, r, 1).stage, 15 - r);
  }
}
