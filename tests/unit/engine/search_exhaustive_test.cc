// The plan search against exhaustive enumeration (issue 45, case 5): on 200 random small cases
// (at most 64 chips, models of at most 70B parameters, dense and MoE), the search and a plain
// enumeration that times every plan of the same space, pruning nothing, agree on whether a plan
// fits and on the best throughput. The enumeration has its own loops: it shares with the search
// only the definition of the space (TP inside the scale-up domain and dividing the heads, PP at
// most the layers, interleaving only with a pipeline, whole micro-batches per data-parallel rank).

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "../shipped_data.h"

#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;

namespace {

using xpusim::test::shipped;

struct Best {
  bool found = false;
  double tokens_per_s = 0;
};

// Every plan of `space` on `chips` timed with the analytical executor; the fastest that fits.
Best enumerate_all(const engine::TrainScenario& base, long long chips, const engine::SearchSpace& space) {
  Best best;
  const int domain = base.system->chips_per_domain;
  for (int tp : space.tp) {
    if (tp > domain || domain % tp != 0 || chips % tp != 0 || !workload::tp_divides(base.model, tp)) continue;
    for (int pp : space.pp) {
      if (pp > base.model.layers || chips % (static_cast<long long>(tp) * pp) != 0) continue;
      const long long dp = chips / (static_cast<long long>(tp) * pp);
      for (int vpp : space.vpp) {
        if (vpp > 1 && pp == 1) continue;
        for (long long mb : space.micro_batch) {
          if (base.plan.global_batch % (dp * mb) != 0) continue;
          for (auto recompute : space.recompute) {
            for (auto zero : space.zero) {
              engine::TrainScenario s = base;
              s.plan.tp = tp;
              s.plan.pp = pp;
              s.plan.dp = static_cast<int>(dp);
              s.plan.vpp = vpp;
              s.plan.micro_batch = mb;
              s.plan.recompute = recompute;
              s.plan.zero = zero;
              if (base.model.is_moe()) s.plan.ep = space.ep;
              const engine::TrainResult r = engine::simulate_analytical(s);
              if (!r.feasible || !r.fits) continue;
              if (!best.found || r.tokens_per_s > best.tokens_per_s) best = {true, r.tokens_per_s};
            }
          }
        }
      }
    }
  }
  return best;
}

template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& from) {
  return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng)];
}

}  // namespace

TEST(PlanSearchProperty, AgreesWithExhaustiveEnumerationOn200RandomCases) {
  const hw::Catalog& cat = xpusim::test::catalog();
  const std::vector<std::string> systems = {"h100-sxm-dgx", "a100-80g-dgx", "b200-hgx", "trn2-48xl"};
  const std::vector<std::string> models = {"llama3.2-1b", "llama3.1-8b", "llama2-13b", "gpt3-20b",
                                           "llama3.1-70b", "mixtral-8x7b"};
  const std::vector<long long> chip_counts = {4, 8, 12, 16, 24, 32, 48, 64};
  const std::vector<long long> batches = {32, 64, 96, 128, 256, 512};
  const std::vector<long long> seqs = {1024, 2048, 4096};
  std::mt19937 rng(45);
  int fits = 0, none = 0;
  for (int i = 0; i < 200; ++i) {
    engine::TrainScenario base;
    base.framework = engine::framework_params("megatron", shipped());
    base.calibration = &shipped();
    base.system = &cat.system(pick(rng, systems));
    base.model = workload::load_model(pick(rng, models), std::string(XS_TESTDATA_DIR) + "/models");
    base.plan.seq_len = pick(rng, seqs);
    base.plan.global_batch = pick(rng, batches);
    base.plan.precision = std::uniform_int_distribution<int>(0, 1)(rng) == 0 ? core::Dtype::Bf16 : core::Dtype::Fp8;
    const long long chips = pick(rng, chip_counts);
    engine::SearchSpace space;
    space.vpp = {1, 2};
    space.micro_batch = {1, 2, 4};
    space.ep = 1;  // a stated expert-parallel degree: the enumeration uses the same
    const engine::SearchResult searched = engine::search_plan(base, chips, space);
    const Best all = enumerate_all(base, chips, space);
    const std::string what = base.model.id + " on " + std::to_string(chips) + " x " + base.system->id + ", batch " +
                             std::to_string(base.plan.global_batch) + " x " + std::to_string(base.plan.seq_len);
    ASSERT_EQ(searched.found, all.found) << what;
    if (all.found) {
      EXPECT_NEAR(searched.result.tokens_per_s, all.tokens_per_s, 1e-9 * all.tokens_per_s) << what;
    }
    (all.found ? fits : none) += 1;
  }
  // The cases span both outcomes, so agreement is not the trivial kind.
  EXPECT_GT(fits, 50);
  EXPECT_GT(none, 10);
}
