// The project's copy of the public validation set (data/validation/public.csv) through the
// predictors: no row unsupported, and the accuracy ratchets. The gates are the figures reached
// on the grown 144-row file (November 2026), re-based on 155 rows (December 2026, below); tighten them as the model improves, never loosen.
#include <gtest/gtest.h>

#include "ratchet.h"
#include "xpusim/hw/catalog.h"

namespace {

using namespace xpusim;

using test::Gate;

// In-sample figures (percent) at the last tightening, rounded up to the next 0.1. One physics
// fix moved them (2026-11-30): all-to-all and one-shot collectives on rings/tori now respect the
// bisection (they were up to k× too fast on a k-D torus), which slows Neuron TP collectives:
// train median 7.6 → 7.7, infer median 9.0 → 9.3, infer/trainium median 16.6 → 17.3.
// Tightened the same day when serving lengths stopped being capped at 1,024 tokens (MLPerf
// means honoured): infer 9.3/96.9 → 9.2/86.1, infer/nvidia-blackwell 50.7/127.4 → 16.9/92.1.
// Tightened again (2026-11-30, docs/serving.md "Saturation", "MoE on Neuron stacks"): the
// schedule-ahead scheduler of TensorRT-LLM/NIM/SGLang, MoE expert rows per stack and the
// optimum-neuron and vLLM-Neuron stacks: infer 9.2/86.1 → 6.7/43.3, infer/nvidia-blackwell
// 16.9/92.1 → 13.2/91.1, infer/trainium 17.3/98.2 → 6.4/14.9; then DP attention for rows that
// state tp 1 (not only an empty tp): infer p90 → 38.9, infer/nvidia-blackwell → 10.5/87.0.
// Tightened again when the training compute efficiencies and framework factors became the output
// of `xpusim calibrate` (data/calibration/fitted/public.yaml): train 7.8/26.9 → 6.9/23.0.
// Tightened again (2026-12-01, docs/serving.md "MoE token routing", "Host-bound steps"): serving
// pays training's MoE routing cost per routed element, and TensorRT-LLM's PyTorch backend its
// host work per sequence: infer 6.7/38.9 → 6.7/18.8, infer/nvidia-blackwell 10.5/87.0 →
// 10.2/36.1, infer/nvidia-hopper 5.4/18.6 → 5.4/17.3, infer/trainium p90 14.9 → 14.8.
// Tightened again (2026-12-01, docs/calibration.md "The shipped fit"): the AXLearn stack's kernel
// quality on Hopper and on Trainium, fitted by the same command: train 6.9/23.0 → 6.8/19.2,
// train/nvidia-hopper 8.6/22.1 → 7.5/19.3, train/trainium 1.9/27.0 → 1.8/14.1.
// Tightened again (2026-12-02, docs/serving.md "Static shapes"): Neuron's compiled buckets and
// batch, with the Neuron serving keys re-fitted by `xpusim calibrate`: infer 6.7/18.8 → 6.3/17.5,
// infer/trainium 6.4/14.9 → 5.4/11.8.
// Tightened again (2026-12-02, docs/validation.md "What selective recomputation keeps"): AXLearn's
// projections-only remat policy, re-fitted by `xpusim calibrate`: train p90 19.2 → 19.0,
// train/trainium 1.8/14.1 → 1.8/8.2.
// Tightened again (2026-12-03, docs/validation.md "Attention length", "MoE dispatch"): the
// flash-attention prologue paid per kernel call (ring steps of context parallelism; k0 scaled by
// the kernel's rate per SM) and each tensor-parallel rank dispatching only its sequence shard to
// the experts, re-fitted by `xpusim calibrate`: train 6.8/19.0 → 6.5/18.2, train/nvidia-ampere
// 4.8/8.6 → 4.7/8.4, train/nvidia-hopper 7.5/19.3 → 6.7/18.8, train/nvidia-blackwell 7.4/36.2 →
// 7.1/35.2.
// Tightened again (2026-12-03, docs/calibration.md "Async TP"): async TP as a plan setting read
// from a row's notes, the first of tp chunks exposed: train 6.5/18.2 → 6.2/18.2,
// train/nvidia-hopper 6.7/18.8 → 6.5/18.8. Tightened at stop 33 (2026-12-03): the MLPerf
// DeepSeek-R1 rows draw their lengths in that data set's shape (its limits and output spread),
// infer 6.3/17.5 → 6.3/15.9, infer/nvidia-blackwell 10.2/36.1 → 9.5/31.3.
// Stop 35 (2026-12-03, docs/calibration.md "One kernel factor per stack"): AXLearn's GPU and
// Trainium kernel factors became one key, re-fitted by `xpusim calibrate` (0.766). Tightened:
// train p90 18.2 → 17.8, train/nvidia-hopper 6.5/18.8 → 6.3/18.3, train/trainium p90 8.2 → 7.6.
// Re-based, a judgment written down here: one key fewer moves the joint fit's shared keys by
// under 1 % (Hopper GEMM 0.7192 → 0.7197, the MoE routing cost 8.58 → 8.56 ps, Blackwell GEMM
// 0.7373 → 0.7367), and two in-sample figures moved past their gates by under 0.07 points: train
// median 6.19 → 6.26 (the 38th of 75 rows, MPT-3B fp8 on H100, −6.09 → −6.26 %) and
// train/nvidia-blackwell 7.10/35.20 → 7.12/35.23. The figure the project quotes, the
// leave-one-source-out train p90, went 24.22 → 19.56 (tests/slow/calibrate_public_test.cc).
// Re-based (2026-12-05), a judgment written down here: ../shared/validation/public.csv gained 11
// inference rows (144 → 155: the vLLM-Neuron plugin's own Llama-3.1-8B runs on one Trn2 chip, the
// NxD Inference contrib Mixtral card on Trn2 with its 2×H100 baseline, optimum-neuron's DP4 Trn1
// runs). Nothing was fitted to them (the shipped fit re-run on 155 rows gives the same values);
// they are predicted as the stacks stood, and their misses are the subject of the Trainium serving
// issue: the Mixtral TTFT +606 % and +155 %, the vLLM-Neuron plugin's TTFT and TPOT about −47 %
// and its throughput +89 to +92 %, the H100 Mixtral baseline −63 %. Gates moved by the new rows
// only: infer 6.3/15.9 → 7.0/47.2, infer/nvidia-hopper 5.4/17.3 → 5.9/18.5, infer/trainium
// 5.4/11.8 → 8.7/85.0; every other group is unchanged.
// Re-based (2026-12-05), a judgment written down here: the serving keys fitted by hand on this
// file's 80 infer rows (TRT-LLM, vLLM and SGLang step overheads, vLLM's layer overhead, the Hopper
// and Blackwell serving HBM efficiencies) were re-fitted by `xpusim calibrate` on this file and
// aic-silicon.csv together (2,627 rows, docs/validation.md). In sample here the infer median rose
// 6.7 → 7.9 (hopper 5.1 → 7.0, blackwell 9.4 → 10.1, ampere 5.1 → 6.4) and the p90 fell 42.6 →
// 36.2; on the silicon set TPOT fell 20.2 → 12.2. A fit to 80 rows read better on those 80.
// Re-based (2026-12-06), a judgment written down here: the closed-loop rows (vLLM bench, the
// vLLM-Neuron plugin's c2/c4 runs, optimum-neuron's) take the benchmark client's early output
// stops and start together (see aic_silicon_test.cc): the silicon set's TTFT median falls 49.6 →
// 41.8 while this file's infer median rises 7.9 → 8.1 (hopper 7.1 → 7.5, trainium 8.7 → 8.8);
// the p90 gates tighten to where they stand.
// Re-based (2026-12-06, stop 58), a judgment written down here: MoE token routing costs the bytes
// its kernels move at the chip's HBM rate instead of a fixed 9.03 ps per element (see
// aic_silicon_test.cc: the silicon set's TTFT p90 141 → 95, TPOT p90 39 → 34). The constant had
// been put in for this file's TensorRT-LLM max-throughput MoE rows, which now over-predict their
// throughput again: Qwen3-30B B200 TP1 +4 → +43 %, gpt-oss-120b B200 DEP2 +30 → +49 %, Qwen3-235B
// H200 DEP4 +11 → +31 % (hopper p90 16.6 → 18.6), DeepSeek-R1 B200 DEP4 −10 → +29 %, MLPerf
// DeepSeek-R1 B200 offline +2 → +19 % (blackwell 10.1/25.9 → 12.0/47.2; infer 8.1/36.3 →
// 8.21/43.3), while MLPerf DeepSeek-R1 GB300 offline goes −16 → +1 %. What the constant stood in
// for at thousands of sequences per engine is an open large-batch class (docs/serving.md).
// Re-based (2026-12-07, stop 63), a judgment written down here: TensorRT-LLM's per-step cost
// split into a step overhead (3.18 → 2.66 ms) and a per-layer one (16.6 us), fitted together on
// both files (see aic_silicon_test.cc: the silicon set's TPOT 12.1/34.5 → 11.6/34.2). This file's
// infer median rises 8.2 → 8.6 (blackwell 12.0 → 12.7, hopper p90 18.6 → 19.2) while the infer
// p90 falls 43.3 → 42.3 and its band coverage rises 86 → 89 %; out of fold (leave one source out
// with the silicon models) the public infer rows go 16.2/90.5 → 16.0/90.3.
const Gate kGates[] = {
    {"train", 6.3, 17.8},
    {"infer", 8.6, 42.3},
    {"train/nvidia-ampere", 4.7, 8.4},
    {"train/nvidia-hopper", 6.3, 18.3},
    {"train/nvidia-blackwell", 7.2, 35.3},
    {"train/trainium", 1.8, 7.6},
    {"infer/nvidia-ampere", 6.5, 6.8},
    {"infer/nvidia-hopper", 7.5, 19.2},
    {"infer/nvidia-blackwell", 12.8, 46.8},
    {"infer/trainium", 8.8, 85.0},
};

// Each test runs in its own process (ctest), so only the test that needs the predictions makes
// them: one validation of the whole file per suite run, not one per test.
class PublicFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new hw::Catalog(hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog"));
    rows_ = new std::vector<validation::Row>(validation::read_csv(validation::default_public_file(XS_TESTDATA_DIR)));
    calibration_ = new calib::Params(calib::load_shipped(XS_TESTDATA_DIR));
  }
  static std::vector<validation::RowResult> predict_all() {
    validation::Context ctx{catalog_, std::string(XS_TESTDATA_DIR) + "/models", calibration_};
    return validation::run_all(*rows_, ctx);
  }
  static hw::Catalog* catalog_;
  static std::vector<validation::Row>* rows_;
  static calib::Params* calibration_;
};
hw::Catalog* PublicFile::catalog_ = nullptr;
std::vector<validation::Row>* PublicFile::rows_ = nullptr;
calib::Params* PublicFile::calibration_ = nullptr;

TEST_F(PublicFile, HoldsEveryRowOfTheSharedFile) {
  EXPECT_EQ(rows_->size(), 155u);
}

TEST_F(PublicFile, EveryRowIsPredictedWithinTheAccuracyRatchets) {
  const auto results = predict_all();
  ASSERT_EQ(results.size(), rows_->size());
  for (const auto& r : results)
    EXPECT_EQ(r.prediction.status, validation::Status::Ok) << r.row.id << ": " << r.prediction.reason;
  auto groups = validation::summarize(results);
  for (auto& [k, s] : validation::summarize_by_family(results, *catalog_)) groups[k] = s;
  test::expect_within(groups, kGates);
}

// The copy must stay in step with ../shared/validation/public.csv where that file is present
// (beside a developer's checkout and in CI); a clone with nothing beside it skips this check.
TEST_F(PublicFile, CopyIsInStepWithTheSharedFile) { test::expect_in_step_with_shared("public.csv"); }

}  // namespace
