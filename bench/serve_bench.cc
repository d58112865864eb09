// One million Poisson requests on a 64-chip Trainium3 Gen2 deployment (Llama-3.1-70B, fp8,
// TP4 → 16 engines, 1024 in / 256 out). Target: under 30 s on one core (docs/serving.md).
#include <benchmark/benchmark.h>

#include "xpusim/hw/catalog.h"
#include "xpusim/serve/scenario.h"

namespace {

void BM_Serve1MPoissonTrn3x64(benchmark::State& state) {
  auto cat = xpusim::hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  const auto params = xpusim::calib::load_shipped(XS_TESTDATA_DIR);
  xpusim::serve::ServeEnv env{&cat, std::string(XS_TESTDATA_DIR) + "/models", &params};
  xpusim::serve::ServeScenario sc;
  sc.system = "trn3-ultraserver-gen2";
  sc.model = "llama3.1-70b";
  sc.chips = 64;
  sc.tp = 4;
  sc.precision = "fp8";
  sc.max_num_seqs = 128;
  sc.load.arrival = xpusim::serve::ArrivalKind::Poisson;
  sc.load.rate_per_s = static_cast<double>(state.range(1));
  sc.load.requests = state.range(0);
  sc.load.in_len = 1024;
  sc.load.out_len = 256;
  for (auto _ : state) {
    auto r = xpusim::serve::run_scenario(sc, env);
    benchmark::DoNotOptimize(r);
    state.counters["sim_requests_per_s"] = r->sim.requests_per_s;
    state.counters["steps"] = static_cast<double>(r->sim.steps);
  }
}
BENCHMARK(BM_Serve1MPoissonTrn3x64)->Args({1000000, 80})->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
