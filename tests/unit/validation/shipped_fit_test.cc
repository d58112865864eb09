// The shipped calibration is the output of `xpusim calibrate` on the project's copy of the public
// file: re-running the command recorded in data/calibration/fitted/public.yaml from the shipped
// state gives every fitted value within 1 % (docs/calibration.md, "The shipped fit").
#include <gtest/gtest.h>

#include <fstream>
#include <regex>

#include "xpusim/hw/catalog.h"
#include "xpusim/validation/fit.h"

namespace {

using namespace xpusim;

/// The --params globs of the command in the file's first line.
std::string recorded_globs(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  std::smatch m;
  if (std::regex_search(first, m, std::regex("--params '([^']*)'"))) return m[1].str();
  return "";
}

TEST(ShippedFit, RefittingFromTheShippedStateReproducesItWithinOnePercent) {
  const std::string dir = XS_TESTDATA_DIR;
  const std::string globs = recorded_globs(calib::shipped_fit_file(dir));
  ASSERT_FALSE(globs.empty()) << "the shipped fit does not record its --params";
  const hw::Catalog catalog = hw::Catalog::load(dir + "/catalog");
  const calib::Params shipped = calib::load_shipped(dir);
  const auto rows = validation::read_csv(validation::default_public_file(dir));
  const validation::Context ctx{&catalog, dir + "/models", &shipped};
  const auto keys = validation::fitted_keys(shipped, globs);
  const auto sensitivity = validation::find_sensitive_rows(rows, ctx, keys);
  validation::FitOptions opt;
  opt.keys = keys;
  const auto refit = validation::fit(rows, {}, ctx, sensitivity, opt);
  int from_the_fit = 0;
  for (const auto& v : refit.values) {
    const auto& p = shipped.get(v.key);
    if (p.source != calib::shipped_fit_file(dir)) continue;  // no row moves it: not in the file
    ++from_the_fit;
    EXPECT_NEAR(v.fitted / p.value.quantity.value, 1.0, 0.01) << v.key;
  }
  EXPECT_GE(from_the_fit, 10);
}

// data/calibration/fitted/public.params is the `--params @FILE` list of the shipped command: the
// same globs, in the same order, as the fit records.
TEST(ShippedFit, TheParamsFileBesideItListsTheGlobsItRecords) {
  const std::string dir = XS_TESTDATA_DIR;
  std::ifstream in(dir + "/calibration/fitted/public.params");
  ASSERT_TRUE(in) << "data/calibration/fitted/public.params is missing";
  std::string globs;
  for (std::string line; std::getline(in, line);) {
    line = std::regex_replace(line.substr(0, line.find('#')), std::regex("\\s+"), "");
    if (!line.empty()) globs += (globs.empty() ? "" : ",") + line;
  }
  EXPECT_EQ(globs, recorded_globs(calib::shipped_fit_file(dir)));
}

}  // namespace
