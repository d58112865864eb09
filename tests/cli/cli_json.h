#pragma once
// Runs the CLI and parses its JSON document, for tests that compare two runs' documents.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

namespace xpusim::test {

/// The run's JSON document; a non-zero exit is a test failure, and the document is then null.
inline nlohmann::json run_cli_json(const std::string& args) {
  const CliRun r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
}

}  // namespace xpusim::test
