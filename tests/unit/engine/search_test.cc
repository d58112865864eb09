#include <gtest/gtest.h>

#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;

namespace {

/// The shipped calibration (data/calibration/).
const calib::Params& shipped() {
  static const calib::Params p = calib::load_shipped(XS_TESTDATA_DIR);
  return p;
}
}  // namespace

TEST(PlanSearch, FindsAFittingPlanAndKeepsTpInsideTheDomain) {
  const hw::Catalog cat = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  engine::TrainScenario s;
  s.framework = engine::framework_params("megatron", shipped());
  s.calibration = &shipped();
  s.system = &cat.system("h100-sxm-dgx");
  s.model = workload::load_model("llama3.1-70b", std::string(XS_TESTDATA_DIR) + "/models");
  s.plan.seq_len = 8192;
  s.plan.global_batch = 512;
  engine::SearchSpace space;
  const auto r = engine::search_plan(s, 64, space);
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.result.fits);
  EXPECT_LE(r.best.plan.tp, 8);
  EXPECT_EQ(r.best.plan.chips(), 64);
  // Every evaluated plan is no faster than the best (the search returns the minimum).
  for (int pp : {1, 2, 4}) {
    auto t = s;
    t.plan.tp = 8;
    t.plan.pp = pp;
    t.plan.dp = 64 / (8 * pp);
    t.plan.recompute = mapping::Recompute::Full;
    auto rt = engine::simulate_analytical(t);
    if (rt.feasible && rt.fits) {
      EXPECT_GE(rt.step_time, r.result.step_time);
    }
  }
}
