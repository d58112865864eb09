// report/sweep_report.h: the CSV (header, number formatting, quoting, rows of points that did
// not run) and the wire form MPI ranks send (exact round trip).
#include "xpusim/report/sweep_report.h"

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

namespace {

using namespace xpusim;
using report::Json;

report::SweepPoint train_point(std::size_t index, long long chips, Json result) {
  report::SweepPoint p;
  p.index = index;
  p.values = {chips, "bf16"};
  p.result = std::move(result);
  report::judge_point(p);
  return p;
}

TEST(SweepCsv, HeaderIsGridKeysStatusReasonThenResults) {
  const std::string csv = report::sweep_csv("train", {"chips", "precision"}, {});
  std::string expected = "chips,precision,status,reason";
  for (const auto& c : report::sweep_result_columns("train")) expected += "," + c;
  EXPECT_EQ(csv, expected + "\n");
  EXPECT_EQ(report::sweep_result_columns("train").front(), "step_time_s");
  EXPECT_EQ(report::sweep_result_columns("serve")[1], "plan.tp");
}

TEST(SweepCsv, RowsFormatNumbersAndQuoteText) {
  const Json ok{{"feasible", true}, {"fits", true}, {"step_time_s", 0.1 + 0.2}, {"tokens_per_s", 1.5e6},
                {"plan", {{"tp", 8}, {"recompute", "none"}}}};
  const Json oom{{"feasible", true}, {"fits", false}, {"reason", "out of memory: 90 GiB > 80 GiB, \"HBM\""}};
  const std::string csv =
      report::sweep_csv("train", {"chips", "precision"}, {train_point(0, 8, ok), train_point(1, 16, oom)});
  const auto row0 = csv.substr(csv.find('\n') + 1);
  // %.10g: 0.30000000000000004 → 0.3; 1.5e6 → 1500000; integers whole; a missing key is empty.
  EXPECT_EQ(row0.rfind("8,bf16,ok,,0.3,1500000,,,,,8,,", 0), 0u) << row0;
  // RFC 4180: a reason with a comma or a quote is quoted, quotes doubled; no results on the row.
  EXPECT_NE(csv.find("16,bf16,infeasible,\"out of memory: 90 GiB > 80 GiB, \"\"HBM\"\"\",,"), std::string::npos) << csv;
}

TEST(SweepCsv, StatusFromTheDocument) {
  report::SweepPoint error;
  report::judge_point(error);
  EXPECT_EQ(error.status, "error");
  EXPECT_EQ(train_point(0, 8, Json{{"fits", true}}).status, "ok");
  const auto serve_down = train_point(0, 8, Json{{"feasible", false}, {"reason", "weights do not fit"}});
  EXPECT_EQ(serve_down.status, "infeasible");
  EXPECT_EQ(serve_down.reason, "weights do not fit");
}

TEST(SweepWire, RoundTripIsExact) {
  report::SweepPoint p = train_point(7, 64, Json{{"fits", true}, {"step_time_s", 0.1 + 0.2}, {"x", 1.0 / 3.0}});
  p.reason = "a, \"quoted\"\nline";
  const std::string wire = report::point_to_wire(p);
  EXPECT_EQ(wire.find('\n'), std::string::npos);  // one line per point
  const auto back = report::point_from_wire(wire);
  EXPECT_EQ(back.index, 7u);
  EXPECT_EQ(back.values, p.values);
  EXPECT_EQ(back.reason, p.reason);
  EXPECT_EQ(back.result["step_time_s"].get<double>(), 0.1 + 0.2);  // bit for bit
  EXPECT_EQ(back.result["x"].get<double>(), 1.0 / 3.0);
  EXPECT_EQ(report::point_to_wire(back), wire);
}

}  // namespace
