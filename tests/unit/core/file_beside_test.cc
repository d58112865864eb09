// core::file_beside: how an input file finds the files it names in its own layout.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "xpusim/core/file_read.h"

namespace fs = std::filesystem;

TEST(FileBeside, FindsARegularFileFromTheAnchorsFolderAndNothingElse) {
  const fs::path root = fs::path(::testing::TempDir()) / "file_beside";
  fs::remove_all(root);
  fs::create_directories(root / "set" / "validation");
  fs::create_directories(root / "set" / "models" / "a-folder.json");
  std::ofstream(root / "set" / "models" / "m.json") << "{}";
  const std::string anchor = (root / "set" / "validation" / "rows.csv").string();
  // ../models/m.json from the anchor's folder, normalised (no "..").
  EXPECT_EQ(xpusim::core::file_beside(anchor, "../models/m.json"), (root / "set" / "models" / "m.json").string());
  EXPECT_EQ(xpusim::core::file_beside(anchor, "../models/none.json"), "");
  EXPECT_EQ(xpusim::core::file_beside(anchor, "../models/a-folder.json"), "");  // a directory is not a file
  EXPECT_EQ(xpusim::core::file_beside(anchor, (root / "set" / "models" / "m.json").string()), "");  // absolute
  EXPECT_EQ(xpusim::core::file_beside(anchor, ""), "");
}
