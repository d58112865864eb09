// Serving a state-space model without attention (Mamba-Codestral, Mamba-2.8B): no KV cache, so
// the cache holds whole sequences' states, whatever their length; the decode step streams the
// states; a disaggregated hand-off sends the state.

#include <gtest/gtest.h>

#include "serve_env.h"

#include <cmath>

#include "xpusim/mapping/memory.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/workload/accounting.h"

namespace xs = xpusim::serve;
namespace core = xpusim::core;

namespace {

xs::StepCostModel ssm_cost(const std::string& model, int tp) {
  const auto& sys = xpusim::test::catalog().system("h100-sxm-dgx");
  xs::ReplicaPlan plan;
  plan.plan.tp = tp;
  return xs::StepCostModel(sys, xpusim::test::model(model), plan,
                           xs::framework_profile(xs::Framework::Vllm, "", sys.chip, xpusim::test::shipped()),
                           xpusim::mapping::memory_params(xpusim::test::shipped()), nullptr);
}

xs::ServeScenario ssm_scenario(const std::string& model) {
  xs::ServeScenario sc;
  sc.system = "h100-sxm-dgx";
  sc.model = model;
  sc.chips = 1;
  sc.load.arrival = xs::ArrivalKind::Offline;
  sc.load.requests = 64;
  sc.load.in_len = 512;
  sc.load.out_len = 64;
  return sc;
}

}  // namespace

// The cache unit is one sequence's state (64 layers' state split over tp chips): the cache holds
// ⌊cache bytes / state⌋ sequences and no tokens.
TEST(SsmServe, TheCacheCountsSequenceStates) {
  const auto cost = ssm_cost("mamba-codestral-7b", 2);
  const auto& mem = cost.memory();
  const double state = xpusim::workload::recurrent_state_bytes_per_sequence(cost.model(), core::Dtype::Bf16).base() / 2;
  EXPECT_DOUBLE_EQ(mem.kv_per_token.base(), 0.0);
  EXPECT_DOUBLE_EQ(mem.state_per_sequence.base(), state);
  EXPECT_EQ(mem.token_units, 0);
  EXPECT_EQ(mem.state_tokens, 1);
  EXPECT_EQ(mem.kv_tokens, static_cast<long long>(mem.kv_capacity.base() / state));
  EXPECT_EQ(mem.state_sequences(), mem.kv_tokens);
  EXPECT_EQ(mem.kv_cache_tokens(), 0);
}

// Length does not matter: a cache of exactly ten states runs ten sequences at once whether the
// prompts are 256 or 200,000 tokens long (an attention model's cache would hold one of the latter
// at most), under both KV policies.
TEST(SsmServe, TenStatesRunTenSequencesAtAnyLength) {
  const auto cost = ssm_cost("mamba-2.8b", 1);
  for (const auto policy : {xs::KvPolicy::Reserve, xs::KvPolicy::OnDemand}) {
    for (const long long prompt : {256LL, 200000LL}) {
      xs::SimSpec spec;
      spec.pool = {&cost, 1};
      spec.scheduler.kv_policy = policy;
      spec.scheduler.max_num_seqs = 1000;
      spec.scheduler.max_batched_tokens = 1 << 20;
      spec.load.arrival = xs::ArrivalKind::Offline;
      spec.load.requests = 40;
      spec.load.in_len = prompt;
      spec.load.out_len = 64;
      spec.scheduler.kv_tokens_override = 10;
      const auto r = xs::simulate(spec);
      EXPECT_EQ(r.requests, 40);
      EXPECT_EQ(r.preemptions, 0);
      double most = 0;
      for (const auto& p : r.timeline) most = std::max(most, p.batch);
      EXPECT_EQ(most, 10.0) << prompt;
    }
  }
}

// A decode step reads and writes each running sequence's state once per layer and reads no KV:
// its mixer time is that stream, and a thousand times the context costs nothing more.
TEST(SsmServe, DecodeStreamsTheStatesOnly) {
  const auto cost = ssm_cost("mamba-codestral-7b", 1);
  xs::StepWork w;
  w.decode_seqs = 32;
  w.decode_context = 32.0 * 100;
  const double stream = 2.0 * 32 * cost.memory().state_per_sequence.base() / cost.hbm_rate().base();
  const auto short_ctx = cost.cost(w);
  EXPECT_GE(core::to_seconds(short_ctx.attention), stream);
  EXPECT_LT(core::to_seconds(short_ctx.attention), 1.1 * stream);
  w.decode_context = 32.0 * 100000;
  EXPECT_DOUBLE_EQ(core::to_seconds(cost.cost(w).total), core::to_seconds(short_ctx.total));
}

