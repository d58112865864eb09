#include <gtest/gtest.h>

#include "cli_runner.h"

using xpusim::test::run_cli;

TEST(Cli, NoArgumentsPrintsUsageAndExits2) {
  auto r = run_cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("usage: xpusim"), std::string::npos);
}

TEST(Cli, UnknownCommandSuggestsClosest) {
  auto r = run_cli("trian");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command 'trian'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'train'?"), std::string::npos) << r.err;
}
