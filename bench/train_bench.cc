// Wall time of one simulated training step of llama3.1-405b on Trn3 Gen2 UltraClusters from
// 1,024 to 1,048,576 chips: event-driven executor, with the analytical executor as the baseline
// in the same run. The plan keeps tp=16 inside the UltraServer, pp=16 with vpp=2, and grows dp;
// the global batch grows with dp (one micro-batch per rank per 4 micro-batches).
//
//   build/train_bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include "xpusim/engine/train.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/workload/hf_config.h"

using namespace xpusim;

namespace {

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  return c;
}

const calib::Params& shipped() {
  static const calib::Params p = calib::load_shipped(XS_TESTDATA_DIR);
  return p;
}

engine::TrainScenario scenario(long long chips) {
  engine::TrainScenario s;
  s.framework = engine::framework_params("megatron", shipped());
  s.calibration = &shipped();
  s.system = &catalog().system("trn3-ultraserver-gen2");
  s.model = workload::load_model("llama3.1-405b", std::string(XS_TESTDATA_DIR) + "/models");
  s.plan.tp = 16;
  s.plan.pp = 16;
  s.plan.vpp = 2;
  s.plan.dp = static_cast<int>(chips / (16 * 16));
  s.plan.micro_batch = 1;
  s.plan.global_batch = static_cast<long long>(s.plan.dp) * 32;  // 32 micro-batches per pipeline
  s.plan.seq_len = 8192;
  s.plan.precision = core::Dtype::Mxfp8;
  s.plan.recompute = mapping::Recompute::Selective;
  return s;
}

void BM_EventDriven(benchmark::State& state) {
  const auto s = scenario(state.range(0));
  long long events = 0;
  for (auto _ : state) {
    auto r = engine::simulate_event(s);
    events = r.events;
    benchmark::DoNotOptimize(r.step_time);
  }
  state.counters["chips"] = static_cast<double>(state.range(0));
  state.counters["events"] = static_cast<double>(events);
}

void BM_Analytical(benchmark::State& state) {
  const auto s = scenario(state.range(0));
  for (auto _ : state) {
    auto r = engine::simulate_analytical(s);
    benchmark::DoNotOptimize(r.step_time);
  }
  state.counters["chips"] = static_cast<double>(state.range(0));
}

}  // namespace

BENCHMARK(BM_EventDriven)->RangeMultiplier(4)->Range(1024, 1048576)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Analytical)->RangeMultiplier(4)->Range(1024, 1048576)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
