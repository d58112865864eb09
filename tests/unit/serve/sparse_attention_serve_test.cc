// Serving DeepSeek-V3.2 (DeepSeek Sparse Attention): a prompt's queries attend at most top-k keys
// each, and a decode step reads each sequence's top-k latents plus every token's indexer key.
// Each expected value is derived here from the shapes, not read back.

#include <gtest/gtest.h>

#include "serve_env.h"

#include <algorithm>
#include <cmath>

#include "xpusim/mapping/memory.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/serve/simulator.h"

namespace xs = xpusim::serve;

namespace {

xs::StepCostModel sparse_cost(const std::string& model) {
  const auto& sys = xpusim::test::catalog().system("b200-hgx");
  xs::ReplicaPlan plan;
  plan.plan.tp = 8;
  plan.plan.math_dtype = plan.plan.weight_dtype = plan.plan.kv_dtype = xpusim::core::Dtype::Fp8;
  return xs::StepCostModel(sys, xpusim::test::model(model), plan,
                           xs::framework_profile(xs::Framework::Sglang, "", sys.chip, xpusim::test::shipped()),
                           xpusim::mapping::memory_params(xpusim::test::shipped()), nullptr);
}

}  // namespace

// Pairs of a chunk of q queries after `done` keys, each seeing min(position, cap) keys, against
// the midpoint sum Σ_j min(done + j − ½, cap) (exact for integer caps: the integrand is linear
// between integers).
TEST(SparseAttentionServe, ChunkPairsAreTheCappedCausalSum) {
  for (const auto& [done, q, cap] : {std::tuple{0, 4096, 2048}, {1000, 3000, 2048}, {3000, 500, 2048},
                                      {0, 100, 2048}, {0, 4096, 0}}) {
    double want = 0;
    for (int j = 1; j <= q; ++j) {
      const double x = done + j - 0.5;
      want += cap > 0 ? std::min(x, static_cast<double>(cap)) : x;
    }
    EXPECT_NEAR(xs::chunk_pairs(done, q, cap), want, 1e-6 * want) << done << " " << q << " " << cap;
  }
  xs::StepWork w;
  xs::add_whole_prompt(xs::StaticShapes{}, 32768, 2048, w);
  EXPECT_DOUBLE_EQ(w.prefill_pairs, 32768.0 * 32768.0 / 2);
  EXPECT_DOUBLE_EQ(w.prefill_attended_pairs, 2048.0 * 2048.0 / 2 + (32768.0 - 2048.0) * 2048.0);
}

// One sequence decoding at a 128k context, fp8 KV, tp 8: per layer DeepSeek-V3 streams 131,072
// latents of 576 bytes; V3.2 streams 2,048 of them and 131,072 indexer keys of 128 bytes, each
// read a memory-bound kernel at the achievable HBM rate (V3.2: two kernels).
TEST(SparseAttentionServe, DecodeReadsTopKLatentsAndEveryIndexerKey) {
  const auto v3 = sparse_cost("deepseek-v3"), v32 = sparse_cost("deepseek-v3.2");
  xs::StepWork w;
  w.decode_seqs = 1;
  w.decode_context = 131072;
  const double kov = v32.profile().calibration.kernel_overhead.base();
  const double layers = 61, ctx = 131072;
  EXPECT_NEAR(v3.cost(w).attention.base(), layers * (ctx * 576 / v3.hbm_rate().base() + kov), 1e-9);
  EXPECT_NEAR(v32.cost(w).attention.base(),
              layers * ((2048.0 * 576 + ctx * 128) / v32.hbm_rate().base() + 2 * kov), 1e-9);
  // Both keep every token: the indexer key adds 128 bytes per token and layer to the cache.
  EXPECT_DOUBLE_EQ(v32.memory().kv_per_token.base() - v3.memory().kv_per_token.base(), layers * 128);
}
