// xpusim replay end to end: the VERIFIED all-reduce microbenchmark against `xpusim collective`,
// a training trace's JSON (convention, determinism) and timeline, and the exit-2 diagnostics.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../unit/chakra_fixture.h"
#include "cli_runner.h"

using xpusim::test::run_cli;
namespace fx = xpusim::test::chakra;

namespace {

std::string dir_for(const std::string& name) {
  const std::string d = testing::TempDir() + "xs_replay_" + name + "/";
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

std::string all_reduce_files(const std::string& name, int ranks = 4) {
  const std::string d = dir_for(name);
  for (int r = 0; r < ranks; ++r) fx::write_file(d + "all_reduce." + std::to_string(r) + ".et", fx::all_reduce_1mb(r));
  return d + "all_reduce";
}

TEST(ReplayCli, AllReduceMicrobenchmarkTakesTheCollectiveTime) {
  const std::string prefix = all_reduce_files("ar");
  const auto r = run_cli("replay " + prefix + " --system h100-sxm-dgx --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto c = run_cli("collective --system h100-sxm-dgx --chips 4 --op all-reduce --bytes 1048576 --json");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  const double expect = nlohmann::json::parse(c.out)["time_s"].get<double>();
  EXPECT_NEAR(j["total_time_s"].get<double>(), expect, 1e-12);  // the replay rounds to picoseconds
  EXPECT_EQ(j["command"], "replay");
  EXPECT_EQ(j["inputs"]["chips"], 4);
  EXPECT_EQ(j["ranks"].size(), 4u);
  EXPECT_EQ(j["collectives"]["all-reduce"]["count"], 1);
  EXPECT_EQ(j["collectives"]["all-reduce"]["bytes"], 1048576);
  EXPECT_EQ(j["node_counts"]["COMM_COLL_NODE"], 4);
  EXPECT_DOUBLE_EQ(j["exposed_comm_s"].get<double>(), j["total_time_s"].get<double>());  // no compute at all
}

TEST(ReplayCli, TrainingTraceJsonIsDeterministicAndFollowsTheConvention) {
  const std::string prefix = fx::write_training(dir_for("train"), "train", fx::TrainingShape{});
  const std::string timeline = testing::TempDir() + "xs_replay_timeline.json";
  const auto a = run_cli("replay " + prefix + " --system h100-sxm-dgx --chips 4 --json --trace " + timeline);
  const auto b = run_cli("replay " + prefix + " --system h100-sxm-dgx --chips 4 --json");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);  // byte-identical
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_GT(j["total_time_s"].get<double>(), j["compute_s"].get<double>());
  EXPECT_LT(j["exposed_comm_s"].get<double>(), j["comm_s"].get<double>());  // overlapped
  EXPECT_EQ(j["collectives"]["all-reduce"]["count"], 4);
  EXPECT_EQ(j["collectives"]["send-recv"]["count"], 1);
  // Every number carries a unit word, or is one of the documented counts (docs/json.md).
  const std::set<std::string> counts = {"critical_rank", "rank", "nodes", "count"};
  std::function<void(const nlohmann::json&, const std::string&, bool)> check = [&](const nlohmann::json& v,
                                                                                  const std::string& key, bool covered) {
    const bool unit = covered || key.ends_with("_s") || key == "bytes" || key == "node_counts";
    if (v.is_object()) {
      for (const auto& [k, x] : v.items()) check(x, k, unit);
    } else if (v.is_array()) {
      for (const auto& x : v) check(x, key, unit);
    } else if (v.is_number()) {
      EXPECT_TRUE(unit || counts.count(key) || key == "schema_version") << key;
    }
  };
  for (const auto& [k, v] : j.items())
    if (k != "inputs") check(v, k, false);
  // The timeline: one process per rank, compute and communication threads, events with args.
  std::ifstream in(timeline);
  std::stringstream ss;
  ss << in.rdbuf();
  const auto t = nlohmann::json::parse(ss.str());
  int gemms = 0, all_reduces = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string name = e["name"];
    if (name.rfind("fwd_gemm", 0) == 0) {
      ++gemms;
      EXPECT_EQ(e["tid"], 0);
      EXPECT_GT(e["args"]["num_ops"].get<double>(), 0);
      EXPECT_EQ(e["args"]["type"], "COMP_NODE");
    }
    if (name.rfind("grad_all_reduce", 0) == 0) {
      ++all_reduces;
      EXPECT_EQ(e["tid"], 1);
      EXPECT_EQ(e["args"]["bytes"], 64 << 20);
    }
  }
  EXPECT_EQ(gemms, 16);
  EXPECT_EQ(all_reduces, 16);
  const auto text = run_cli("replay " + prefix + " --system h100-sxm-dgx");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("exposed comm"), std::string::npos) << text.out;
}

