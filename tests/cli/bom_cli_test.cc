// A UTF-8 byte-order mark (as spreadsheet programs write it) is accepted by every text reader:
// the validation CSV, YAML scenarios and JSON model configs (docs/errors.md).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_runner.h"

namespace {

using xpusim::test::run_cli;

std::string with_bom(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBF" << text;
  return path;
}

std::string first_lines(const std::string& path, int n) {
  std::ifstream in(path);
  std::string out, line;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

TEST(BomCli, ValidationCsvWithAByteOrderMarkIsRead) {
  const std::string csv = with_bom("bom.csv", first_lines(xpusim::test::data_dir() + "/validation/public.csv", 3));
  const auto r = run_cli("validate " + csv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("unknown column"), std::string::npos) << r.err;
}

TEST(BomCli, ScenarioYamlWithAByteOrderMarkIsRead) {
  const std::string yaml = with_bom("bom.yaml", "system: h100-sxm-dgx\nmodel: llama3.1-8b\nchips: 8\n");
  const auto r = run_cli("train --scenario " + yaml);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
