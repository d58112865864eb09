// Training at a million chips (docs/scale.md, docs/performance.md): the plan search of
// llama3.1-405b on 1,048,464 Trn3 Gen2 chips (7,281 UltraServers) with failures, checkpoints,
// goodput and site power, beside the bare plan search (the baseline, same space), at a batch
// bound of 2^30 tokens (131,072 sequences: the 16M-token critical batch employs at most 261,504
// Trn3 chips); the answer at the critical batch (no plan, and the search for the most chips a
// plan employs); a 100-run Monte Carlo of a 30-day run at that scale; and the deadline solver
// over every whole-UltraServer count up to 1M chips.
//
//   build/bench/scale_bench --benchmark_counters_tabular=true

#include <benchmark/benchmark.h>

#include "xpusim/engine/goodput.h"
#include "xpusim/scenario/solver.h"

using namespace xpusim;

namespace {

constexpr long long kChips = 1048464;  // 7,281 whole UltraServers of 144

const hw::Catalog& catalog() {
  static const hw::Catalog c = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  return c;
}

const calib::Params& shipped() {
  static const calib::Params p = calib::load_shipped(XS_TESTDATA_DIR);
  return p;
}

const std::string kModels = std::string(XS_TESTDATA_DIR) + "/models";

scenario::TrainInputs inputs() {
  scenario::TrainInputs in;
  in.system = "trn3-ultraserver-gen2";
  in.model = "llama3.1-405b";
  in.chips = kChips;
  in.executor = "analytical";
  in.train_tokens = 15e12;
  in.max_global_batch_tokens = 1073741824.0;  // 2^30 tokens: a plan exists at 1M chips
  return in;
}

// Baseline: the same plan search, without failures, goodput or power.
void BM_PlanSearch(benchmark::State& state) {
  const scenario::BuiltTrain built = scenario::build_train(inputs(), catalog(), kModels, shipped());
  for (auto _ : state) {
    auto b = scenario::build_train(inputs(), catalog(), kModels, shipped());
    benchmark::DoNotOptimize(b.scenario.plan.dp);
  }
  state.counters["chips"] = static_cast<double>(kChips);
  state.counters["plans"] = built.evaluated;
}

void BM_PlanSearchWithGoodput(benchmark::State& state) {
  double goodput = 0;
  for (auto _ : state) {
    auto run = scenario::run_train(inputs(), catalog(), kModels, shipped(), false);
    goodput = run.goodput.goodput_fraction;
    benchmark::DoNotOptimize(run.time_to_train_with_failures);
  }
  state.counters["chips"] = static_cast<double>(kChips);
  state.counters["goodput"] = goodput;
}

// At the critical batch no plan employs 1M chips: the search, then the search for the most
// chips a plan employs within the bound (the diagnostic's answer).
void BM_CriticalBatchAnswer(benchmark::State& state) {
  scenario::TrainInputs in = inputs();
  in.max_global_batch_tokens.reset();
  size_t message = 0;
  for (auto _ : state) {
    try {
      scenario::build_train(in, catalog(), kModels, shipped());
    } catch (const core::InputError& e) {
      message = std::string(e.what()).size();
    }
  }
  state.counters["chips"] = static_cast<double>(kChips);
  state.counters["answered"] = message > 0 ? 1 : 0;
}

void BM_MonteCarlo30Days(benchmark::State& state) {
  const auto run = scenario::run_train(inputs(), catalog(), kModels, shipped(), false);
  // A run that takes 30 days with failures: 30 days of wall time times the failure goodput.
  const core::Seconds work = core::seconds(30 * core::kSecondsPerDay * run.goodput.failure_goodput);
  double failures = 0;
  for (auto _ : state) {
    auto d = engine::monte_carlo_time_to_train(run.goodput, work, 100, 1);
    failures = d.mean_failures;
    benchmark::DoNotOptimize(d.p50);
  }
  state.counters["runs"] = 100;
  state.counters["failures_per_run"] = failures;
}

void BM_DeadlineSolver(benchmark::State& state) {
  scenario::TrainInputs in = inputs();
  in.chips.reset();
  in.max_global_batch_tokens.reset();  // the critical batch, as `train --deadline 30d` runs
  in.deadline = "30d";
  size_t tried = 0;
  long long chips = 0;
  for (auto _ : state) {
    auto r = scenario::run_solver(in, catalog(), kModels, shipped());
    tried = r.choice.tried.size();
    chips = r.choice.chips;
  }
  state.counters["counts_tried"] = static_cast<double>(tried);
  state.counters["chips"] = static_cast<double>(chips);
}

}  // namespace

BENCHMARK(BM_PlanSearch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanSearchWithGoodput)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CriticalBatchAnswer)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MonteCarlo30Days)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DeadlineSolver)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
