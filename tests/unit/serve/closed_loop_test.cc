// Closed loops in steady state (clients spread over one request's time, warm-up left out) and
// SGLang's admission headroom (new_token_ratio), on the serving simulator.
#include <gtest/gtest.h>

#include "serve_env.h"

#include <algorithm>
#include <cmath>

#include "xpusim/hw/catalog.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/serve/scenario.h"

namespace xs = xpusim::serve;
namespace core = xpusim::core;

namespace {

using xpusim::test::OneH100Engine;
using xpusim::test::env;

xs::SimSpec closed_loop(const xs::StepCostModel& cost, long long clients, long long requests, double spread,
                        long long warmup) {
  xs::SimSpec s;
  s.pool = xs::PoolSpec{&cost, 1};
  s.load.arrival = xs::ArrivalKind::ClosedLoop;
  s.load.concurrency = clients;
  s.load.requests = requests;
  s.load.in_len = 1024;
  s.load.out_len = 256;
  s.load.start_spread = spread;
  s.load.warmup_per_client = warmup;
  return s;
}

// The start span is start_spread × one request's estimated time: its prompt alone, then out_len − 1
// decode steps at the batch the clients put on the engine, over the mean context.
TEST(ClosedLoop, ClientsStartSpreadOverOneRequestsTime) {
  const OneH100Engine e;
  const xs::SimResult r = xs::simulate(closed_loop(e.cost, 8, 64, 0.5, 0));
  xs::StepWork prompt;
  xs::add_prefill_chunk(0, 1024, 0, prompt);
  prompt.prefill_seqs = prompt.sampled_prefills = 1;
  xs::StepWork decode;
  decode.decode_seqs = 8;
  decode.decode_context = 8.0 * (1024 + 128);
  const double one = e.cost.cost(prompt).total.base() + 255 * e.cost.cost(decode).total.base();
  EXPECT_NEAR(r.client_start_span.base(), 0.5 * one, 1e-9 * one);
  EXPECT_EQ(r.warmup_requests, 0);
  EXPECT_EQ(xs::simulate(closed_loop(e.cost, 8, 64, 0, 0)).client_start_span.base(), 0.0);
}

// Client i starts within [i/c, (i+1)/c) of the span, client 0 at 0; seeded, so reproducible.
TEST(ClosedLoop, StartFractionsAreStratifiedAndSeeded) {
  xs::LoadSpec load;
  const auto at = xs::client_start_fractions(load, 16);
  ASSERT_EQ(at.size(), 16u);
  EXPECT_EQ(at[0], 0.0);
  for (size_t i = 1; i < at.size(); ++i) {
    EXPECT_GE(at[i], static_cast<double>(i) / 16);
    EXPECT_LT(at[i], static_cast<double>(i + 1) / 16);
  }
  EXPECT_EQ(at, xs::client_start_fractions(load, 16));
  load.seed = 2;
  EXPECT_NE(at, xs::client_start_fractions(load, 16));
}

// Each client's first request is left out of the latency figures (not of the throughput); a
// client keeps at least one request however large the warm-up.
TEST(ClosedLoop, WarmUpRequestsLeaveTheLatencyFigures) {
  const OneH100Engine e;
  const xs::SimResult r = xs::simulate(closed_loop(e.cost, 8, 64, 0.02, 1));
  EXPECT_EQ(r.requests, 64);
  EXPECT_EQ(r.warmup_requests, 8);
  EXPECT_EQ(r.ttft_each_s.size(), 56u);
  const xs::SimResult all = xs::simulate(closed_loop(e.cost, 8, 16, 0.02, 5));
  EXPECT_EQ(all.warmup_requests, 8);  // 2 requests per client: one stays
  EXPECT_EQ(all.ttft_each_s.size(), 8u);
}

// Lock-step clients queue every prompt each round; spread clients mostly find the engine decoding,
// so their prompts wait for less than the others' prompts.
TEST(ClosedLoop, SpreadClientsWaitLessForTheirFirstToken) {
  const OneH100Engine e;
  const xs::SimResult lock = xs::simulate(closed_loop(e.cost, 16, 128, 0, 1));
  const xs::SimResult spread = xs::simulate(closed_loop(e.cost, 16, 128, 1, 1));
  xs::StepWork prompt;
  xs::add_prefill_chunk(0, 1024, 0, prompt);
  prompt.prefill_seqs = prompt.sampled_prefills = 1;
  const double alone_ms = e.cost.cost(prompt).total.base() * 1e3;
  EXPECT_GT(lock.ttft_ms.mean, 4 * alone_ms);   // 16 prompts of 1,024 tokens: two 8,192-token steps
  EXPECT_LT(spread.ttft_ms.mean, 3 * alone_ms);  // its own prompt and the step it waits for
}

// A prefill-first scheduler that admits on demand re-admits the sequence it has just preempted
// unless admission leaves room for the running sequences' growth (SGLang's 512-client rows never
// ended): with new_token_ratio a cache half the size every client needs drains, preempting some.
TEST(Admission, NewTokenRatioLetsAPrefillFirstLoopDrain) {
  const OneH100Engine e;
  xs::SimSpec s = closed_loop(e.cost, 32, 64, 0, 0);
  s.load.out_len = 2048;
  s.scheduler.kind = xs::SchedulerKind::PrefillPriority;
  s.scheduler.kv_policy = xs::KvPolicy::OnDemand;
  s.scheduler.block_size = 1;
  s.scheduler.kv_tokens_override = 32 * (1024 + 2048) / 2;  // half of what every client needs
  s.scheduler.new_token_ratio = 0.1;
  const xs::SimResult r = xs::simulate(s);
  EXPECT_EQ(r.requests, 64);
  EXPECT_GT(r.preemptions, 0);
}

// The serve report states the closed loop's assumptions.
TEST(ClosedLoop, TheReportStatesSpreadAndWarmUp) {
  xs::ServeScenario sc;
  sc.system = "h100-sxm-dgx";
  sc.model = "llama3.1-8b";
  sc.load.arrival = xs::ArrivalKind::ClosedLoop;
  sc.load.concurrency = 4;
  sc.load.requests = 16;
  const auto rep = xs::run_scenario(sc, env());
  ASSERT_TRUE(rep) << rep.error();
  const long long per_client =
      std::llround(env().calibration->number("serving.closed_loop.warmup_requests_per_client"));
  ASSERT_GE(per_client, 1);  // the shipped warm-up; 16 requests leave each client one measured
  EXPECT_EQ(rep->sim.warmup_requests, 4 * per_client);
  const auto it = std::find_if(rep->assumptions.begin(), rep->assumptions.end(),
                               [](const std::string& a) { return a.rfind("closed loop:", 0) == 0; });
  ASSERT_NE(it, rep->assumptions.end());
  EXPECT_NE(it->find("serving.closed_loop.start_spread"), std::string::npos) << *it;
  EXPECT_NE(it->find(std::to_string(4 * per_client) + " warm-up requests"), std::string::npos) << *it;
}

}  // namespace

