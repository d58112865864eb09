// FNV-1a 64 (published test vectors of the FNV reference, isthe.com/chongo/tech/comp/fnv) and
// the file-tree digest: order of creation does not matter, any byte of a name or content does.

#include "xpusim/core/digest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace xpusim::core {
namespace {

struct Vector {
  const char* text;
  std::uint64_t hash;
};

TEST(Fnv1a64, ReferenceVectors) {
  const Vector vectors[] = {{"", 0xcbf29ce484222325ULL}, {"a", 0xaf63dc4c8601ec8cULL},
                            {"foobar", 0x85944171f73967e8ULL}};
  for (const auto& v : vectors) EXPECT_EQ(fnv1a64(v.text), v.hash) << v.text;
}

TEST(Fnv1a64, ContinuingEqualsConcatenating) {
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
}

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
}

TEST(FilesDigest, IndependentOfCreationOrderSensitiveToContentAndNames) {
  const fs::path base = fs::temp_directory_path() / ("xs_digest_" + std::to_string(::getpid()));
  fs::remove_all(base);
  write(base / "a/x.yaml", "1");
  write(base / "a/sub/y.yaml", "2");
  write(base / "b/sub/y.yaml", "2");
  write(base / "b/x.yaml", "1");
  const std::string da = files_digest({(base / "a").string()});
  EXPECT_EQ(da, files_digest({(base / "b").string()}));
  EXPECT_EQ(da.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(da.size(), 8u + 16u);
  write(base / "b/x.yaml", "3");
  EXPECT_NE(da, files_digest({(base / "b").string()}));
  write(base / "b/x.yaml", "1");
  fs::rename(base / "b/x.yaml", base / "b/z.yaml");
  EXPECT_NE(da, files_digest({(base / "b").string()}));
  fs::remove_all(base);
}

}  // namespace
}  // namespace xpusim::core
