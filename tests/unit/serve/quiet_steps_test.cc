// Quiet decode steps (a step that only decodes, finishes no sequence and ends before any other
// event) run back to back instead of through the event queue: the run must be the one the queue
// gives, field by field, whatever the scheduler, the load or the number of engines.
#include <gtest/gtest.h>

#include "serve_env.h"

#include <string>

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
  EXPECT_EQ(fast.duration.base(), queued.duration.base());
  EXPECT_EQ(fast.busy_time.base(), queued.busy_time.base());
  EXPECT_EQ(fast.requests_per_s, queued.requests_per_s);
  EXPECT_EQ(fast.output_tokens_per_s, queued.output_tokens_per_s);
  EXPECT_EQ(fast.mean_batch, queued.mean_batch);
  EXPECT_EQ(fast.mean_kv_utilisation, queued.mean_kv_utilisation);
  EXPECT_EQ(fast.mean_in_system, queued.mean_in_system);
  EXPECT_EQ(fast.ttft_each_s, queued.ttft_each_s);
  EXPECT_EQ(fast.tpot_each_s, queued.tpot_each_s);
  EXPECT_EQ(fast.e2e_each_s, queued.e2e_each_s);
  EXPECT_EQ(fast.activity.hbm_bytes.base(), queued.activity.hbm_bytes.base());
  EXPECT_EQ(fast.activity.total_flops().base(), queued.activity.total_flops().base());
  ASSERT_EQ(fast.timeline.size(), queued.timeline.size());
  for (size_t i = 0; i < fast.timeline.size(); ++i) {
    EXPECT_EQ(fast.timeline[i].time_s, queued.timeline[i].time_s) << i;
    EXPECT_EQ(fast.timeline[i].batch, queued.timeline[i].batch) << i;
  }
  EXPECT_EQ(xs::chrome_trace_json(fast), xs::chrome_trace_json(queued));
}

TEST(QuietSteps, AClosedLoopRunsAsThroughTheQueue) {
  const OneH100Engine e;
  xs::SimSpec s = quiet_spec(e.cost, 1, xs::ArrivalKind::ClosedLoop, 96);
  s.load.concurrency = 8;
  s.load.output_stop_hazard = 2e-3;  // outputs end early: the clients drift apart
  s.load.warmup_per_client = 1;
  expect_same_run(s, "one engine, clients together");
  s.load.start_spread = 0.5;
  expect_same_run(s, "one engine, clients spread");
  s.pool.engines = 3;
  s.load.concurrency = 20;
  expect_same_run(s, "three engines");
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
