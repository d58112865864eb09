// The calibration loader: units, unknown keys, partial overrides, bad files, the shipped data.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "xpusim/calib/params.h"

using namespace xpusim;

namespace {

const std::string kData = XS_TESTDATA_DIR;

/// A scratch directory with the given files (name → text); removed by the fixture.
class CalibFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("xs_calib_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string dir() const { return dir_.string(); }
  std::filesystem::path dir_;
};

const char* kSmall = R"(
family:
  efficiency:
    value: "0.75"
    meaning: "a fraction"
    basis: "fitted on rows 1-3"
    kind: fitted
    range: ["0", "1"]
  overhead:
    value: "4 us"
    meaning: "a time"
    basis: "assumed"
    kind: assumed
  overlap:
    value: true
    meaning: "a flag"
    basis: "assumed"
    kind: assumed
)";

/// The first diagnostic of the InputError `f` throws.
template <typename F>
core::Diagnostic first_diagnostic(F&& f) {
  try {
    f();
  } catch (const core::InputError& e) {
    return e.diagnostics().front();
  }
  ADD_FAILURE() << "no InputError";
  return {};
}

TEST_F(CalibFiles, ReadsUnitsFractionsAndFlags) {
  write("model.yaml", kSmall);
  const calib::Params p = calib::load_directory(dir());
  EXPECT_DOUBLE_EQ(p.number("model.family.efficiency"), 0.75);
  EXPECT_DOUBLE_EQ(core::to_seconds(p.seconds("model.family.overhead")), 4 * 1e-6);
  EXPECT_TRUE(p.flag("model.family.overlap"));
  EXPECT_EQ(p.get("model.family.efficiency").kind, calib::Kind::Fitted);
  EXPECT_EQ(p.get("model.family.efficiency").basis, "fitted on rows 1-3");
  EXPECT_EQ(p.sections("model"), std::vector<std::string>{"family"});
}

// An answer names the parameter it assumed with its kind and, where it has one, its range.
TEST_F(CalibFiles, AParameterIsStatedWithItsKindAndRange) {
  write("model.yaml", kSmall);
  const calib::Params p = calib::load_directory(dir());
  EXPECT_EQ(calib::as_stated(p.get("model.family.efficiency")), "model.family.efficiency, fitted, range 0..1");
  EXPECT_EQ(calib::as_stated(p.get("model.family.overhead")), "model.family.overhead, assumed");
}

TEST_F(CalibFiles, WrongUnitNamesKeyValueAndExpectedUnit) {
  write("model.yaml", kSmall);
  const calib::Params p = calib::load_directory(dir());
  const auto d = first_diagnostic([&] { p.seconds("model.family.efficiency"); });
  EXPECT_EQ(d.path, "model.family.efficiency");
  EXPECT_EQ(d.value, "0.75");
  EXPECT_NE(d.expected.find("s"), std::string::npos) << d.expected;
  const auto n = first_diagnostic([&] { p.number("model.family.overhead"); });
  EXPECT_EQ(n.value, "4 us");
}

TEST_F(CalibFiles, MissingParameterNamesKeyAndFile) {
  write("model.yaml", kSmall);
  const calib::Params p = calib::load_directory(dir());
  const auto d = first_diagnostic([&] { p.number("model.family.absent"); });
  EXPECT_EQ(d.path, "model.family.absent");
  EXPECT_NE(d.expected.find("data/calibration/model.yaml"), std::string::npos);
}

TEST_F(CalibFiles, UnknownFieldAndBadKindAreReported) {
  write("model.yaml", R"(
x:
  value: "0.5"
  meaning: "m"
  basis: "b"
  kind: guessed
  mening: "typo"
)");
  try {
    calib::load_directory(dir());
    FAIL() << "no InputError";
  } catch (const core::InputError& e) {
    bool unknown = false, kind = false;
    for (const auto& d : e.diagnostics()) {
      unknown |= d.path == "model.x.mening" && d.hint.find("meaning") != std::string::npos;
      kind |= d.path == "model.x.kind" && d.value == "guessed";
    }
    EXPECT_TRUE(unknown);
    EXPECT_TRUE(kind);
  }
}

