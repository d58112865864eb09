// Training-step executors: agreement between tiers, bounds, monotonicity, symmetry, determinism.

#include <gtest/gtest.h>

#include "../shipped_data.h"

#include <cmath>

#include "xpusim/engine/sizing.h"
#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/net/collective.h"
#include "xpusim/net/topology.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;

namespace {

using xpusim::test::shipped;

using xpusim::test::catalog;

engine::TrainScenario scenario(const std::string& system, const std::string& model, int tp, int pp,
                               int dp, long long mb, long long gbs, long long seq,
                               core::Dtype prec = core::Dtype::Bf16, int vpp = 1) {
  engine::TrainScenario s;
  s.framework = engine::framework_params("megatron", shipped());
  s.calibration = &shipped();
  s.system = &catalog().system(system);
  s.model = workload::load_model(model, std::string(XS_TESTDATA_DIR) + "/models");
  s.plan.tp = tp;
  s.plan.pp = pp;
  s.plan.dp = dp;
  s.plan.vpp = vpp;
  s.plan.micro_batch = mb;
  s.plan.global_batch = gbs;
  s.plan.seq_len = seq;
  s.plan.precision = prec;
  s.plan.recompute = mapping::Recompute::Selective;
  return s;
}

/// The analytical executor's result, which must be feasible.
engine::TrainResult feasible_analytical(const engine::TrainScenario& s) {
  auto r = engine::simulate_analytical(s);
  EXPECT_TRUE(r.feasible) << r.reason;
  return r;
}

struct Case {
  const char* name;
  engine::TrainScenario s;
};

std::vector<Case> cases() {
  return {
      {"llama8b_dp8_h100", scenario("h100-sxm-dgx", "llama3.1-8b", 1, 1, 8, 1, 128, 8192, core::Dtype::Fp8)},
      {"llama70b_tp8_pp4_h100", scenario("h100-sxm-dgx", "llama3.1-70b", 8, 4, 2, 1, 64, 8192)},
      {"gpt175b_tp8_pp8_a100", scenario("a100-80g-dgx", "gpt3-175b", 8, 8, 1, 1, 64, 2048)},
      {"llama405b_interleaved_trn3", scenario("trn3-ultraserver-gen2", "llama3.1-405b", 16, 9, 4, 1, 144, 8192,
                                               core::Dtype::Mxfp8, 2)},
      {"mixtral_ep8_gb200", [] {
         auto s = scenario("gb200-nvl72", "mixtral-8x7b", 1, 2, 32, 1, 256, 4096, core::Dtype::Fp8);
         s.plan.ep = 8;
         return s;
       }()},
  };
}

}  // namespace

// DESIGN: on plans without contention the analytical and event-driven executors agree within 5%.
TEST(TrainExecutors, AnalyticalAndEventAgreeWithinFivePercent) {
  for (const auto& c : cases()) {
    auto a = engine::simulate_analytical(c.s);
    auto e = engine::simulate_event(c.s);
    ASSERT_TRUE(a.feasible) << c.name << ": " << a.reason;
    ASSERT_TRUE(e.feasible) << c.name << ": " << e.reason;
    const double ta = core::to_seconds(a.step_time), te = core::to_seconds(e.step_time);
    EXPECT_NEAR(ta / te, 1.0, 0.05) << c.name << ": analytical " << ta << " s, event " << te << " s";
  }
}

// A step can be no faster than its math at the chip's peak, its HBM traffic at peak bandwidth,
// or its scale-out traffic at the fabric's line rate.
TEST(TrainExecutors, StepTimeRespectsComputeMemoryAndCommunicationBounds) {
  for (const auto& c : cases()) {
    auto r = engine::simulate_event(c.s);
    ASSERT_TRUE(r.feasible) << c.name;
    const auto& chip = c.s.system->chip;
    double best_peak = 0;
    for (const auto& [d, p] : chip.peak) best_peak = std::max(best_peak, p.value.base());
    const double t = core::to_seconds(r.step_time);
    EXPECT_GE(t, core::to_flops(r.activity.total_flops()) / best_peak) << c.name;
    EXPECT_GE(t, core::to_bytes(r.activity.hbm_bytes) / chip.hbm_bandwidth.value.base()) << c.name;
    // Model FLOPs of the step spread over every chip at peak.
    const double model = workload::train_flops_per_token(c.s.model, c.s.plan.seq_len,
                                                         workload::RecomputeKind::None).model *
                         r.tokens_per_step;
    EXPECT_GE(t, model / (best_peak * c.s.plan.chips())) << c.name;
    const double so_bw = c.s.system->scale_out.bandwidth_per_chip.value.base();
    EXPECT_GE(t, core::to_bytes(r.activity.scale_out_bytes) / so_bw) << c.name;
  }
}

