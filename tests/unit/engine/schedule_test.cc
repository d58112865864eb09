// Pipeline schedules in both executors: the event-driven run of the step plan and the schedule's
// closed form agree; DualPipe beats 1F1B's bubble on DeepSeek-V3; interleaving shrinks the bubble
// by (pp − 1)/(v·m) in both executors.

#include <gtest/gtest.h>

#include "../shipped_data.h"

#include "xpusim/calib/params.h"
#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;

namespace {

using xpusim::test::shipped;

using xpusim::test::catalog;

struct Plan {
  const char* system;
  const char* model;
  int tp, pp, dp, ep, vpp;
  long long global_batch, seq;
  const char* schedule;
  const char* framework;
};

engine::TrainScenario scenario(const Plan& p) {
  engine::TrainScenario s;
  s.system = &catalog().system(p.system);
  s.model = workload::load_model(p.model, std::string(XS_TESTDATA_DIR) + "/models");
  s.framework = engine::framework_params(p.framework, shipped());
  s.calibration = &shipped();
  s.plan.tp = p.tp;
  s.plan.pp = p.pp;
  s.plan.dp = p.dp;
  s.plan.ep = p.ep;
  s.plan.vpp = p.vpp;
  s.plan.global_batch = p.global_batch;
  s.plan.seq_len = p.seq;
  s.plan.schedule = p.schedule;
  s.plan.precision = core::Dtype::Fp8;
  s.plan.recompute = mapping::Recompute::Selective;
  return s;
}

// The golden scenarios' shapes (tests/golden) and a table of plans, under every schedule that runs.
std::vector<Plan> plans() {
  return {
      {"gb300-nvl72", "deepseek-v3", 1, 8, 72, 8, 1, 4608, 4096, "1f1b", "megatron"},
      {"gb300-nvl72", "deepseek-v3", 1, 8, 72, 8, 2, 4608, 4096, "interleaved", "megatron"},
      {"gb300-nvl72", "deepseek-v3", 1, 8, 72, 8, 1, 4608, 4096, "dualpipe", "deepseek"},
      {"trn3-ultraserver-gen2", "llama3.1-405b", 8, 9, 16, 1, 1, 1024, 8192, "1f1b", "megatron"},
      {"trn3-ultraserver-gen2", "llama3.1-405b", 8, 9, 16, 1, 2, 1152, 8192, "interleaved", "megatron"},
      {"h100-sxm-dgx", "llama3.1-70b", 8, 2, 4, 1, 1, 512, 8192, "1f1b", "megatron"},
      {"h100-sxm-dgx", "llama3.1-70b", 8, 2, 4, 1, 4, 512, 8192, "interleaved", "megatron"},
      {"h100-sxm-dgx", "llama3.1-70b", 8, 2, 4, 1, 1, 512, 8192, "dualpipe", "megatron"},
      {"h100-sxm-dgx", "llama3.1-70b", 8, 4, 2, 1, 1, 32, 4096, "dualpipe", "megatron"},
      {"h800-sxm-dgx", "deepseek-v3", 1, 16, 128, 64, 1, 15360, 4096, "dualpipe", "deepseek"},
      {"h800-sxm-dgx", "deepseek-v3", 1, 16, 128, 64, 1, 15360, 4096, "1f1b", "deepseek"},
      {"gb200-nvl72", "mixtral-8x7b", 1, 4, 16, 8, 1, 256, 4096, "dualpipe", "megatron"},
  };
}

double seconds(core::Seconds s) { return core::to_seconds(s); }

}  // namespace

TEST(Schedules, ExecutorsAgreeWithinFivePercentForEverySchedule) {
  for (const auto& p : plans()) {
    const auto s = scenario(p);
    const auto a = engine::simulate_analytical(s);
    const auto e = engine::simulate_event(s);
    ASSERT_TRUE(a.feasible && e.feasible) << p.model << " " << p.schedule << ": " << a.reason;
    EXPECT_EQ(e.schedule, p.schedule);
    EXPECT_NEAR(seconds(a.step_time) / seconds(e.step_time), 1.0, 0.05)
        << p.model << " pp=" << p.pp << " " << p.schedule << ": analytical " << seconds(a.step_time)
        << " s, event " << seconds(e.step_time) << " s";
  }
}

// DeepSeek-V3 on 2,048 H800s (tp 1, pp 16, ep 64, 15,360 × 4,096 tokens, fp8): DualPipe's bubble
// is smaller than 1F1B's on the same plan, in both executors; it holds two weight copies.
TEST(Schedules, DualPipeBubbleIsSmallerThanOneFOneB) {
  Plan p{"h800-sxm-dgx", "deepseek-v3", 1, 16, 128, 64, 1, 15360, 4096, "1f1b", "deepseek"};
  const auto one = scenario(p);
  p.schedule = "dualpipe";
  const auto dual = scenario(p);
  for (auto run : {&engine::simulate_analytical}) {
    EXPECT_LT(run(dual).breakdown.bubble, run(one).breakdown.bubble);
  }
  const auto e1 = engine::simulate_event(one), e2 = engine::simulate_event(dual);
  EXPECT_LT(e2.breakdown.bubble, e1.breakdown.bubble);
  EXPECT_GT(e2.memory.weights, e1.memory.weights * 1.5);
}

// Interleaving: the bubble is (pp − 1)/(v·m) of the pipelined work, so vpp 2 halves vpp 1's, in
// both executors.
TEST(Schedules, InterleavingShrinksTheBubbleInBothExecutors) {
  Plan p{"h100-sxm-dgx", "llama3.1-70b", 8, 8, 1, 1, 1, 16, 4096, "", "megatron"};
  const auto flat = scenario(p);
  p.vpp = 2;
  const auto inter = scenario(p);
  for (bool event : {false, true}) {
    const auto r1 = event ? engine::simulate_event(flat) : engine::simulate_analytical(flat);
    const auto r2 = event ? engine::simulate_event(inter) : engine::simulate_analytical(inter);
    EXPECT_EQ(r2.schedule, "interleaved");
    const double m = 16, pp = 8;
    for (const auto& [r, v] : {std::pair{r1, 1.0}, std::pair{r2, 2.0}}) {
      const double work = seconds(r.step_time - r.breakdown.bubble - r.breakdown.optimizer - r.breakdown.dp_comm -
                                  r.breakdown.pp_comm - r.breakdown.other);
      // Stages differ only by the embedding and the LM head: within 10 points of the ideal.
      EXPECT_NEAR(seconds(r.breakdown.bubble) / work, (pp - 1) / (v * m), 0.1) << (event ? "event" : "analytical");
    }
    EXPECT_LT(r2.breakdown.bubble, r1.breakdown.bubble * 0.6) << (event ? "event" : "analytical");
  }
}

// A schedule that cannot run the plan is refused with the constraint, never silently replaced.
TEST(Schedules, RefusedPlansAreInfeasibleWithTheConstraint) {
  Plan p{"h100-sxm-dgx", "llama3.1-70b", 8, 4, 2, 1, 2, 12, 4096, "", "megatron"};
  const auto r = engine::simulate_event(scenario(p));
  EXPECT_FALSE(r.feasible);
  EXPECT_NE(r.reason.find("multiple of pp: 6 micro-batches, pp = 4"), std::string::npos) << r.reason;
}