namespace {

// Early output stops (LoadSpec::output_stop_hazard): a fixed-length request's output ends at
// min(L, 1 + Exp(1/h)) tokens, so its mean is Σ_{k<L} P(len > k) = Σ_{k<L} e^{-hk}
// = (1 − e^{-hL}) / (1 − e^{-h}); the KV reservation stays the cap; h = 0 leaves every output at L.
TEST(ClosedLoop, OutputsEndEarlyAtTheStopHazardAndReserveTheirCap) {
  xs::LoadSpec load;
  load.arrival = xs::ArrivalKind::ClosedLoop;
  load.concurrency = 8;
  load.requests = 200000;
  load.in_len = 128;
  load.out_len = 1000;
  load.output_stop_hazard = 1e-3;
  const auto requests = xs::generate_requests(load);
  double sum = 0;
  for (const auto& r : requests) {
    EXPECT_GE(r.out_len, 1);
    EXPECT_LE(r.out_len, 1000);
    EXPECT_EQ(r.max_out, 1000);
    sum += static_cast<double>(r.out_len);
  }
  const double h = 1e-3, want = (1 - std::exp(-h * 1000)) / (1 - std::exp(-h));
  EXPECT_NEAR(sum / static_cast<double>(requests.size()), want, 0.01 * want);
  load.output_stop_hazard = 0;
  for (const auto& r : xs::generate_requests(load)) ASSERT_EQ(r.out_len, 1000);
}

}  // namespace
