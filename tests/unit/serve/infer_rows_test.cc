// Every infer row of ../shared/validation/public.csv through the serving predictor: none
// unsupported, and the accuracy target (median |error| <= 10%, p90 <= 25%).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "xpusim/hw/catalog.h"
#include "xpusim/serve/framework_defaults.h"

namespace {

using xpusim::validation::Row;

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool q = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (q) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') { cur += '"'; ++i; }
      else if (c == '"') q = false;
      else cur += c;
    } else if (c == '"') q = true;
    else if (c == ',') { out.push_back(cur); cur.clear(); }
    else cur += c;
  }
  out.push_back(cur);
  return out;
}

std::optional<long long> opt(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return std::stoll(s);
}

std::vector<Row> infer_rows() {
  std::ifstream in(std::string(XS_SHARED_DIR) + "/validation/public.csv");
  std::string line;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  auto hdr = split_csv(line);
  std::vector<Row> rows;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    auto f = split_csv(line);
    std::map<std::string, std::string> m;
    for (size_t i = 0; i < hdr.size() && i < f.size(); ++i) m[hdr[i]] = f[i];
    if (m["kind"] != "infer") continue;
    Row r;
    r.id = m["id"]; r.kind = m["kind"]; r.system = m["system"]; r.model = m["model"];
    r.precision = m["precision"]; r.mode = m["mode"]; r.metric = m["metric"]; r.notes = m["notes"];
    r.trust = m["trust"];
    r.chips = std::stoll(m["chips"]);
    r.seq_len = opt(m["seq_len"]); r.tp = opt(m["tp"]); r.pp = opt(m["pp"]); r.dp = opt(m["dp"]);
    r.ep = opt(m["ep"]); r.in_len = opt(m["in_len"]); r.out_len = opt(m["out_len"]);
    r.batch_or_concurrency = opt(m["batch_or_concurrency"]);
    r.value = std::stod(m["value"]);
    rows.push_back(r);
  }
  return rows;
}

TEST(InferRows, EveryRowSupportedAndWithinTarget) {
  auto cat = xpusim::hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  xpusim::serve::ServeEnv env{&cat, std::string(XS_TESTDATA_DIR) + "/models"};
  auto rows = infer_rows();
  ASSERT_EQ(rows.size(), 50u);
  std::vector<double> errs;
  for (const auto& r : rows) {
    auto p = xpusim::serve::predict_infer_row(r, env);
    EXPECT_EQ(p.status, xpusim::validation::Status::Ok) << r.id << ": " << p.reason;
    const double e = (p.predicted - r.value) / r.value * 100.0;
    std::printf("%-52s %12.2f %12.2f %+7.1f%%\n", r.id.c_str(), r.value, p.predicted, e);
    if (p.status == xpusim::validation::Status::Ok) errs.push_back(std::fabs(e));
  }
  std::sort(errs.begin(), errs.end());
  const double med = errs[errs.size() / 2];
  const double p90 = errs[static_cast<size_t>(std::ceil(0.9 * static_cast<double>(errs.size()))) - 1];
  std::printf("infer rows: n=%zu median |err| %.1f%%  p90 %.1f%%\n", errs.size(), med, p90);
  EXPECT_LE(med, 10.0);
  EXPECT_LE(p90, 25.0);
}

}  // namespace