// More bandwidth or more FLOP/s never makes a step slower.
TEST(TrainExecutors, MoreBandwidthOrFlopsNeverSlower) {
  for (const auto& c : cases()) {
    const auto base = engine::simulate_event(c.s);
    hw::SystemSpec faster_net = *c.s.system;
    for (auto& d : faster_net.scale_up) d.bandwidth_per_chip.value *= 2.0;
    faster_net.scale_out.bandwidth_per_chip.value *= 2.0;
    auto s1 = c.s;
    s1.system = &faster_net;
    EXPECT_LE(engine::simulate_event(s1).step_time, base.step_time * (1 + 1e-12)) << c.name;

    hw::SystemSpec faster_chip = *c.s.system;
    for (auto& [d, p] : faster_chip.chip.peak) p.value *= 2.0;
    faster_chip.chip.hbm_bandwidth.value *= 2.0;
    auto s2 = c.s;
    s2.system = &faster_chip;
    EXPECT_LE(engine::simulate_event(s2).step_time, base.step_time * (1 + 1e-12)) << c.name;
  }
}

// Relabelling chips changes nothing: swapping two identical scale-up dimensions, or running the
// same scenario again, gives the same step time to the picosecond.
TEST(TrainExecutors, RelabellingAndRerunningChangeNothing) {
  auto s = scenario("trn2-ultraserver", "llama3.1-70b", 16, 4, 1, 1, 32, 4096);
  const auto a = engine::simulate_event(s);
  const auto b = engine::simulate_event(s);
  EXPECT_EQ(a.step_time, b.step_time);
  EXPECT_EQ(engine::chrome_trace_json(engine::simulate_event(s, true)),
            engine::chrome_trace_json(engine::simulate_event(s, true)));
  hw::SystemSpec sys = *s.system;
  ASSERT_GE(sys.scale_up.size(), 1u);
  // The 4×4 torus of a Trn2 instance is symmetric: transposing its shape relabels chips.
  auto& d0 = sys.scale_up[0];
  if (d0.shape.size() == 2) std::swap(d0.shape[0], d0.shape[1]);
  auto s2 = s;
  s2.system = &sys;
  EXPECT_NEAR(core::to_seconds(engine::simulate_event(s2).step_time), core::to_seconds(a.step_time), 1e-12);
}

// 1F1B: with m micro-batches and p stages the bubble is (p−1)/m of the pipelined work; the
// interleaved schedule divides it by vpp.
TEST(TrainExecutors, InterleavingShrinksTheBubble) {
  auto s1 = scenario("h100-sxm-dgx", "llama3.1-70b", 8, 8, 1, 1, 16, 4096);
  auto s2 = s1;
  s2.plan.vpp = 2;
  const auto r1 = engine::simulate_event(s1);
  const auto r2 = engine::simulate_event(s2);
  ASSERT_TRUE(r1.feasible && r2.feasible);
  EXPECT_LT(r2.breakdown.bubble, r1.breakdown.bubble);
  // Without interleaving the bubble is close to (p−1)/m of the busy time (stages are uneven
  // only through the embedding and the LM head).
  const double busy = core::to_seconds(r1.step_time - r1.breakdown.bubble - r1.breakdown.optimizer -
                                       r1.breakdown.dp_comm - r1.breakdown.pp_comm - r1.breakdown.other);
  EXPECT_NEAR(core::to_seconds(r1.breakdown.bubble) / busy, 7.0 / 16.0, 0.1);
}

TEST(TrainExecutors, InfeasiblePlansAreReportedWithTheReason) {
  auto s = scenario("h100-sxm-dgx", "llama3.1-70b", 3, 1, 1, 1, 8, 4096);
  const auto r = engine::simulate_analytical(s);
  EXPECT_FALSE(r.feasible);
  EXPECT_FALSE(r.reason.empty());
  // A 405B model in bf16 does not fit on 8 H100s without sharding the optimizer.
  auto big = scenario("h100-sxm-dgx", "llama3.1-405b", 8, 1, 1, 1, 8, 4096);
  big.plan.zero = mapping::Zero::None;
  const auto rb = engine::simulate_analytical(big);
  EXPECT_TRUE(rb.feasible);
  EXPECT_FALSE(rb.fits);
  EXPECT_NE(rb.reason.find("out of memory"), std::string::npos) << rb.reason;
}

