#include <nlohmann/json.hpp>
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

// ----------------------------------------------------------------------------- limits

namespace {

/// The message of the InputError that loading `path` throws ("" when it loads).
std::string load_error(const std::string& path) {
  try {
    config::load_document(path);
  } catch (const core::InputError& e) {
    return e.what();
  }
  return "";
}

std::string nested(const std::string& open, const std::string& close, int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += open;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

}  // namespace

TEST(DocumentLimits, NestingAtTheLimitLoadsAndOneMoreIsNamed) {
  const int limit = config::DocumentLimits::kMaxNesting;
  // The root object is depth 0 for nlohmann: {"a": [ ×limit ]} reaches depth limit.
  EXPECT_EQ(load_error(write_temp("ok.json", "{\"a\": " + nested("[", "]", limit) + "}")), "");
  for (const std::string& f : {std::string("deep.json"), std::string("deep.yaml")}) {
    const std::string text = f == "deep.json" ? "{\"a\": " + nested("[", "]", 100000) + "}"
                                               : "a: " + nested("[", "]", limit + 1) + "\n";
    const std::string msg = load_error(write_temp(f, text));
    EXPECT_NE(msg.find("nesting depth"), std::string::npos) << f << ": " << msg;
    EXPECT_NE(msg.find("at most " + std::to_string(limit)), std::string::npos) << msg;
  }
}

/// "Billion laughs": `leaf` as l0, then `levels` levels of ten aliases each to the level below.
std::string nested_aliases(const std::string& leaf, int levels) {
  std::string text = "l0: &l0 " + leaf + "\n";
  for (int i = 1; i <= levels; ++i) {
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) text += (k ? ", *l" : "*l") + std::to_string(i - 1);
    text += "]\n";
  }
  return text;
}

TEST(DocumentLimits, YamlAliasCycleAndExpansionStop) {
  EXPECT_NE(load_error(write_temp("cycle.yaml", "a: &x [*x]\n")).find("alias cycle"), std::string::npos);
  // Ten levels of ten aliases each: 10^10 values if expanded.
  const std::string msg = load_error(write_temp("laughs.yaml", nested_aliases("[x, x, x, x, x, x, x, x, x, x]", 10)));
  EXPECT_NE(msg.find("values after alias expansion"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(config::DocumentLimits::kMaxNodes)), std::string::npos) << msg;
}

// A few kilobytes of aliases to a long string: 10^5 values (under the value limit) of 4,000 bytes,
// 400 MB if expanded (fuzz_config found such a document taking 2 GB under the sanitizers).
TEST(DocumentLimits, YamlAliasesToLongTextStopAtTheByteLimit) {
  const std::string leaf = "\"" + std::string(4000, 'x') + "\"";
  const std::string msg = load_error(write_temp("long_laughs.yaml", nested_aliases(leaf, 5)));
  EXPECT_NE(msg.find("bytes of text after alias expansion"), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(config::DocumentLimits::kMaxExpandedBytes)), std::string::npos) << msg;
}

// yaml-cpp 0.7's LoadAll reports an empty document before a ',' outside brackets forever, and grew
// without bound (fuzz_config: 2 GB, then a stalled out-of-memory report under the sanitizers).
TEST(DocumentLimits, YamlTokenThatStartsNoValueIsMalformedNotEndless) {
  for (const std::string text : {",", ", b: 1", "- a\n,", "{a: 1},", ", \"b\": \"8.9 TB/s\", \"c\": null ,\"08}"}) {
    const std::string msg = load_error(write_temp("comma.yaml", text));
    EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << text << ": " << msg;
    EXPECT_NE(msg.find("got ','"), std::string::npos) << text << ": " << msg;
  }
  EXPECT_NE(load_error(write_temp("two.yaml", "a: 1\n---\nb: 2\n---\nc: 3\n")).find("3 documents"), std::string::npos);
}

TEST(DocumentLimits, NonRegularAndOversizedFilesAreRejected) {
  EXPECT_NE(load_error("/dev/zero").find("not a regular file"), std::string::npos);
  const std::string big = ::testing::TempDir() + "big.json";
  {
    std::ofstream out(big, std::ios::binary);
    out.seekp(config::DocumentLimits::kMaxBytes);  // sparse: one byte past the limit
    out.put(' ');
  }
  const std::string msg = load_error(big);
  EXPECT_NE(msg.find("file size in bytes"), std::string::npos) << msg;
  std::remove(big.c_str());
}

TEST(DocumentLimits, BriefShowsAHugeValueWithoutSerialisingIt) {
  Json a = Json::array();
  for (int i = 0; i < 1000000; ++i) a.push_back(i);
  const std::string b = config::brief(a);
  EXPECT_LE(b.size(), 60u);
  EXPECT_EQ(b.substr(0, 7), "[0,1,2,");
  EXPECT_EQ(config::brief(Json(std::string(500, 'x'))).size(), 60u);
}

// Every string of a document is UTF-8, so that a diagnostic or a --json output quoting it can be
// written (fuzz_config found a YAML key with bytes 0xFF that made config::brief throw).
TEST(Document, TextThatIsNotUtf8IsADiagnosticWithItsLine) {
  for (const std::string& f : {std::string("latin1.yaml"), std::string("latin1.json"), std::string("latin1.csv")}) {
    const std::string msg = load_error(write_temp(f, "a: 1\nb\xff\xfe: 2\n"));
    EXPECT_NE(msg.find("not valid UTF-8 (byte 7)"), std::string::npos) << f << ": " << msg;
  }
  EXPECT_NE(load_error(write_temp("surrogate.yaml", "a: 1\nb: \"\\ud800\"\n")).find("malformed YAML at line 2"),
            std::string::npos);  // an escape cannot make a string that is not UTF-8
  for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"})
    EXPECT_NE(load_error(write_temp("bad.yaml", "a: '" + std::string(bad) + "'\n")).find("UTF-8"), std::string::npos) << bad;
  EXPECT_EQ(load_error(write_temp("good.yaml", "a: 'Grüße €5 𝄞'\n")), "");
}

// fuzz_config (CI, stop 37): a NUL inside a plain YAML key or value is UTF-8, but yaml-cpp hands the
// scalar back with bytes that are not, and quoting it in a diagnostic threw inside nlohmann (exit
// 3). Such a string is a diagnostic with its line.
TEST(Document, YamlScalarsThatDecodeToInvalidUtf8AreADiagnostic) {
  for (const std::string& text : {std::string("ab\x00_c: 1\n", 9), std::string("x: 1\nab\x03\x00_c: 1\n", 15)}) {
    const std::string msg = load_error(write_temp("nul.yaml", text));
    EXPECT_NE(msg.find("does not decode to UTF-8"), std::string::npos) << msg;
    EXPECT_NE(msg.find("nul.yaml:" + std::string(text[0] == 'x' ? "2" : "1")), std::string::npos) << msg;
  }
}

// fuzz_config: a number past the range of a double was nlohmann's out_of_range, an internal error.
TEST(Document, JsonNumberOutOfRangeIsADiagnostic) {
  const std::string msg = load_error(write_temp("huge.json", "{\"a\": [1, 2e308]}"));
  EXPECT_NE(msg.find("number overflow parsing '2e308'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("huge.json"), std::string::npos) << msg;
}
