// Quiet decode steps (a step that only decodes, finishes no sequence and ends before any other
// event) run back to back instead of through the event queue, and a run of them takes each step's
// time from the line between the run's first and last step (the step cost is affine in the
// context there): the run must be the one the queue gives, whatever the scheduler, the load or
// the number of engines. The same steps in the same order; a step's time may round to the
// neighbouring picosecond and the activity sums in another order, so times agree to a picosecond
// per step and rates and activity to 1e-12.
#include <gtest/gtest.h>

#include "serve_env.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "xpusim/serve/scenario.h"

namespace xs = xpusim::serve;

namespace {

using xpusim::test::OneH100Engine;

// The cases' common spec, every run traced.
xs::SimSpec quiet_spec(const xs::StepCostModel& cost, int engines, xs::ArrivalKind arrival, long long requests) {
  xs::SimSpec s;
  s.pool = xs::PoolSpec{&cost, engines};
  s.load.arrival = arrival;
  s.load.requests = requests;
  s.load.in_len = 1024;
  s.load.out_len = 256;
  s.trace.enabled = true;
  return s;
}

// Within a picosecond per step of the run (the rounding of interpolated step times).
void expect_same_time(double fast_s, double queued_s, long long steps) {
  EXPECT_NEAR(fast_s, queued_s, 1e-12 * static_cast<double>(steps) + 1e-15);
}

void expect_same_rate(double fast, double queued) { EXPECT_NEAR(fast, queued, 1e-12 * std::fabs(queued)); }

void expect_same_times(const std::vector<double>& fast, const std::vector<double>& queued, long long steps) {
  ASSERT_EQ(fast.size(), queued.size());
  for (size_t i = 0; i < fast.size(); ++i) expect_same_time(fast[i], queued[i], steps);
}

// Every step of the trace: the same work, at times within a picosecond per step.
void expect_same_steps(const xs::ServeTrace& fast, const xs::ServeTrace& queued, long long steps) {
  ASSERT_EQ(fast.steps.size(), queued.steps.size());
  for (size_t i = 0; i < fast.steps.size(); ++i) {
    const auto &f = fast.steps[i], &q = queued.steps[i];
    EXPECT_EQ(f.engine, q.engine) << i;
    EXPECT_EQ(f.decode_seqs, q.decode_seqs) << i;
    EXPECT_EQ(f.prefill_tokens, q.prefill_tokens) << i;
    EXPECT_EQ(f.prefill_chunks, q.prefill_chunks) << i;
    EXPECT_LE(std::llabs(f.start - q.start), steps) << i;
    EXPECT_LE(std::llabs(f.end - q.end), steps) << i;
  }
  ASSERT_EQ(fast.requests.size(), queued.requests.size());
  for (size_t i = 0; i < fast.requests.size(); ++i) {
    EXPECT_EQ(fast.requests[i].id, queued.requests[i].id) << i;
    EXPECT_LE(std::llabs(fast.requests[i].finish - queued.requests[i].finish), steps) << i;
  }
}

// The two runs of a spec, with and without quiet steps, compared on everything a report reads:
// tallies, times, latencies of every request, the activity, the sampled timeline and the trace.
void expect_same_run(xs::SimSpec spec, const std::string& name) {
  SCOPED_TRACE(name);
  const xs::SimResult fast = xs::simulate(spec);
  spec.queue_every_step = true;
  const xs::SimResult queued = xs::simulate(spec);
  ASSERT_GT(fast.requests, 0);
  EXPECT_EQ(fast.requests, queued.requests);
  EXPECT_EQ(fast.steps, queued.steps);
  EXPECT_EQ(fast.preemptions, queued.preemptions);
  const long long n = queued.steps;
  expect_same_time(fast.duration.base(), queued.duration.base(), n);
  expect_same_time(fast.busy_time.base(), queued.busy_time.base(), n);
  expect_same_rate(fast.requests_per_s, queued.requests_per_s);
  expect_same_rate(fast.output_tokens_per_s, queued.output_tokens_per_s);
  expect_same_rate(fast.mean_batch, queued.mean_batch);
  expect_same_rate(fast.mean_kv_utilisation, queued.mean_kv_utilisation);
  expect_same_rate(fast.mean_in_system, queued.mean_in_system);
  expect_same_times(fast.ttft_each_s, queued.ttft_each_s, n);
  expect_same_times(fast.tpot_each_s, queued.tpot_each_s, n);
  expect_same_times(fast.e2e_each_s, queued.e2e_each_s, n);
  expect_same_rate(fast.activity.hbm_bytes.base(), queued.activity.hbm_bytes.base());
  expect_same_rate(fast.activity.total_flops().base(), queued.activity.total_flops().base());
  ASSERT_EQ(fast.timeline.size(), queued.timeline.size());
  for (size_t i = 0; i < fast.timeline.size(); ++i) {
    expect_same_time(fast.timeline[i].time_s, queued.timeline[i].time_s, n);
    EXPECT_EQ(fast.timeline[i].batch, queued.timeline[i].batch) << i;
  }
  expect_same_steps(fast.trace, queued.trace, n);
}

TEST(QuietSteps, AClosedLoopRunsAsThroughTheQueue) {
  const OneH100Engine e;
  xs::SimSpec s = quiet_spec(e.cost, 1, xs::ArrivalKind::ClosedLoop, 96);
  s.load.concurrency = 8;
  s.load.output_stop_hazard = 2e-3;  // outputs end early: the clients drift apart
  s.load.warmup_per_client = 1;
  EXPECT_GT(xs::simulate(s).interpolated_steps, 0);  // the runs of quiet steps are interpolated
  expect_same_run(s, "one engine, clients together");
  s.load.start_spread = 0.5;
  expect_same_run(s, "one engine, clients spread");
  s.pool.engines = 3;
  s.load.concurrency = 20;
  expect_same_run(s, "three engines");
}

// A run whose step cost bends: the host's per-sequence work is exposed while the contexts are
// short and covered by the device once they are long. The line through the run's ends misses
// its middle (by far more than a picosecond a step), so its steps are costed one by one.
TEST(QuietSteps, AStepCostThatBendsRunsAsThroughTheQueue) {
  const OneH100Engine e;
  xs::StepWork mid;
  mid.decode_seqs = 8;
  mid.decode_q = 1;
  mid.decode_context = 8.0 * (1024 + 128);  // halfway through 256 output tokens
  const xs::StepCost c = e.cost.cost(mid);
  xs::FrameworkProfile prof = e.prof;
  prof.host_time_per_sequence = xpusim::core::seconds((c.total.base() - c.overhead.base()) / 8.0);
  const xs::StepCostModel bent{e.sys, e.m, e.plan, prof, xpusim::mapping::memory_params(xpusim::test::shipped()),
                               nullptr};
  xs::SimSpec s = quiet_spec(bent, 1, xs::ArrivalKind::ClosedLoop, 32);
  s.load.concurrency = 8;
  expect_same_run(s, "host work crossing the device time mid-run");
}

TEST(QuietSteps, OpenLoopsAndOfflineRunsRunAsThroughTheQueue) {
  const OneH100Engine e;
  xs::SimSpec poisson = quiet_spec(e.cost, 2, xs::ArrivalKind::Poisson, 400);
  poisson.load.rate_per_s = 15;
  expect_same_run(poisson, "Poisson, two engines");
  xs::SimSpec offline = quiet_spec(e.cost, 2, xs::ArrivalKind::Offline, 200);
  offline.scheduler.max_num_seqs = 16;  // a full batch with requests waiting: quiet too
  expect_same_run(offline, "offline, batch of 16");
}

// Steps that preempt (KV growth on demand), schedule ahead, or run prompts first: the quiet-step
// test must leave each of them to the queue where it would change what happens next.
TEST(QuietSteps, SchedulerVariantsRunAsThroughTheQueue) {
  const OneH100Engine e;
  xs::SimSpec tight = quiet_spec(e.cost, 1, xs::ArrivalKind::ClosedLoop, 64);
  tight.load.concurrency = 32;
  tight.load.out_len = 2048;
  tight.scheduler.kind = xs::SchedulerKind::PrefillPriority;
  tight.scheduler.kv_policy = xs::KvPolicy::OnDemand;
  tight.scheduler.block_size = 1;
  tight.scheduler.kv_tokens_override = 32 * (1024 + 2048) / 2;
  tight.scheduler.new_token_ratio = 0.1;
  const xs::SimResult r = xs::simulate(tight);
  EXPECT_GT(r.preemptions, 0);  // the case covers preemption
  expect_same_run(tight, "KV on demand, preempting");
  xs::SimSpec ahead = quiet_spec(e.cost, 2, xs::ArrivalKind::Poisson, 300);
  ahead.load.rate_per_s = 30;
  ahead.scheduler.schedule_ahead = true;
  expect_same_run(ahead, "schedule ahead");
}

TEST(QuietSteps, DisaggregatedPoolsRunAsThroughTheQueue) {
  const OneH100Engine e;
  xs::SimSpec s = quiet_spec(e.cost, 2, xs::ArrivalKind::Poisson, 300);
  s.load.rate_per_s = 12;
  s.disaggregated = true;
  s.decode_pool = xs::PoolSpec{&e.cost, 2};
  s.kv_transfer_latency = xpusim::core::seconds(20e-6);
  s.kv_transfer_per_token = xpusim::core::seconds(2e-7);
  expect_same_run(s, "two prefill and two decode engines");
}

}  // namespace
