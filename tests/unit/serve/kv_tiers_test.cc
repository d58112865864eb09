// KV offload tiers on the serving simulator: a prompt's blocks found in host memory load back
// before its prompt runs, or layer by layer beside it (SchedulerSpec::layerwise_kv_load).
#include <gtest/gtest.h>

#include "serve_env.h"

#include <algorithm>
#include <vector>

#include "xpusim/core/sim_time.h"

namespace xs = xpusim::serve;
namespace core = xpusim::core;

namespace {

using xpusim::test::OneH100Engine;

// Two requests with the same 4-block prompt (2,048 tokens), the second long after the first
// ends. The HBM prefix cache holds one block, so the first request's prompt leaves its last
// block there and its first three in host memory: the second finds those three (1,536 tokens)
// in host memory and prefills the last 512.
xs::SimSpec repeated_prompt(const xs::StepCostModel& cost, double host_seconds_per_token, bool layerwise) {
  xs::SimSpec s;
  s.pool = xs::PoolSpec{&cost, 1};
  s.load.arrival = xs::ArrivalKind::Trace;
  s.load.trace_block_tokens = 512;
  std::vector<xs::Request> trace;
  for (const double at : {0.0, 10.0}) {
    xs::Request r;
    r.arrival = core::to_sim_time(core::seconds(at));
    r.in_len = 2048;
    r.out_len = 2;
    r.prefix_blocks = {11, 12, 13, 14};
    trace.push_back(r);
  }
  s.load.trace = trace;
  s.load.requests = 2;
  s.scheduler.prefix_caching = true;
  s.scheduler.prefix_cache_tokens = 512;
  s.scheduler.host_cache_tokens = 1 << 20;
  s.scheduler.host_load_seconds_per_token = host_seconds_per_token;
  s.scheduler.layerwise_kv_load = layerwise;
  return s;
}

// The second request's TTFT is its one prompt step: 512 tokens after 1,536 cached ones, with the
// load of the 1,536 from host memory after it (compute + load) or beside it, layer by layer
// (max(compute, load) + min(compute, load) / 32 layers of Llama-3.1-8B).
TEST(KvTiers, HostLoadsRunBeforeThePromptOrLayerByLayerBesideIt) {
  const OneH100Engine e;
  xs::StepWork w;
  xs::add_prefill_chunk(1536, 512, 0, w);
  w.prefill_seqs = w.sampled_prefills = 1;
  const double compute = e.cost.cost(w).total.base();
  for (const double factor : {0.2, 1.0, 5.0}) {  // the load a fifth of, equal to, and 5x the compute
    const double per_token = factor * compute / 1536;
    const double load = 1536 * per_token;
    const xs::SimResult serial = xs::simulate(repeated_prompt(e.cost, per_token, false));
    const xs::SimResult layered = xs::simulate(repeated_prompt(e.cost, per_token, true));
    ASSERT_EQ(serial.prefix.tokens_hit_host, 1536) << factor;
    ASSERT_EQ(layered.prefix.tokens_hit_host, 1536) << factor;
    ASSERT_EQ(serial.ttft_each_s.size(), 2u);
    const double tol = 1e-11;  // the clock's picoseconds
    EXPECT_NEAR(serial.ttft_each_s[1], compute + load, tol) << factor;
    EXPECT_NEAR(layered.ttft_each_s[1], std::max(compute, load) + std::min(compute, load) / 32, tol) << factor;
    EXPECT_LT(layered.ttft_each_s[1], serial.ttft_each_s[1]);
  }
}

}  // namespace
