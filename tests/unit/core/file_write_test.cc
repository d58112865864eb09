// core::write_output_file and the diagnostics' shaping of values: an output is written whole or
// not at all, never lost without an error, and a message cannot flood or recolour a terminal.
#include <gtest/gtest.h>

#include <filesystem>

#include "../../scratch_path.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/file_read.h"
#include "xpusim/core/file_write.h"

namespace fs = std::filesystem;
using xpusim::core::InputError;
using xpusim::core::write_output_file;

TEST(WriteOutputFile, ReplacesTheTargetAndLeavesNoTemporaryFile) {
  const std::string dir = xpusim::test::scratch_path("write_output", "");
  fs::create_directories(dir);
  const std::string target = dir + "/out.json";
  write_output_file("--out", target, "first");
  write_output_file("--out", target, "second, longer");
  EXPECT_EQ(xpusim::core::read_regular_file(target, "output", 1 << 20), "second, longer");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);  // the temporary file was renamed, not left beside it
}

TEST(WriteOutputFile, AFailedWriteIsAnErrorNamingTheFlagAndThePath) {
  const std::string dir = xpusim::test::scratch_path("write_output_fail", "");
  fs::create_directories(dir);
  try {
    write_output_file("--trace", "/dev/full", std::string(1 << 16, 'x'));
    FAIL() << "a full device accepted the output";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--trace"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
  EXPECT_THROW(write_output_file("--out", dir + "/missing/folder/out.csv", "x"), InputError);
  EXPECT_THROW(write_output_file("--out", dir, "x"), InputError);  // a directory
  EXPECT_THROW(write_output_file("--out", "", "x"), InputError);
  write_output_file("--out", "/dev/null", "a device is written in place");
}

TEST(Diagnostics, ValuesAreCutAndControlCharactersEscaped) {
  xpusim::core::Diagnostic d;
  d.path = "system";
  d.message = "unknown system '" + std::string(120000, 'a') + "'";
  d.value = std::string(120000, 'a');
  const std::string shown = d.to_string();
  EXPECT_LT(shown.size(), 400u) << shown.substr(0, 400);
  EXPECT_NE(shown.find("(120000 bytes)"), std::string::npos);
  d.message = "unknown system";
  d.value = "h100\x1b[31m\n";
  EXPECT_EQ(d.to_string(), "system: unknown system (got 'h100\\x1b[31m\\n')");
  EXPECT_EQ(xpusim::core::printable("caf\xc3\xa9 \xff\xc3"), "caf\xc3\xa9 \\xff\\xc3");  // UTF-8 kept, stray bytes escaped
  // A cut never splits a UTF-8 character: 59 ASCII bytes then a 2-byte character across byte 60.
  const std::string cut = xpusim::core::shown_value(std::string(59, 'x') + "\xc3\xa9" + "tail");
  EXPECT_EQ(cut, std::string(59, 'x') + "\xe2\x80\xa6(65 bytes)");
}
