// End-to-end tests of `xpusim catalog list|show`.

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "xpusim/config/document.h"

using xpusim::config::Json;
using xpusim::test::run_cli;

namespace {

std::vector<std::string> system_files() {
  std::vector<std::string> ids;
  for (const auto& e :
       std::filesystem::directory_iterator(xpusim::test::data_dir() + "/catalog/systems")) {
    if (e.path().extension() == ".json") ids.push_back(e.path().stem().string());
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST(CatalogCli, ListShowsEverySystem) {
  auto r = run_cli("catalog list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ids = system_files();
  EXPECT_GE(ids.size(), 16u);
  for (const auto& id : ids) EXPECT_NE(r.out.find(id + " "), std::string::npos) << id;
  EXPECT_NE(r.out.find("trn3-ultraserver-gen2"), std::string::npos);
  EXPECT_NE(r.out.find("1,048,576"), std::string::npos);
}

TEST(CatalogCli, ListJsonParses) {
  auto r = run_cli("catalog list --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  ASSERT_TRUE(j.contains("systems"));
  EXPECT_EQ(j["systems"].size(), system_files().size());
  bool found = false;
  for (const auto& s : j["systems"]) {
    if (s["id"] == "trn4-projected") {
      found = true;
      EXPECT_TRUE(s["projected"].get<bool>());
      EXPECT_EQ(s["chips_per_domain"].get<int>(), 72);
    }
    EXPECT_TRUE(s.contains("scale_out_bandwidth_per_chip_gbit_s"));
  }
  EXPECT_TRUE(found);
}

TEST(CatalogCli, ShowJsonParsesWithUnitsInKeys) {
  auto r = run_cli("catalog show trn3-ultraserver-gen2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["kind"], "system");
  EXPECT_EQ(j["system"]["id"], "trn3-ultraserver-gen2");
  EXPECT_EQ(j["system"]["chips_per_domain"].get<int>(), 144);
  EXPECT_DOUBLE_EQ(j["chip"]["peak_tflops"]["mxfp8"].get<double>(), 2517.0);
  EXPECT_DOUBLE_EQ(j["chip"]["hbm_bandwidth_tb_s"].get<double>(), 4.9);
  EXPECT_DOUBLE_EQ(j["chip"]["hbm_capacity_gib"].get<double>(), 144.0);
  EXPECT_EQ(j["chip"]["neuron_core"]["cores_per_chip"].get<int>(), 8);
  // Every fact carries a source and a confidence.
  ASSERT_FALSE(j["system"]["facts"].empty());
  for (const auto& f : j["system"]["facts"]) {
    EXPECT_FALSE(f["source"].get<std::string>().empty()) << f.dump();
    EXPECT_FALSE(f["confidence"].get<std::string>().empty()) << f.dump();
  }
}

TEST(CatalogCli, ShowTextHasUnitsSourcesAndConfidence) {
  auto r = run_cli("catalog show trn2-ultraserver");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1024 GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("96 GiB"), std::string::npos);
  EXPECT_NE(r.out.find("published"), std::string::npos);
  EXPECT_NE(r.out.find("estimated"), std::string::npos);
  EXPECT_NE(r.out.find("[7] Trn2 architecture"), std::string::npos);
  EXPECT_NE(r.out.find("chip trainium2"), std::string::npos);  // the chip is shown too
}

TEST(CatalogCli, ShowChipById) {
  auto r = run_cli("catalog show gb300 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["kind"], "chip");
  EXPECT_DOUBLE_EQ(j["chip"]["peak_tflops"]["nvfp4"].get<double>(), 15000.0);
}

TEST(CatalogCli, UnknownIdExits2WithSuggestion) {
  auto r = run_cli("catalog show trn3-ultrasever-gen2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown system 'trn3-ultrasever-gen2'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'trn3-ultraserver-gen2'?"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(CatalogCli, MissingSubcommandIsAUsageError) {
  auto r = run_cli("catalog");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