TEST(TrainExecutors, MillionChipStepIsCheapToSimulate) {
  // 16 × 16 × 4096 = 1,048,576 chips, 32 micro-batches per pipeline (interleaving needs a
  // multiple of pp).
  auto s = scenario("trn3-ultraserver-gen2", "llama3.1-405b", 16, 16, 4096, 1, 4096LL * 32, 8192, core::Dtype::Mxfp8, 2);
  const auto r = engine::simulate_event(s);
  ASSERT_TRUE(r.feasible) << r.reason;
  EXPECT_GT(core::to_seconds(r.step_time), 0.0);
  // The event count depends on the plan's shape (pp × micro-batches × vpp), not on the chips:
  // a forward and a backward per chunk-micro-batch, and at most one send after each.
  EXPECT_LE(r.events, 4LL * 16 * 32 * 2);
}

// A straggling chip (one stage of one replica slower) is simulated by its replica: the step
// is at least the nominal one and at most `slowdown` times it (only compute slows), grows with
// the slowdown, slows the busiest stage the most, and costs the same events at a million chips
// as at a thousand (representative ranks).
TEST(TrainExecutors, AStragglingChipSlowsTheStepWithoutSimulatingEveryChip) {
  auto s = scenario("h100-sxm-dgx", "llama3.1-70b", 8, 4, 2, 1, 64, 8192);
  const auto nominal = engine::simulate_event(s);
  ASSERT_TRUE(nominal.feasible) << nominal.reason;
  EXPECT_EQ(nominal.straggler_stage, -1);
  double last = core::to_seconds(nominal.step_time);
  for (double f : {1.1, 1.5, 2.0}) {
    s.straggler.slowdown = f;
    const auto r = engine::simulate_event(s);
    const double t = core::to_seconds(r.step_time);
    EXPECT_GT(t, last) << f;
    EXPECT_LE(t, f * core::to_seconds(nominal.step_time) + 1e-9) << f;
    EXPECT_GE(r.straggler_stage, 0);
    last = t;
  }
  // The analytical executor ignores it.
  const auto plain = scenario("h100-sxm-dgx", "llama3.1-70b", 8, 4, 2, 1, 64, 8192);
  EXPECT_EQ(engine::simulate_analytical(s).step_time, engine::simulate_analytical(plain).step_time);
  // Any stage slows the step no more than the default (busiest) one.
  s.straggler.slowdown = 1.5;
  const auto busiest = engine::simulate_event(s);
  for (int st = 0; st < 4; ++st) {
    s.straggler.stage = st;
    EXPECT_LE(engine::simulate_event(s).step_time, busiest.step_time + core::seconds(1e-9)) << st;
  }
  auto small = scenario("trn3-ultraserver-gen2", "llama3.1-405b", 16, 16, 4, 1, 4LL * 32, 8192, core::Dtype::Mxfp8, 2);
  auto large = scenario("trn3-ultraserver-gen2", "llama3.1-405b", 16, 16, 4096, 1, 4096LL * 32, 8192, core::Dtype::Mxfp8, 2);
  small.straggler.slowdown = large.straggler.slowdown = 1.3;
  const auto rs = engine::simulate_event(small), rl = engine::simulate_event(large);
  ASSERT_TRUE(rs.feasible && rl.feasible);
  EXPECT_EQ(rs.events, rl.events);
}