TEST_F(CalibFiles, MissingBasisIsAnError) {
  write("model.yaml", "x:\n  value: \"0.5\"\n  meaning: \"m\"\n  kind: fitted\n");
  const auto d = first_diagnostic([&] { calib::load_directory(dir()); });
  EXPECT_NE(d.path.find("basis"), std::string::npos) << d.to_string();
}

TEST_F(CalibFiles, PartialOverrideMergesAndKeepsTheRest) {
  write("model.yaml", kSmall);
  calib::Params p = calib::load_directory(dir());
  const std::string ov = write("override.yaml", "model:\n  family:\n    efficiency: \"0.5\"\n");
  calib::apply_override(p, ov);
  EXPECT_DOUBLE_EQ(p.number("model.family.efficiency"), 0.5);
  EXPECT_EQ(p.get("model.family.efficiency").source, ov);
  EXPECT_EQ(p.get("model.family.efficiency").basis, "fitted on rows 1-3");  // kept
  EXPECT_DOUBLE_EQ(core::to_seconds(p.seconds("model.family.overhead")), 4 * 1e-6);
}

// A section's `_defaults` fill its siblings: a missing parameter is the default's, a partial entry
// takes meaning, kind and range from it; `sections` does not list `_defaults`; overriding a
// default reaches the sections that inherited it, not those with a value of their own.
const char* kStacks = R"(
stacks:
  _defaults:
    block:
      value: "16"
      meaning: "a page"
      basis: "documented default"
      kind: assumed
      range: ["1", "4096"]
    overhead:
      value: "1 us"
      meaning: "a time"
      basis: "assumed"
      kind: assumed
  first:
    block:
      value: "128"
      basis: "its own documentation"
  second:
    overhead:
      value: "3 us"
      basis: "fitted on its rows"
      kind: fitted
)";

TEST_F(CalibFiles, DefaultsFillSiblingSectionsAndOverridesReachTheHeirs) {
  write("model.yaml", kStacks);
  calib::Params p = calib::load_directory(dir());
  EXPECT_EQ(p.sections("model.stacks"), (std::vector<std::string>{"first", "second"}));
  EXPECT_DOUBLE_EQ(p.number("model.stacks.first.block"), 128);
  EXPECT_EQ(p.get("model.stacks.first.block").meaning, "a page");
  EXPECT_EQ(p.get("model.stacks.first.block").basis, "its own documentation");
  EXPECT_TRUE(p.get("model.stacks.first.block").range_high.has_value());
  EXPECT_DOUBLE_EQ(p.number("model.stacks.second.block"), 16);
  EXPECT_EQ(p.get("model.stacks.second.block").inherited_from, "model.stacks._defaults.block");
  EXPECT_NE(p.get("model.stacks.second.block").basis.find("documented default"), std::string::npos);
  EXPECT_EQ(p.get("model.stacks.second.overhead").kind, calib::Kind::Fitted);
  EXPECT_EQ(p.get("model.stacks.first.overhead").kind, calib::Kind::Assumed);
  calib::apply_override(p, write("o.yaml", "model:\n  stacks:\n    _defaults:\n      block: \"64\"\n"));
  EXPECT_DOUBLE_EQ(p.number("model.stacks.second.block"), 64);   // inherited: follows the default
  EXPECT_DOUBLE_EQ(p.number("model.stacks.first.block"), 128);   // its own value stays
  calib::apply_override(p, write("p.yaml", "model:\n  stacks:\n    second:\n      block: \"8\"\n"));
  calib::apply_override(p, write("q.yaml", "model:\n  stacks:\n    _defaults:\n      block: \"32\"\n"));
  EXPECT_DOUBLE_EQ(p.number("model.stacks.second.block"), 8);    // overridden itself: no longer an heir
}

TEST_F(CalibFiles, AValueOtherThanTheDefaultNeedsItsOwnBasis) {
  write("model.yaml", "s:\n  _defaults:\n    x: {value: \"1\", meaning: \"m\", basis: \"b\", kind: assumed}\n"
                      "  a:\n    x: {value: \"2\"}\n");
  const auto d = first_diagnostic([&] { calib::load_directory(dir()); });
  EXPECT_EQ(d.path, "model.s.a.x") << d.to_string();
}

