// End-to-end tests of `--catalog-dir`: a user's own chip and system (examples/catalog), a user's
// override of a shipped system (examples/catalog-price), how the output marks them, and the
// diagnostics of a bad directory or file.

#include <nlohmann/json.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_runner.h"
#include "xpusim/config/document.h"

using xpusim::config::Json;
using xpusim::test::run_cli;

namespace {

std::string examples(const std::string& name) { return xpusim::test::data_dir() + "/../examples/" + name; }

Json json_of(const xpusim::test::CliRun& r) { return Json::parse(r.out); }

/// A scratch directory holding the example user system with `from` replaced by `to` in its text.
std::string scratch_catalog(const std::string& name, const std::string& from, const std::string& to) {
  std::ifstream in(examples("catalog") + "/systems/hypo-accel-x16.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text.replace(text.find(from), from.size(), to);
  const auto dir = std::filesystem::temp_directory_path() / ("xpusim_catalog_dir_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "systems");
  std::ofstream(dir / "systems" / "hypo-accel-x16.json") << text;
  return dir.string();
}

TEST(CatalogDirCli, UserSystemTrainsAndIsMarked) {
  const auto r = run_cli("train --system hypo-accel-x16 --model llama3.1-8b --chips 16 --json --catalog-dir " +
                         examples("catalog"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = json_of(r);
  ASSERT_TRUE(j.contains("catalog_user"));
  ASSERT_EQ(j["catalog_user"].size(), 2u);
  EXPECT_EQ(j["catalog_user"][0]["kind"], "chip");
  EXPECT_EQ(j["catalog_user"][0]["id"], "hypo-accel");
  EXPECT_EQ(j["catalog_user"][1]["id"], "hypo-accel-x16");
  EXPECT_FALSE(j["catalog_user"][1]["replaces_shipped"].get<bool>());
  EXPECT_TRUE(j["trust"]["extrapolating"].get<bool>());
  EXPECT_NE(r.err.find("note: catalog system 'hypo-accel-x16'"), std::string::npos) << r.err;
  const auto shipped = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --json");
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  EXPECT_NE(j["catalog_digest"], json_of(shipped)["catalog_digest"]);
  EXPECT_FALSE(json_of(shipped).contains("catalog_user"));
}

TEST(CatalogDirCli, UserChipIsFasterThanTheOneItDoubles) {
  // hypo-accel doubles the H100's math and nearly doubles its HBM bandwidth: the same model on the
  // same count must step faster (a sanity check that the user's numbers reach the simulator).
  const auto base = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1 --json");
  const auto mine = run_cli("train --system hypo-accel-x16 --model llama3.1-8b --chips 8 --tp 1 --pp 1 --json "
                            "--catalog-dir " + examples("catalog"));
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  const double base_per_chip = json_of(base)["tokens_per_s_per_chip"].get<double>();
  const double mine_per_chip = json_of(mine)["tokens_per_s_per_chip"].get<double>();
  EXPECT_GT(mine_per_chip, 1.5 * base_per_chip);
}

TEST(CatalogDirCli, OverrideReplacesTheShippedPrice) {
  const std::string args = "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1 --json";
  const auto shipped = run_cli(args);
  const auto mine = run_cli(args + " --catalog-dir " + examples("catalog-price"));
  ASSERT_EQ(shipped.exit_code, 0) << shipped.err;
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  const Json a = json_of(shipped), b = json_of(mine);
  EXPECT_NEAR(b["cost_per_step_usd"].get<double>() / a["cost_per_step_usd"].get<double>(), 2.50 / 6.88, 1e-3);
  EXPECT_EQ(a["step_time_s"], b["step_time_s"]);
  EXPECT_TRUE(b["catalog_user"][0]["replaces_shipped"].get<bool>());
  EXPECT_NE(mine.err.find("replaces the shipped entry"), std::string::npos) << mine.err;
}

TEST(CatalogDirCli, CatalogListAndShowSeeUserEntries) {
  const auto list = run_cli("catalog list --catalog-dir " + examples("catalog"));
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("hypo-accel-x16"), std::string::npos);
  const auto show = run_cli("catalog show hypo-accel --json --catalog-dir " + examples("catalog"));
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_EQ(json_of(show)["catalog_user"].size(), 2u);
}

TEST(CatalogDirCli, MissingDirectoryIsNamed) {
  const auto r = run_cli("train --system h100-sxm-dgx --model llama3.1-8b --catalog-dir /nonexistent/xpusim-cat");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--catalog-dir"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/xpusim-cat"), std::string::npos) << r.err;
}

TEST(CatalogDirCli, DirectoryWithoutChipsOrSystemsIsRejected) {
  const auto dir = std::filesystem::temp_directory_path() / "xpusim_catalog_dir_empty";
  std::filesystem::create_directories(dir);
  const auto r = run_cli("catalog list --catalog-dir " + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no chips/ or systems/"), std::string::npos) << r.err;
}

TEST(CatalogDirCli, BadUserFileGetsTheLoaderDiagnostics) {
  // A chip typo: the file, the field, the value and the closest shipped chip.
  const auto chip = scratch_catalog("chip", R"("chip": "hypo-accel")", R"("chip": "h100-sxmm")");
  auto r = run_cli("catalog list --catalog-dir " + chip);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hypo-accel-x16.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown chip 'h100-sxmm'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'h100-sxm'"), std::string::npos) << r.err;
  // A value without its unit.
  const auto unit = scratch_catalog("unit", R"("value": "$5.00/h")", R"("value": 5.0)");
  r = run_cli("train --system hypo-accel-x16 --model llama3.1-8b --catalog-dir " + unit);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("price_per_chip_hour"), std::string::npos) << r.err;
}

}  // namespace