// A training stack's kernel quality (FrameworkParams::compute_efficiency) is one number on every
// chip. On Trainium it divides the rate of every GEMM and attention kernel and nothing else: on
// compute-bound work the step's compute is A/f + B (A the kernels' math time at f = 1, B the
// elementwise, VectorE and per-operator costs), so halving f twice adds twice as much the second
// time. On Hopper it scales the GEMMs as well; on Ampere, where every stack uses the same kind of
// kernels, it changes nothing.
TEST(TrainExecutors, AStacksKernelQualityScalesTheMathOnTrainiumAndHopperNotAmpere) {
  auto compute_at = [](const char* system, double f) {
    auto s = scenario(system, "llama3.1-8b", 1, 1, 16, 1, 16, 8192);
    s.framework.compute_efficiency = f;
    const auto r = engine::simulate_analytical(s);
    EXPECT_TRUE(r.feasible) << r.reason;
    return core::to_seconds(r.breakdown.compute);
  };
  const double c1 = compute_at("trn2-48xl", 1.0), c2 = compute_at("trn2-48xl", 0.5),
               c4 = compute_at("trn2-48xl", 0.25);
  EXPECT_GT(c2, c1 * 1.5);  // GEMMs dominate an 8B step at 8,192 tokens per chip
  EXPECT_NEAR((c4 - c2) / (c2 - c1), 2.0, 1e-6);
  EXPECT_GT(compute_at("h100-sxm-dgx", 0.5), compute_at("h100-sxm-dgx", 1.0) * 1.3);
  EXPECT_EQ(compute_at("a100-80g-dgx", 0.5), compute_at("a100-80g-dgx", 1.0));
}

// The framework decides what selective recomputation keeps: AXLearn's remat policy saves only the
// QKV and up-projection outputs, so its backward reruns more of the forward than Megatron's
// (the attention core only) and less than full recomputation; the hardware FLOPs follow the
// accounting of the same policy and the model FLOPs do not change.
TEST(TrainExecutors, TheFrameworksSelectiveScopeSetsWhatIsRecomputed) {
  EXPECT_EQ(engine::framework_params("axlearn", shipped()).selective_scope,
            mapping::SelectiveScope::AllButProjections);
  EXPECT_EQ(engine::framework_params("megatron", shipped()).selective_scope, mapping::SelectiveScope::AttentionCore);
  auto run = [](mapping::Recompute rc, mapping::SelectiveScope scope) {
    auto s = scenario("trn2-48xl", "llama2-70b", 1, 1, 64, 1, 64, 4096);
    s.plan.zero = mapping::Zero::Fsdp;
    s.plan.recompute = rc;
    s.plan.selective = scope;
    return feasible_analytical(s);
  };
  using mapping::Recompute;
  using mapping::SelectiveScope;
  const auto core = run(Recompute::Selective, SelectiveScope::AttentionCore);
  const auto remat = run(Recompute::Selective, SelectiveScope::AllButProjections);
  const auto full = run(Recompute::Full, SelectiveScope::AttentionCore);
  EXPECT_GT(core::to_seconds(remat.breakdown.compute), core::to_seconds(core.breakdown.compute));
  EXPECT_LT(core::to_seconds(remat.breakdown.compute), core::to_seconds(full.breakdown.compute));
  EXPECT_LT(core::to_bytes(remat.memory.activations), core::to_bytes(core.memory.activations));
  const auto m = workload::load_model("llama2-70b", std::string(XS_TESTDATA_DIR) + "/models");
  const auto flops = workload::train_flops_per_token(m, 4096, workload::RecomputeKind::SelectiveAllButProjections);
  EXPECT_NEAR(remat.hw_tflops_per_chip / remat.model_tflops_per_chip, flops.hardware / flops.model, 1e-9);
  EXPECT_NEAR(remat.model_tflops_per_chip / core.model_tflops_per_chip,
              core::to_seconds(core.step_time) / core::to_seconds(remat.step_time), 1e-9);
}

