// The full re-fit on the project's copy of the public file, and leave-one-source-out
// cross-validation (minutes: ctest label `slow`, left out of scripts/test.sh).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "xpusim/hw/catalog.h"
#include "xpusim/validation/fit.h"

namespace {

using namespace xpusim;

TEST(CalibratePublicFile, FitLowersTheLossAndEveryFoldPredictsItsRows) {
  const hw::Catalog catalog = hw::Catalog::load(std::string(XS_TESTDATA_DIR) + "/catalog");
  const calib::Params shipped = calib::load_shipped(XS_TESTDATA_DIR);
  const auto rows = validation::read_csv(validation::default_public_file(XS_TESTDATA_DIR));
  const validation::Context ctx{&catalog, std::string(XS_TESTDATA_DIR) + "/models", &shipped};
  const auto sensitivity = validation::find_sensitive_rows(rows, ctx, validation::fitted_keys(shipped, ""));
  validation::FitOptions opt;
  opt.keys = validation::keys_with_rows(sensitivity);
  ASSERT_FALSE(opt.keys.empty());
  const auto fit = validation::fit(rows, {}, ctx, sensitivity, opt);
  EXPECT_EQ(fit.rows_used, static_cast<int>(rows.size()));
  EXPECT_LE(fit.loss_end, fit.loss_start);
  for (const auto& v : fit.values) {
    const auto& p = shipped.get(v.key);
    if (p.range_low) {
      EXPECT_GE(v.fitted, p.range_low->quantity.value) << v.key;
    }
    if (p.range_high) {
      EXPECT_LE(v.fitted, p.range_high->quantity.value) << v.key;
    }
  }
  std::vector<std::string> folds;
  const auto cv = validation::cross_validate(rows, ctx, sensitivity, opt, &folds);
  std::set<std::string> sources;
  for (const auto& r : rows) sources.insert(validation::source_of(r.source_url));
  EXPECT_EQ(folds.size(), sources.size());
  ASSERT_EQ(cv.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(cv[i].row.id, rows[i].id);
    EXPECT_EQ(cv[i].prediction.status, validation::Status::Ok) << rows[i].id;
  }
}

}  // namespace