TEST_F(CalibFiles, OverrideAsMappingReplacesBasis) {
  write("model.yaml", kSmall);
  calib::Params p = calib::load_directory(dir());
  calib::apply_override(p, write("o.yaml", "model:\n  family:\n    overhead: {value: \"2 us\", basis: \"my cluster\"}\n"));
  EXPECT_DOUBLE_EQ(core::to_seconds(p.seconds("model.family.overhead")), 2 * 1e-6);
  EXPECT_EQ(p.get("model.family.overhead").basis, "my cluster");
}

TEST_F(CalibFiles, OverrideUnknownKeySuggestsClosest) {
  write("model.yaml", kSmall);
  calib::Params p = calib::load_directory(dir());
  const auto d = first_diagnostic(
      [&] { calib::apply_override(p, write("o.yaml", "model:\n  family:\n    efficency: \"0.5\"\n")); });
  EXPECT_EQ(d.path, "model.family.efficency");
  EXPECT_NE(d.hint.find("efficiency"), std::string::npos);
  const auto top = first_diagnostic([&] { calib::apply_override(p, write("t.yaml", "modle:\n  x: 1\n")); });
  EXPECT_NE(top.hint.find("model"), std::string::npos);
}

TEST_F(CalibFiles, OverrideWrongUnitNamesKeyValueAndExpected) {
  write("model.yaml", kSmall);
  calib::Params p = calib::load_directory(dir());
  const auto d =
      first_diagnostic([&] { calib::apply_override(p, write("o.yaml", "model:\n  family:\n    overhead: \"4 GB\"\n")); });
  EXPECT_EQ(d.path, "model.family.overhead");
  EXPECT_EQ(d.value, "4 GB");
  EXPECT_NE(d.expected.find("a time"), std::string::npos) << d.expected;
}

TEST_F(CalibFiles, OverrideOutsideRangeIsAnError) {
  write("model.yaml", kSmall);
  calib::Params p = calib::load_directory(dir());
  const auto d =
      first_diagnostic([&] { calib::apply_override(p, write("o.yaml", "model:\n  family:\n    efficiency: \"1.5\"\n")); });
  EXPECT_EQ(d.path, "model.family.efficiency");
  EXPECT_EQ(d.expected, "[0, 1]");
}

TEST_F(CalibFiles, MalformedFileNamesTheFile) {
  write("model.yaml", kSmall);
  calib::Params p = calib::load_directory(dir());
  const std::string bad = write("bad.yaml", "model: [unclosed\n");
  const auto d = first_diagnostic([&] { calib::apply_override(p, bad); });
  EXPECT_NE((d.file + d.message).find("bad.yaml"), std::string::npos) << d.to_string();
}

// The shipped data: every parameter has a meaning, a basis, and a value inside its range.
TEST(ShippedCalibration, EveryParameterIsDocumented) {
  const calib::Params p = calib::load_shipped(kData);
  ASSERT_GT(p.all().size(), 100u);
  for (const auto& [key, param] : p.all()) {
    EXPECT_FALSE(param.meaning.empty()) << key;
    EXPECT_FALSE(param.basis.empty()) << key;
  }
  for (const std::string file : {"compute", "training", "serving", "network"}) {
    const auto it = p.all().lower_bound(file + ".");
    EXPECT_TRUE(it != p.all().end() && it->first.rfind(file + ".", 0) == 0) << file;
  }
}

// The read log lists the keys asked for on its own thread while it lives; an inner log hides
// the outer one until it ends; no log, nothing recorded.
TEST(ReadLog, RecordsTheKeysThisThreadReads) {
  const calib::Params p = calib::load_shipped(kData);
  p.get("compute.nvidia-hopper.gemm_efficiency");  // no log: nothing to record into
  calib::ReadLog outer;
  p.number("compute.nvidia-hopper.gemm_efficiency");
  {
    calib::ReadLog inner;
    p.seconds("serving.frameworks.trtllm.step_overhead");
    EXPECT_EQ(inner.keys(), std::set<std::string>{"serving.frameworks.trtllm.step_overhead"});
  }
  p.get("compute.gpu_tiles.prologue_k");
  EXPECT_EQ(outer.keys(), (std::set<std::string>{"compute.gpu_tiles.prologue_k", "compute.nvidia-hopper.gemm_efficiency"}));
  std::thread([&] { p.get("compute.nvidia-ampere.gemm_efficiency"); }).join();
  EXPECT_EQ(outer.keys().count("compute.nvidia-ampere.gemm_efficiency"), 0u);
}

}  // namespace
