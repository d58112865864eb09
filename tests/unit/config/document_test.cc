#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "xpusim/config/document.h"

using namespace xpusim;
using config::FieldReader;
using config::Json;

namespace {
std::string write_temp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST(Document, MissingFileNamesThePath) {
  try {
    config::load_document("/nonexistent/x.json");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open file '/nonexistent/x.json'"), std::string::npos);
  }
}

TEST(Document, MalformedJsonReportsLine) {
  auto p = write_temp("bad.json", "{\n  \"a\": 1,\n  \"b\": ,\n}\n");
  try {
    config::load_document(p);
    FAIL();
  } catch (const core::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("malformed JSON"), std::string::npos) << msg;
    EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  }
}

TEST(Document, MalformedYamlReportsLine) {
  auto p = write_temp("bad.yaml", "a: 1\nb: [1, 2\nc: 3\n");
  try {
    config::load_document(p);
    FAIL();
  } catch (const core::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("malformed YAML at line"), std::string::npos) << msg;
  }
}

TEST(FieldReader, UnknownKeyWithClosestMatch) {
  Json j = Json::parse(R"({"bandwidth": "4.9 TB/s", "latncy": "1 us"})");
  core::Diagnostics d;
  FieldReader r(j, "link", d);
  r.quantity<core::ByteRate>("bandwidth");
  r.str_or("latency", "");
  r.finish();
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].path, "link.latncy");
  EXPECT_NE(d.items()[0].to_string().find("unknown key"), std::string::npos);
  EXPECT_NE(d.items()[0].to_string().find("did you mean 'latency'?"), std::string::npos);
}

TEST(FieldReader, NumberWithoutUnitAndNonPositiveBandwidth) {
  Json j = Json::parse(R"({"a": 4.9, "b": "0 GB/s", "c": "-3 GB/s"})");
  core::Diagnostics d;
  FieldReader r(j, "x", d);
  r.quantity<core::ByteRate>("a");
  r.quantity<core::ByteRate>("b");
  r.quantity<core::ByteRate>("c");
  ASSERT_EQ(d.items().size(), 3u);
  EXPECT_NE(d.items()[0].to_string().find("x.a: number without a unit (got '4.9'"), std::string::npos)
      << d.items()[0].to_string();
  EXPECT_NE(d.items()[1].to_string().find("x.b: must be positive"), std::string::npos);
  EXPECT_NE(d.items()[2].to_string().find("x.c: must be positive"), std::string::npos);
}

TEST(FieldReader, WrongTypeNamesExpected) {
  Json j = Json::parse(R"({"hidden_size": "4096"})");
  core::Diagnostics d;
  FieldReader r(j, "", d, false);
  r.integer("hidden_size");
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].to_string(), "hidden_size: wrong type (got '4096'; expected an integer)");
}
