// End-to-end tests of `--html FILE` (docs/html.md): the pages are written, deterministic, carry
// their charts and provenance, and the flag is refused where a page would not describe one run.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path temp_path(const std::string& name) { return fs::temp_directory_path() / ("xpusim_html_" + name); }

const char* kHtmlTrain = "train --system trn2-ultraserver --model llama3.1-8b --chips 64 --tp 4 --pp 4 --global-batch 64 "
                     "--seq-len 4096";

TEST(HtmlCli, TrainPageIsByteIdenticalAndHasItsCharts) {
  const fs::path a = temp_path("train_a.html"), b = temp_path("train_b.html");
  const auto ra = run_cli(std::string(kHtmlTrain) + " --html " + a.string());
  const auto rb = run_cli(std::string(kHtmlTrain) + " --html " + b.string());
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  const std::string page = read_file(a);
  EXPECT_EQ(page, read_file(b));
  for (const char* chart : {"step-timeline", "step-breakdown", "memory", "roofline"})
    EXPECT_NE(page.find(std::string("data-chart=\"") + chart + "\""), std::string::npos) << chart;
  EXPECT_NE(page.find("<table class=\"provenance\">"), std::string::npos);
  EXPECT_NE(page.find("fnv1a64:"), std::string::npos);
  EXPECT_EQ(page.find("<script"), std::string::npos);
  // The text on stdout is the same as without --html.
  EXPECT_EQ(ra.out, run_cli(kHtmlTrain).out);
  fs::remove(a);
  fs::remove(b);
}

/// Runs `args --html FILE` twice; both succeed and write the same bytes. Returns the page.
std::string page_twice(const std::string& args, const std::string& name) {
  const fs::path a = temp_path(name + "_a.html"), b = temp_path(name + "_b.html");
  const auto ra = run_cli(args + " --html " + a.string());
  const auto rb = run_cli(args + " --html " + b.string());
  EXPECT_EQ(ra.exit_code, 0) << ra.err;
  EXPECT_EQ(rb.exit_code, 0) << rb.err;
  const std::string page = read_file(a);
  EXPECT_EQ(page, read_file(b)) << args;
  fs::remove(a);
  fs::remove(b);
  return page;
}

TEST(HtmlCli, ServeValidateAndClaimsPagesAreByteIdenticalWithTheirCharts) {
  const std::string serve = page_twice(
      "serve --system trn2-ultraserver --model llama3.1-8b --chips 4 --rate 4 --requests 60 --in-len 512 --out-len 64",
      "serve");
  for (const char* chart : {"ttft-cdf", "tpot-cdf", "e2e-cdf", "kv-utilisation", "batch", "throughput-vs-rate", "latency-vs-rate"})
    EXPECT_NE(serve.find(std::string("data-chart=\"") + chart + "\""), std::string::npos) << chart;
  // Two public rows, one of them with markup in its id: escaped in the table and the tooltips.
  std::ifstream in(xpusim::test::data_dir() + "/validation/public.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  const fs::path csv = temp_path("rows.csv");
  std::ofstream(csv) << header << "\n" << row << "\n" << "x<i>&" << row.substr(row.find(',')) << "\n";
  const std::string validate = page_twice("validate " + csv.string(), "validate");
  EXPECT_NE(validate.find("data-chart=\"pred-vs-measured-"), std::string::npos);
  EXPECT_NE(validate.find("x&lt;i&gt;&amp;"), std::string::npos);
  EXPECT_EQ(validate.find("x<i>"), std::string::npos);
  fs::remove(csv);
  const std::string claims = page_twice("claims", "claims");
  EXPECT_NE(claims.find("data-chart=\"claims-ratios\""), std::string::npos);
  EXPECT_NE(claims.find("aws-4.4x-compute"), std::string::npos);
}

// A run on a trace with prefix hashes (issue 47): the page shows the TTFT CDFs with and without
// the cache and the hit rate against capacity from a replay of the trace; a run without a
// prefix cache has no such section.
TEST(HtmlCli, ServePageOnATraceShowsTheCacheAgainstNone) {
  const fs::path trace = temp_path("mooncake60.csv");
  {
    std::ifstream in(xpusim::test::data_dir() + "/traces/mooncake-conversation.csv");
    std::ofstream out(trace);
    std::string line;
    for (int i = 0; i < 61 && std::getline(in, line); ++i) out << line << "\n";
  }
  const std::string page = page_twice(
      "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --framework vllm --arrivals " + trace.string(), "trace");
  for (const char* chart : {"ttft-cdf-cache", "hit-rate-vs-capacity"})
    EXPECT_NE(page.find(std::string("data-chart=\"") + chart + "\""), std::string::npos) << chart;
  EXPECT_NE(page.find("cache off"), std::string::npos);
  EXPECT_NE(page.find("an unbounded cache serves"), std::string::npos);
  const std::string off = page_twice("serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --framework vllm "
                                     "--prefix-cache off --arrivals " + trace.string(), "trace_off");
  EXPECT_EQ(off.find("hit-rate-vs-capacity"), std::string::npos);
  fs::remove(trace);
}

TEST(HtmlCli, RefusedWithScalingAndSearch) {
  const auto t = run_cli("train --system trn2-ultraserver --model llama3.1-8b --scaling 64..128 --html /tmp/x.html");
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("--html"), std::string::npos) << t.err;
  const auto s = run_cli("serve --system trn2-ultraserver --model llama3.1-8b --rate 2 --search --html /tmp/x.html");
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find("--html"), std::string::npos) << s.err;
}

TEST(HtmlCli, UnwritablePathIsBadInput) {
  const auto r = run_cli(std::string(kHtmlTrain) + " --html /nonexistent-dir/page.html");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--html"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent-dir/page.html"), std::string::npos) << r.err;
}

}  // namespace

namespace {

/// Counts occurrences of `needle` in `text`.
std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(HtmlCli, SweepPageHasTheParetoFrontOfItsPoints) {
  // bf16 and fp8 at four chip counts: fp8 is faster at the same price per chip-hour, so some point
  // is beaten on both axes (off the front) and the fastest is on it; the page is byte-identical.
  const std::string grid = xpusim::test::data_dir() + "/sweeps/train-llama3.1-8b-h100.yaml";
  const std::string page = page_twice("sweep " + grid, "sweep");
  EXPECT_NE(page.find("data-chart=\"pareto-front\""), std::string::npos);
  const auto table = page.find("class=\"points\"");
  ASSERT_NE(table, std::string::npos);
  const std::string points = page.substr(table, page.find("</table>", table) - table);
  const std::size_t on_front = count_of(points, "<td>yes</td>");
  EXPECT_GE(on_front, 1u);
  EXPECT_LT(on_front, 8u);
  EXPECT_EQ(count_of(points, "<td>ok</td>"), 8u);
}

}  // namespace