TEST(ReplayCli, BadInputsExitTwoWithTheirMessages) {
  const std::string ar = all_reduce_files("bad_ar");
  // Rank files with one defect each.
  auto with_rank0 = [](const std::string& name, const std::string& bytes, int ranks = 2) {
    const std::string d = dir_for(name);
    fx::write_file(d + "t.0.et", bytes);
    for (int r = 1; r < ranks; ++r) fx::write_file(d + "t." + std::to_string(r) + ".et", fx::all_reduce_1mb(r));
    return d + "t";
  };
  fx::pb::Node odd;
  odd.set_id(1);
  odd.set_type(static_cast<fx::pb::NodeType>(11));
  fx::pb::Node missing;
  missing.set_id(1);
  missing.set_type(fx::pb::COMP_NODE);
  missing.add_data_deps(77);
  fx::pb::Node c1 = missing, c2 = missing;
  c1.set_data_deps(0, 2);
  c2.set_id(2);
  c2.set_data_deps(0, 1);
  fx::pb::Node lonely;
  lonely.set_id(1);
  lonely.set_type(fx::pb::COMM_COLL_NODE);
  fx::attr(lonely, "comm_type")->set_int64_val(0);
  fx::attr(lonely, "comm_size")->set_int64_val(1024);
  fx::pb::Node grouped = lonely;
  fx::attr(grouped, "pg_name")->set_string_val("3");
  const std::string groups = dir_for("groups") + "groups.json";
  std::ofstream(groups) << "{\"3\": [0, \"one\"]}";
  const std::string m = fx::metadata();
  struct Case {
    std::string args, expect;
  };
  const std::string sys = " --system h100-sxm-dgx";
  const std::vector<Case> cases = {
      {ar + sys + " --chips 5", "missing rank file " + ar + ".4.et"},
      {ar + sys + " --chips 3", "more ranks than --chips"},
      {ar + "_nope" + sys, "no trace file " + ar + "_nope.0.et"},
      {ar + " --system h100-nope", "unknown system"},
      {with_rank0("trunc", fx::all_reduce_1mb(0).substr(0, 40)) + sys, "t.0.et: message 1 at byte 8: truncated file"},
      {with_rank0("type", m + fx::frame(odd)) + sys, "unknown NodeType value (got '11'"},
      {with_rank0("dep", m + fx::frame(missing), 1) + sys, "depends on a node id that is not in the file (got '77'"},
      {with_rank0("cycle", m + fx::frame(c1) + fx::frame(c2), 1) + sys, "dependency cycle"},
      {with_rank0("one_rank", m + fx::frame(lonely) + fx::frame(lonely).replace(1, 2, "\x08\x02"), 2) + sys,
       "rank 0: 2, rank 1: 1"},
      {with_rank0("pg", m + fx::frame(grouped), 2) + sys, "pg_name: process group not defined (got '3'"},
      {with_rank0("pg2", m + fx::frame(grouped), 2) + sys + " --comm-groups " + groups, "groups.json: 3: a group must be"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli("replay " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.args << "\n" << r.err;
  }
}

}  // namespace