// Megatron's block method: with the first N of each stage's L layers recomputed, the backward
// reruns N/L of full recomputation's forward (a dense model's layers all cost the same), the
// hardware FLOPs count N/L of the recomputed forward, the model FLOPs not at all, and the
// activations fall between none's and full's. N = 0 of the flag (every layer) is full.
TEST(TrainExecutors, RecomputeLayersRerunsThatShareOfTheForward) {
  auto run = [](mapping::Recompute rc, int layers) {
    auto s = scenario("h100-sxm-dgx", "llama3.1-8b", 2, 2, 2, 1, 32, 8192);  // 32 layers: 16 a stage
    s.plan.recompute = rc;
    s.plan.recompute_layers = layers;
    return feasible_analytical(s);
  };
  using mapping::Recompute;
  const auto none = run(Recompute::None, 0), full = run(Recompute::Full, 0), some = run(Recompute::Full, 4);
  const double c0 = core::to_seconds(none.breakdown.compute), c1 = core::to_seconds(full.breakdown.compute),
               cn = core::to_seconds(some.breakdown.compute);
  EXPECT_GT(c1, c0 * 1.2);
  EXPECT_NEAR((cn - c0) / (c1 - c0), 4.0 / 16, 0.02);
  EXPECT_NEAR(some.hw_tflops_per_chip / some.model_tflops_per_chip - 1,
              (full.hw_tflops_per_chip / full.model_tflops_per_chip - 1) * 4.0 / 16, 1e-9);
  EXPECT_NEAR(some.model_tflops_per_chip * core::to_seconds(some.step_time),
              none.model_tflops_per_chip * core::to_seconds(none.step_time), 1e-6);
  EXPECT_LT(core::to_bytes(some.memory.activations), core::to_bytes(none.memory.activations));
  EXPECT_GT(core::to_bytes(some.memory.activations), core::to_bytes(full.memory.activations));
  const auto all = run(Recompute::Full, 16);
  EXPECT_DOUBLE_EQ(core::to_seconds(all.step_time), core::to_seconds(full.step_time));
}

// The defaults rule for a stated layout: the least recomputation that fits, and where only full
// recomputation fits and the framework recomputes some layers (recompute_some_layers, off in the
// shipped calibration: docs/validation.md), the fewest layers of each chunk that fit: N fits and
// N − 1 does not. Llama-3.1-70B, 64 H100 at tp 8, pp 2, micro-batch 3 of 8,192 tokens: none
// needs about 86 GiB. A stated mode, or a framework without the method, recomputes every layer.
TEST(TrainExecutors, TheRuleRecomputesTheFewestLayersThatFitWhereTheFrameworkCan) {
  auto s = scenario("h100-sxm-dgx", "llama3.1-70b", 8, 2, 4, 3, 96, 8192);
  const auto params = mapping::memory_params(shipped());
  const auto gib = [&](const engine::TrainScenario& x) {
    return core::to_gib(mapping::train_memory_per_chip(x.model, x.plan, params).total());
  };
  const std::vector<mapping::Recompute> all = {mapping::Recompute::None, mapping::Recompute::Selective,
                                               mapping::Recompute::Full};
  EXPECT_FALSE(s.framework.recompute_some_layers);  // shipped: every layer
  engine::set_least_recompute_that_fits(s, all);
  EXPECT_EQ(s.plan.recompute, mapping::Recompute::Full);
  EXPECT_EQ(s.plan.recompute_layers, 0);
  s.framework.recompute_some_layers = true;
  engine::set_least_recompute_that_fits(s, all);
  ASSERT_EQ(s.plan.recompute, mapping::Recompute::Full);
  const int n = s.plan.recompute_layers;
  ASSERT_GT(n, 1);
  ASSERT_LT(n, 40);
  EXPECT_LE(gib(s), 80.0);
  auto fewer = s;
  fewer.plan.recompute_layers = n - 1;
  EXPECT_GT(gib(fewer), 80.0);
  engine::set_least_recompute_that_fits(s, {mapping::Recompute::Full});  // stated: every layer
  EXPECT_EQ(s.plan.recompute_layers, 0);
}

net::TopologyOptions topology_options() {
  net::TopologyOptions o;
  o.params = net::network_params(shipped());
  return o;
}

// Megatron runs MoE with tp > 1 only with sequence parallelism: each tensor-parallel rank
// dispatches its own sequence shard (tokens/tp) over the expert-parallel group, and the expert
// tensor-parallel group (etp = tp) all-gathers what arrives before the experts (and
// reduce-scatters it after them). A layer's exposed EP time per pass is then
// ep_comm_exposed × 2 × [all-to-all of tokens/tp × top-k × hidden × 2 B over ep (stride tp)
//                        + all-gather of tp × that over the tp group].
TEST(TrainExecutors, ExpertDispatchCarriesTheSequenceShardOfEachTensorParallelRank) {
  for (int tp : {1, 2}) {
    auto s = scenario("h100-sxm-dgx", "mixtral-8x7b", tp, 1, 16 / tp, 1, 64, 4096);
    s.plan.ep = 8;
    const auto r = engine::simulate_event(s, true);
    ASSERT_TRUE(r.feasible) << r.reason;
    double traced_us = -1;
    for (const auto& e : r.trace)
      if (e.name == "EP all-to-all" && e.detail && traced_us < 0)
        for (const auto& [k, v] : e.args)
          if (k == "exposed_time_us") traced_us = v;
    ASSERT_GT(traced_us, 0) << "tp " << tp;

    const net::Topology topo = net::Topology::build(*s.system, s.plan.chips(), topology_options());
    const double shard = 4096.0 / tp * s.model.moe.experts_per_token * static_cast<double>(s.model.hidden) * 2.0;
    double one = core::to_seconds(
        net::collective_cost(topo, net::CollectiveKind::AllToAll, core::bytes(shard), net::Group{8, tp}).time);
    if (tp > 1)
      one += core::to_seconds(
          net::collective_cost(topo, net::CollectiveKind::AllGather, core::bytes(shard * tp), net::Group{tp, 1}).time);
    const double expected_us = s.framework.ep_comm_exposed * 2.0 * one * 1e6;
    EXPECT_NEAR(traced_us, expected_us, 1e-6 * expected_us) << "tp " << tp;
  }
}

