// Per-source summaries: the unit a leave-one-source-out fold holds out (docs/validation.md).

#include <gtest/gtest.h>

#include "xpusim/validation/summary.h"

using namespace xpusim;

namespace {

validation::RowResult result(const std::string& kind, const std::string& url, double error_pct,
                             validation::Status status = validation::Status::Ok) {
  validation::RowResult r;
  r.row.kind = kind;
  r.row.source_url = url;
  r.prediction.status = status;
  r.error_pct = error_pct;
  return r;
}

// Rows group by source_of their URL: one repository at two commits is one source, MLPerf v4.1
// and v5.1 are two, an arXiv id with and without its version is one; kinds stay apart.
TEST(SourceSummary, GroupsRowsByTheSourceTheirFoldHoldsOut) {
  const std::string repo = "https://github.com/NVIDIA/TensorRT-LLM/blob/";
  const std::vector<validation::RowResult> results = {
      result("infer", repo + "aaa/docs/perf.md", 10.0),
      result("infer", repo + "bbb/docs/other.md", -30.0),
      result("infer", "https://github.com/mlcommons/inference_results_v4.1/blob/x/a.txt", 5.0),
      result("infer", "https://github.com/mlcommons/inference_results_v5.1/blob/y/b.txt", -5.0),
      result("train", "https://arxiv.org/abs/2104.04473v2", 4.0),
      result("train", "https://arxiv.org/abs/2104.04473", -8.0),
      result("train", "https://arxiv.org/abs/2104.04473", 0.0, validation::Status::Unsupported),
  };
  const auto s = validation::summarize_by_source(results);
  ASSERT_EQ(s.size(), 4u);
  const auto& trt = s.at("infer/github.com/NVIDIA/TensorRT-LLM");
  EXPECT_EQ(trt.n, 2);
  EXPECT_EQ(trt.ok, 2);
  // |errors| 10 and 30: the median interpolates halfway, the p90 at 0.9 of the way.
  EXPECT_DOUBLE_EQ(trt.median_abs_error_pct, 20.0);
  EXPECT_DOUBLE_EQ(trt.p90_abs_error_pct, 10.0 + 0.9 * 20.0);
  EXPECT_EQ(s.at("infer/github.com/mlcommons/inference_results_v4.1").n, 1);
  EXPECT_EQ(s.at("infer/github.com/mlcommons/inference_results_v5.1").n, 1);
  const auto& paper = s.at("train/arxiv:2104.04473");
  EXPECT_EQ(paper.n, 3);
  EXPECT_EQ(paper.ok, 2);
  EXPECT_EQ(paper.unsupported, 1);
  EXPECT_DOUBLE_EQ(paper.median_abs_error_pct, 6.0);
  EXPECT_DOUBLE_EQ(paper.mean_abs_error_pct, 6.0);
}

// Every row lands in exactly one source group of its kind: the groups' counts add up to the
// kind's.
TEST(SourceSummary, GroupCountsAddUpToTheKinds) {
  std::vector<validation::RowResult> results;
  for (int i = 0; i < 12; ++i)
    results.push_back(result(i % 2 ? "train" : "infer", "https://site" + std::to_string(i % 3) + ".example/p", i));
  const auto kinds = validation::summarize(results);
  int train = 0, infer = 0;
  for (const auto& [group, s] : validation::summarize_by_source(results))
    (group.rfind("train/", 0) == 0 ? train : infer) += s.n;
  EXPECT_EQ(train, kinds.at("train").n);
  EXPECT_EQ(infer, kinds.at("infer").n);
}

}  // namespace
