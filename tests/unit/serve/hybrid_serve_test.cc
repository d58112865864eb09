// Serving a hybrid (Nemotron-H): the KV cache on the attention layers only, a constant Mamba-2
// state per running sequence that the cache must hold, and the recurrent step's state traffic.

#include <gtest/gtest.h>

#include "serve_env.h"

#include <cmath>

#include "xpusim/core/diagnostics.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/workload/accounting.h"

namespace xs = xpusim::serve;
namespace core = xpusim::core;

namespace {

xs::StepCostModel hybrid_cost(int tp) {
  const auto& sys = xpusim::test::catalog().system("h100-sxm-dgx");
  xs::ReplicaPlan plan;
  plan.plan.tp = tp;
  return xs::StepCostModel(sys, xpusim::test::model("nemotron-h-8b"), plan,
                           xs::framework_profile(xs::Framework::Vllm, "", sys.chip, xpusim::test::shipped()),
                           xpusim::mapping::memory_params(xpusim::test::shipped()), nullptr);
}

}  // namespace

// At tp 2: 4 attention layers of 8/2 KV heads × 128 × 2 (K and V) bf16 elements per token, and
// the 24 Mamba layers' state (workload::recurrent_state_bytes_per_sequence) split over the 2 chips,
// which a sequence holds as ⌈state / KV bytes per token⌉ tokens' worth of the cache.
TEST(HybridServe, KvOnAttentionLayersAndTheStateInTokens) {
  const auto cost = hybrid_cost(2);
  const auto& mem = cost.memory();
  EXPECT_DOUBLE_EQ(mem.kv_per_token.base(), 4 * 2 * 4 * 128 * 2.0);
  const double state = xpusim::workload::recurrent_state_bytes_per_sequence(cost.model(), core::Dtype::Bf16).base() / 2;
  EXPECT_DOUBLE_EQ(mem.state_per_sequence.base(), state);
  EXPECT_EQ(mem.state_tokens, static_cast<long long>(std::ceil(state / mem.kv_per_token.base())));
}

// A decode step reads and writes every running sequence's state once per Mamba layer: at short
// contexts that stream, not the KV cache, is the step's "attention" time.
TEST(HybridServe, DecodeStreamsEachSequencesState) {
  const auto cost = hybrid_cost(1);
  xs::StepWork w;
  w.decode_seqs = 64;
  w.decode_context = 64.0 * 16;
  const double stream = 2.0 * 64 * cost.memory().state_per_sequence.base() / cost.hbm_rate().base();
  const double attention = core::to_seconds(cost.cost(w).attention);
  EXPECT_GE(attention, stream);
  EXPECT_LT(attention, 1.1 * stream);
}

// Every admitted sequence reserves its state: a cache of exactly ten requests' worth (prompt,
// output and state) runs at most ten at once.
TEST(HybridServe, TheStateCapsTheAdmittedBatch) {
  const auto cost = hybrid_cost(1);
  xs::SimSpec spec;
  spec.pool = {&cost, 1};
  spec.scheduler.kv_policy = xs::KvPolicy::Reserve;
  spec.scheduler.max_num_seqs = 1000;
  spec.scheduler.block_size = 16;
  spec.load.arrival = xs::ArrivalKind::Offline;
  spec.load.requests = 40;
  spec.load.in_len = 256;
  spec.load.out_len = 64;
  spec.scheduler.kv_tokens_override = 10 * (256 + 64 + cost.memory().state_tokens);
  const auto r = xs::simulate(spec);
  EXPECT_EQ(r.requests, 40);
  for (const auto& p : r.timeline) EXPECT_LE(p.batch, 10.0);
  EXPECT_GT(r.mean_batch, 8.0);
}

// --state-precision fp32 (vLLM's --mamba-ssm-cache-dtype float32, which Nemotron Nano 2's card
// recommends) doubles the state a sequence holds and says so; a dtype no engine offers for the
// state is bad input naming the key.
TEST(HybridServe, StatePrecisionSizesTheStateAndIsChecked) {
  xs::ServeScenario sc;
  sc.system = "h100-sxm-dgx";
  sc.model = "nemotron-h-8b";
  sc.chips = 1;
  sc.load.arrival = xs::ArrivalKind::Offline;
  sc.load.requests = 32;
  sc.load.in_len = 256;
  sc.load.out_len = 32;
  const auto bf16 = xs::run_scenario(sc, xpusim::test::env());
  sc.state_precision = "fp32";
  const auto fp32 = xs::run_scenario(sc, xpusim::test::env());
  ASSERT_TRUE(bf16.has_value() && fp32.has_value());
  EXPECT_DOUBLE_EQ(fp32->memory.state_per_sequence.base(), 2.0 * bf16->memory.state_per_sequence.base());
  bool stated = false;
  for (const auto& a : fp32->assumptions) stated = stated || a.find("state in fp32") != std::string::npos;
  EXPECT_TRUE(stated);
  sc.state_precision = "fp8";
  try {
    (void)xs::run_scenario(sc, xpusim::test::env());
    ADD_FAILURE() << "fp8 state accepted";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("state_precision"), std::string::npos) << e.what();
  }
}