// Async TP splits each TP collective into tp chunks pipelined with the GEMM it feeds or drains:
// where the GEMMs are longer than the traffic only the first chunk is exposed, 1/tp of what the
// same plan exposes with every TP collective on the critical path (tp_comm_exposed = 1).
// Where the traffic is longer (TP across nodes) the exposure stays between those two.
TEST(TrainExecutors, AsyncTensorParallelismExposesTheFirstChunkWhereTheGemmsCoverTheRest) {
  struct AsyncCase {
    const char* name;
    engine::TrainScenario s;
    bool gemms_cover;
  };
  const std::vector<AsyncCase> async_cases = {
      {"llama70b_tp8_h100", scenario("h100-sxm-dgx", "llama3.1-70b", 8, 1, 4, 1, 32, 8192), true},
      {"llama8b_tp16_two_nodes", scenario("h100-sxm-dgx", "llama3.1-8b", 16, 1, 1, 1, 8, 2048), false},
  };
  for (auto c : async_cases) {
    c.s.framework.tp_comm_exposed = 1.0;
    const auto plain = engine::simulate_analytical(c.s);
    c.s.plan.async_tp = true;
    const auto async = engine::simulate_analytical(c.s);
    ASSERT_TRUE(plain.feasible && async.feasible) << c.name;
    const double all = core::to_seconds(plain.breakdown.tp_comm);
    const double exposed = core::to_seconds(async.breakdown.tp_comm);
    const double first_chunk = all / c.s.plan.tp;
    ASSERT_GT(all, 0.0) << c.name;
    if (c.gemms_cover) {
      EXPECT_NEAR(exposed / first_chunk, 1.0, 1e-9) << c.name;
    } else {
      EXPECT_GT(exposed, first_chunk * 1.01) << c.name;
      EXPECT_LT(exposed, all) << c.name;
    }
    EXPECT_LT(async.step_time, plain.step_time) << c.name;
  }
}

namespace {

/// The longest gradient-reduction event of an event-driven step (a bucket slowed by the
/// backward's TP traffic is the longest).
double longest_dp_event(const engine::TrainResult& r) {
  double longest = 0;
  for (const auto& e : r.trace)
    if (e.stream == engine::kTraceDp) longest = std::max(longest, static_cast<double>(e.duration_ps));
  return longest;
}

}  // namespace

// A gradient bucket reduced during the backward shares the scale-up links with the backward's TP
// collectives for the share of the backward they occupy on the links. Async TP hides those
// collectives behind the GEMMs but sends the same bytes, so the bucket is slowed exactly as much
// as when every TP collective is exposed.
TEST(TrainExecutors, AsyncTensorParallelismStillLoadsTheLinksTheGradientBucketsShare) {
  auto s = scenario("h100-sxm-dgx", "llama3.1-70b", 4, 1, 2, 1, 16, 4096);
  s.framework.tp_comm_exposed = 1.0;
  const auto plain = engine::simulate_event(s, true);
  s.plan.async_tp = true;
  const auto async = engine::simulate_event(s, true);
  ASSERT_TRUE(plain.feasible && async.feasible);
  ASSERT_LT(core::to_seconds(async.breakdown.tp_comm), 0.5 * core::to_seconds(plain.breakdown.tp_comm));
  const double shared = longest_dp_event(plain);
  ASSERT_GT(shared, 0.0);
  EXPECT_EQ(longest_dp_event(async), shared);
}
