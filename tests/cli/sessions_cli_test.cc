// `xpusim sessions` (docs/serving.md, "Multi-turn sessions"): a trace of multi-turn sessions that
// trace-stats and serve read back, the same with every run, and its flags checked by name.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_runner.h"

namespace {

using xpusim::test::run_cli;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SessionsCli, WritesATraceThatTraceStatsAndServeReadBack) {
  const std::string file = ::testing::TempDir() + "xs_sessions_cli.csv";
  const std::string args = "sessions --sessions 40 --rate 0.5 --turns 4 --think-time 20 --system-prompt-len 600";
  auto w = run_cli(args + " --out " + file);
  ASSERT_EQ(w.exit_code, 0) << w.err;
  EXPECT_NE(w.out.find("40 sessions"), std::string::npos) << w.out;
  EXPECT_NE(w.out.find("prompt tokens an unbounded prefix cache serves"), std::string::npos) << w.out;
  const std::string csv = read_file(file);
  EXPECT_EQ(csv.rfind("arrival_s,in_len,out_len,prefix_hashes,session_id,turn\n", 0), 0u);
  auto again = run_cli(args);  // the trace to stdout: byte-identical with the file
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, csv);

  auto stats = run_cli("trace-stats " + file + " --json");
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const auto s = nlohmann::json::parse(stats.out);
  EXPECT_EQ(s["sessions"], 40);
  EXPECT_EQ(s["rows_in_sessions"], s["requests"]);

  const std::string serve = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --json --arrivals " + file;
  auto on = run_cli(serve + " --prefix-cache on"), off = run_cli(serve + " --prefix-cache off");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const auto a = nlohmann::json::parse(on.out), b = nlohmann::json::parse(off.out);
  EXPECT_EQ(a["requests"], s["requests"]);
  EXPECT_GT(a["prefix_cache"]["token_hit_ratio"].get<double>(), 0.3);  // later turns repeat their history
  EXPECT_LT(a["ttft_mean_ms"].get<double>(), b["ttft_mean_ms"].get<double>());
  std::remove(file.c_str());
}

TEST(SessionsCli, FromATraceStartsASessionAtEachRow) {
  const std::string plain = ::testing::TempDir() + "xs_sessions_plain.csv";
  std::ofstream(plain) << "arrival_s,in_len,out_len\n0,100,20\n1.5,200,30\n3,300,40\n";
  auto r = run_cli("sessions --from " + plain + " --turns 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n0.000000,100,20,1,0,1\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n1.500000,200,30,"), std::string::npos) << r.out;
  std::remove(plain.c_str());
}

TEST(SessionsCli, BadInputNamesTheField) {
  auto turns = run_cli("sessions --turns 0.5");
  EXPECT_EQ(turns.exit_code, 2);
  EXPECT_NE(turns.err.find("turns"), std::string::npos) << turns.err;
  auto sessions = run_cli("sessions --sessions 0");
  EXPECT_EQ(sessions.exit_code, 2);
  EXPECT_NE(sessions.err.find("sessions"), std::string::npos) << sessions.err;
  auto from = run_cli("sessions --from /nonexistent/trace.csv");
  EXPECT_EQ(from.exit_code, 2);
  EXPECT_NE(from.err.find("/nonexistent/trace.csv"), std::string::npos) << from.err;
}

}  // namespace