// End to end: the report says there is no KV cache and how many states fit, a request longer than
// any attention model's cache still runs, and the JSON-facing counts are 0 tokens / N sequences.
TEST(SsmServe, ScenarioStatesTheCacheInSequences) {
  auto sc = ssm_scenario("mamba-codestral-7b");
  sc.load.in_len = 500000;
  sc.load.requests = 8;
  const auto rep = xs::run_scenario(sc, xpusim::test::env());
  ASSERT_TRUE(rep.has_value()) << rep.error();
  EXPECT_EQ(rep->sim.requests, 8);
  EXPECT_EQ(rep->memory.kv_cache_tokens(), 0);
  EXPECT_GT(rep->memory.state_sequences(), 8);
  bool stated = false;
  for (const auto& a : rep->assumptions) stated = stated || a.find("no KV cache") != std::string::npos;
  EXPECT_TRUE(stated);
}

// Disaggregated: the hand-off sends each request's state (no per-token KV): transfer time per
// sequence > 0, per token 0; tp 16 does not split 8 groups and is refused naming them.
TEST(SsmServe, DisaggregationSendsTheStateAndTpMustSplitTheGroups) {
  auto sc = ssm_scenario("mamba-codestral-7b");
  sc.chips = 2;
  sc.prefill_chips = 1;
  const auto rep = xs::run_scenario(sc, xpusim::test::env());
  ASSERT_TRUE(rep.has_value()) << rep.error();
  EXPECT_EQ(rep->sim.kv_transfers, 64);
  EXPECT_GT(rep->sim.kv_transfer_time.base(), 0.0);
  auto bad = ssm_scenario("mamba-codestral-7b");
  bad.chips = 16;
  bad.tp = 16;
  try {
    (void)xs::run_scenario(bad, xpusim::test::env());
    ADD_FAILURE() << "tp 16 accepted for 8 groups";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("128 Mamba heads and 8 groups"), std::string::npos) << e.what();
  }
}

// Speculative decoding on a recurrent model: the verify step of q = draft_len + 1 tokens reads each
// sequence's state once and writes the state after every token (the rollback points), (1 + q)
// state streams instead of 2; and each running sequence holds those q states besides its own, so
// a cache of ten sequences' (draft_len + 2) states runs ten at once.
TEST(SsmServe, SpeculativeDecodingKeepsARollbackStatePerVerifiedToken) {
  const auto cost = ssm_cost("mamba-codestral-7b", 1);
  xs::StepWork plain, verify;
  plain.decode_seqs = verify.decode_seqs = 16;
  plain.decode_context = verify.decode_context = 16.0 * 512;
  verify.decode_q = 4;
  const double state = cost.memory().state_per_sequence.base() / cost.hbm_rate().base();
  const double extra = core::to_seconds(cost.cost(verify).attention) - core::to_seconds(cost.cost(plain).attention);
  EXPECT_NEAR(extra, 3.0 * 16 * state, 0.02 * 3.0 * 16 * state);  // 5 streams instead of 2
  xs::SimSpec spec;
  spec.pool = {&cost, 1};
  spec.scheduler.kv_policy = xs::KvPolicy::Reserve;
  spec.scheduler.max_num_seqs = 1000;
  spec.load.arrival = xs::ArrivalKind::Offline;
  spec.load.requests = 40;
  spec.load.in_len = 256;
  spec.load.out_len = 64;
  spec.spec.draft_len = 3;
  spec.spec.acceptance = 0.7;
  spec.scheduler.kv_tokens_override = 10 * (3 + 2);
  const auto r = xs::simulate(spec);
  EXPECT_EQ(r.requests, 40);
  double most = 0;
  for (const auto& p : r.timeline) most = std::max(most, p.batch);
  EXPECT_EQ(most, 10.0);
}
