// Serving on the one simulation core: mapping's memory model, the shared clock, cost/'s
// energy of the simulated activity; request lengths without a cap; the serving timeline.
#include <gtest/gtest.h>

#include "serve_env.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "xpusim/cost/energy.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/serve/scenario.h"
#include "xpusim/workload/hf_config.h"

namespace xs = xpusim::serve;
namespace core = xpusim::core;
namespace mapping = xpusim::mapping;

namespace {

using xpusim::test::catalog;
using xpusim::test::shipped;
using xpusim::test::env;
using xpusim::test::model;

// Training and serving read one memory model: for the same chips, model and precision
// (bf16 weights, tp-way split, one pipeline stage, no optimizer sharding needed for the
// weights) the weights and the workspace per chip are the same figures.
TEST(OneCore, TrainAndServeGiveTheSameWeightsAndWorkspacePerChip) {
  struct Case { const char* model; int tp; };
  const Case cases[] = {{"llama3.1-8b", 1}, {"llama3.1-8b", 2}, {"llama3.1-70b", 4}, {"llama3.1-70b", 8},
                        {"mixtral-8x7b", 2}};
  const auto& sys = catalog().system("h100-sxm-dgx");
  const mapping::MemoryParams memory = mapping::memory_params(shipped());
  const auto prof = xs::framework_profile(xs::Framework::Vllm, "", sys.chip, shipped());
  for (const auto& c : cases) {
    const auto m = model(c.model);
    mapping::TrainPlan train;
    train.tp = c.tp;
    train.precision = core::Dtype::Bf16;
    const auto t = mapping::train_memory_per_chip(m, train, memory);
    xs::ReplicaPlan serve;
    serve.plan.tp = c.tp;
    const xs::StepCostModel cost(sys, m, serve, prof, memory, nullptr);
    EXPECT_DOUBLE_EQ(cost.memory().weights.base(), t.weights.base()) << c.model << " tp" << c.tp;
    EXPECT_DOUBLE_EQ(cost.memory().workspace.base(), t.workspace.base()) << c.model << " tp" << c.tp;
    EXPECT_DOUBLE_EQ(cost.memory().workspace.base(), shipped().bytes("memory.workspace_per_chip").base());
  }
}

// The serving simulator and the event-driven training executor share one clock.
TEST(OneCore, ServingUsesTheSharedPicosecondClock) {
  static_assert(std::is_same_v<xs::SimTime, core::SimTime>);
  const double cases[] = {0.0, 1e-12, 2.5e-9, 1.0, 3600.0};
  for (double s : cases) {
    EXPECT_EQ(core::to_sim_time(core::seconds(s)), static_cast<core::SimTime>(std::llround(s * 1e12))) << s;
    EXPECT_NEAR(core::from_sim_time(core::to_sim_time(core::seconds(s))).base(), s, 0.5e-12) << s;
  }
}

// A time beyond the clock's exact range (2^62 ps, about 53 days), or NaN, is a diagnostic,
// never a wrapped integer.
TEST(OneCore, TimesBeyondTheClockAreRefusedNotWrapped) {
  const double limit_s = core::kMaxSimTimePs * core::kSecondsPerPicosecond;
  EXPECT_GT(core::to_sim_time(core::seconds(0.99 * limit_s)), 0);
  for (double s : {1.01 * limit_s, -1.01 * limit_s, 1e30, std::nan("")})
    EXPECT_THROW(core::to_sim_time(core::seconds(s)), core::InputError) << s;
}

// Serving energy is cost/'s energy of the simulated activity, derived here from the shares of
// data/calibration/cost.yaml: per chip, E = min(TDP·T, idle·TDP·T + e_flop·F + e_hbm·B +
// e_link·bytes) + overhead·T with e_flop = math_share·TDP / bf16 peak and
// e_hbm = hbm_share·TDP / (load·HBM bandwidth); J per output token = E · chips / tokens.
TEST(OneCore, ServingEnergyIsCostEnergyOfItsActivity) {
  struct Case { const char* model; int tp; const char* precision; };
  const Case cases[] = {{"llama3.1-8b", 1, "bf16"}, {"llama3.1-70b", 4, "bf16"}};
  const auto& sys = catalog().system("h100-sxm-dgx");
  const auto& p = shipped();
  for (const auto& c : cases) {
    xs::ServeScenario sc;
    sc.system = "h100-sxm-dgx";
    sc.model = c.model;
    sc.tp = c.tp;
    sc.chips = 2 * c.tp;
    sc.precision = c.precision;
    sc.framework = xs::Framework::Vllm;
    sc.load.in_len = 512;
    sc.load.out_len = 64;
    sc.load.requests = 200;
    const auto rep = xs::run_scenario(sc, env());
    ASSERT_TRUE(rep) << rep.error();
    const auto& a = rep->sim.activity;
    const double share = static_cast<double>(c.tp) / static_cast<double>(sc.chips);  // engine chips / chips
    const double tdp = core::to_watts(sys.chip.tdp.value), t = rep->sim.duration.base();
    const double bf16 = sys.chip.peak_for(core::Dtype::Bf16).base();
    const double e_flop = p.number("cost.math_share_of_tdp") * tdp / bf16;
    const double e_hbm = p.number("cost.hbm_share_of_tdp") * tdp /
                         (p.number("cost.hbm_load_at_tdp") * sys.chip.hbm_bandwidth.value.base());
    const double dynamic = share * (e_flop * a.total_flops().base() + e_hbm * a.hbm_bytes.base() +
                                    p.joules_per_byte("cost.scale_up_link_energy").base() * a.scale_up_bytes.base() +
                                    p.joules_per_byte("cost.scale_out_link_energy").base() * a.scale_out_bytes.base());
    const double chip = std::min(tdp * t, p.number("cost.idle_power_fraction") * tdp * t + dynamic);
    const double total = chip + core::to_watts(sys.overhead_power_per_chip.value) * t;
    const double expected = total * static_cast<double>(sc.chips) / static_cast<double>(rep->sim.output_tokens);
    EXPECT_NEAR(rep->joules_per_output_token, expected, 1e-9 * expected) << c.model;
    EXPECT_NEAR(rep->power_per_chip_w, total / t, 1e-9 * total / t) << c.model;
    // Every step streams the weights of its chip at least once.
    EXPECT_GE(a.hbm_bytes.base(), static_cast<double>(rep->sim.steps) * rep->memory.weights.base()) << c.model;
    if (c.tp > 1) {
      EXPECT_GT(a.scale_up_bytes.base(), 0.0) << c.model;  // the TP all-reduces
    }
  }
}

xs::LoadSpec orca(long long in_len, long long out_len) {
  xs::LoadSpec load;
  load.lengths = xs::LengthDist::OpenOrcaLike;
  load.in_len = in_len;
  load.out_len = out_len;
  load.requests = 4000;
  load.spread = {shipped().number("serving.lengths.openorca_input_sigma"),
                 shipped().number("serving.lengths.openorca_output_sigma")};
  return load;
}

double mean_of(const std::vector<xs::Request>& rs, long long xs::Request::*field) {
  double s = 0;
  for (const auto& r : rs) s += static_cast<double>(r.*field);
  return s / static_cast<double>(rs.size());
}

// Drawn lengths honour the requested means with no cap (MLPerf means such as 9,429 input or
// 3,657 output tokens), and at least one token each.
TEST(Workload, OpenOrcaLikeMeansAreHonouredWithoutACap) {
  const std::pair<long long, long long> cases[] = {{9429, 630}, {804, 3657}, {280, 290}};
  for (const auto& [in, out] : cases) {
    const auto rs = xs::generate_requests(orca(in, out));
    EXPECT_NEAR(mean_of(rs, &xs::Request::in_len), static_cast<double>(in), 0.005 * static_cast<double>(in)) << in;
    EXPECT_NEAR(mean_of(rs, &xs::Request::out_len), static_cast<double>(out), 0.005 * static_cast<double>(out)) << out;
    long long longest_in = 0, shortest = 1 << 30;
    for (const auto& r : rs) {
      longest_in = std::max(longest_in, r.in_len);
      shortest = std::min({shortest, r.in_len, r.out_len});
    }
    EXPECT_GT(longest_in, 1024) << in;  // the old cap is gone
    EXPECT_GE(shortest, 1) << in;
  }
}

// A data set's own limits bound the draws (the means still match); the model's context clips
// a request, which is marked.
TEST(Workload, DrawnLengthsStayWithinTheDataSetLimitsAndTheContext) {
  auto limited = orca(280, 290);
  limited.max_drawn_in_len = limited.max_drawn_out_len = 1024;
  const auto rs = xs::generate_requests(limited);
  for (const auto& r : rs) EXPECT_TRUE(r.in_len <= 1024 && r.out_len <= 1024);
  EXPECT_NEAR(mean_of(rs, &xs::Request::in_len), 280.0, 0.005 * 280.0);
  EXPECT_NEAR(mean_of(rs, &xs::Request::out_len), 290.0, 0.005 * 290.0);

  auto clipped = orca(3000, 2000);
  clipped.max_context = 4096;
  long long marked = 0;
  for (const auto& r : xs::generate_requests(clipped)) {
    EXPECT_LE(r.in_len + r.out_len, 4096);
    EXPECT_GE(r.out_len, 1);
    marked += r.clipped ? 1 : 0;
  }
  EXPECT_GT(marked, 0);
}

// A run whose drawn requests exceed the model's context says so in its assumptions.
TEST(Scenario, ClippedRequestsAreStated) {
  xs::ServeScenario sc;
  sc.system = "h100-sxm-dgx";
  sc.model = "llama2-7b";  // 4,096 positions
  sc.precision = "fp8";
  sc.framework = xs::Framework::Vllm;
  sc.load.lengths = xs::LengthDist::OpenOrcaLike;
  sc.load.in_len = 2000;
  sc.load.out_len = 500;
  sc.load.requests = 300;
  const auto rep = xs::run_scenario(sc, env());
  ASSERT_TRUE(rep) << rep.error();
  EXPECT_GT(rep->sim.clipped_requests, 0);
  const bool stated = std::any_of(rep->assumptions.begin(), rep->assumptions.end(),
                                  [](const std::string& a) { return a.find("clipped") != std::string::npos; });
  EXPECT_TRUE(stated);
}

// The timeline is bounded: the first max_steps steps and max_requests requests, with the totals.
TEST(Timeline, RecordsBoundedStepsAndRequestPhases) {
  xs::ServeScenario sc;
  sc.system = "h100-sxm-dgx";
  sc.model = "llama3.1-8b";
  sc.precision = "fp8";
  sc.framework = xs::Framework::Vllm;
  sc.load.in_len = 256;
  sc.load.out_len = 32;
  sc.load.requests = 50;
  sc.trace = true;
  const auto rep = xs::run_scenario(sc, env());
  ASSERT_TRUE(rep) << rep.error();
  const auto& tr = rep->sim.trace;
  EXPECT_EQ(static_cast<long long>(tr.steps.size()), rep->sim.steps);
  EXPECT_EQ(tr.requests.size(), 50u);
  for (const auto& r : tr.requests) {
    EXPECT_LE(r.arrival, r.prefill_start);
    EXPECT_LT(r.prefill_start, r.first_token);
    EXPECT_LE(r.first_token, r.finish);
  }
  const auto doc = nlohmann::json::parse(xs::chrome_trace_json(rep->sim));
  EXPECT_EQ(doc["otherData"]["steps_total"], rep->sim.steps);

  xs::SimSpec spec;
  auto cost = xs::StepCostModel(catalog().system("h100-sxm-dgx"), model("llama3.1-8b"), xs::ReplicaPlan{},
                                xs::framework_profile(xs::Framework::Vllm, "", catalog().system("h100-sxm-dgx").chip,
                                                      shipped()),
                                mapping::memory_params(shipped()), nullptr);
  spec.pool = xs::PoolSpec{&cost, 1};
  spec.load = sc.load;
  spec.trace = {true, 10, 5};
  const auto small = xs::simulate(spec);
  EXPECT_EQ(small.trace.steps.size(), 10u);
  EXPECT_EQ(small.trace.requests.size(), 5u);
  EXPECT_EQ(small.trace.steps_total, small.steps);
  EXPECT_EQ(small.trace.requests_total, 50);
}

}  // namespace

namespace {

// Without chunked prefill a prompt runs whole. When the running decodes leave less of the step's
// token budget than the next prompt needs, the prompt joins the next step with those decodes
// (as one whole prompt over the budget), rather than waiting for the whole batch to drain: the
// running batch stays near the client count instead of collapsing to one sequence.
TEST(Scheduler, WholePromptsDoNotDrainTheRunningBatch) {
  xs::ServeScenario sc;
  sc.system = "h100-sxm-dgx";
  sc.model = "llama3.1-8b";
  sc.precision = "fp8";
  sc.framework = xs::Framework::TensorRtLlm;
  sc.chunked_prefill = false;
  sc.max_batched_tokens = 512;  // 64 decodes leave 448 tokens; every prompt is 480
  sc.load.arrival = xs::ArrivalKind::ClosedLoop;
  sc.load.concurrency = 64;
  sc.load.in_len = 480;
  sc.load.out_len = 64;
  sc.load.requests = 512;
  const auto rep = xs::run_scenario(sc, env());
  ASSERT_TRUE(rep) << rep.error();
  EXPECT_EQ(rep->sim.requests, 512);
  EXPECT_GT(rep->sim.mean_batch, 48.0);  // 59 here; 31.8 when prompts waited for a drain
}

}  // namespace

// A trace is held once however often its load is copied (scenario, simulation spec, report): a
// file of 10^7 rows is 800 MB of requests (docs/performance.md).
TEST(RequestTrace, CopiesOfALoadShareOneVectorOfRequests) {
  xs::LoadSpec a;
  a.arrival = xs::ArrivalKind::Trace;
  a.trace = std::vector<xs::Request>{xs::Request{0, 100, 10}, xs::Request{5, 200, 20}};
  const xs::LoadSpec b = a;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the test
  EXPECT_EQ(&a.trace.requests(), &b.trace.requests());
  EXPECT_EQ(b.trace.size(), 2u);
  EXPECT_EQ(b.trace[1].in_len, 200);
  EXPECT_TRUE(a == b);
  // A new vector replaces the shared one for that load only.
  xs::LoadSpec c = a;
  c.trace = std::vector<xs::Request>{xs::Request{0, 7, 1}};
  EXPECT_EQ(a.trace.size(), 2u);
  EXPECT_EQ(c.trace[0].in_len, 7);
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(xs::LoadSpec{}.trace.empty());
}

// Shaping keeps the window's requests and thins them in place, in file order.
TEST(RequestTrace, AWindowAndASampleShapeTheTraceInPlace) {
  std::vector<xs::Request> rows;
  for (int i = 0; i < 10; ++i) rows.push_back(xs::Request{core::to_sim_time(core::seconds(i)), 100 + i, 1});
  xs::TraceShaping shaping;
  shaping.window_from_s = 2;
  shaping.window_to_s = 8;  // rows 2..7
  shaping.sample = 3;       // of 6: indices 0, 2, 4 -> rows 2, 4, 6
  const auto shaped = xs::shape_trace(rows, shaping, "test.csv");
  ASSERT_EQ(shaped.size(), 3u);
  EXPECT_EQ(shaped[0].in_len, 102);
  EXPECT_EQ(shaped[1].in_len, 104);
  EXPECT_EQ(shaped[2].in_len, 106);
  EXPECT_DOUBLE_EQ(core::sim_seconds(shaped[2].arrival), 4.0);  // times counted from the window's start
}
