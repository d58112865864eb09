// A measurement file may ship the configs of its models in its own layout,
// `<file's folder>/../models/<model>.json` (../shared/validation/README.md): a row then runs
// that config, says so, and a model found nowhere is an error naming it, not a silent default.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../shipped_data.h"
#include "xpusim/validation/row.h"
#include "xpusim/validation/summary.h"
#include "xpusim/workload/hf_config.h"

namespace {

using namespace xpusim;
namespace fs = std::filesystem;

const std::string kProjectModels = std::string(XS_TESTDATA_DIR) + "/models";

// A Megatron-Bridge B200 row of the public file, with its model cell replaced.
std::string b200_row(const std::string& id, const std::string& model) {
  return id + ",train,b200-hgx,8," + model +
         ",fp8,8192,128,2,1,1,8,1,1,,,,,,,,tokens_per_s_per_chip,30624,A,"
         "https://github.com/NVIDIA-NeMo/Megatron-Bridge/blob/x/docs/performance-summary.md,\"test row\"\n";
}

// <tmp>/set/validation/rows.csv beside <tmp>/set/models/: the file ships "llama-half" (the
// project's Llama-3.1-8B with half its layers), and names the project's llama3.1-8b and a model
// that is nowhere.
std::string write_measurement_set() {
  const fs::path set = fs::path(::testing::TempDir()) / "model_files_set";
  fs::remove_all(set);
  fs::create_directories(set / "validation");
  fs::create_directories(set / "models");
  std::ifstream in(kProjectModels + "/llama3.1-8b.json");
  std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = config.find("\"num_hidden_layers\": 32");
  EXPECT_NE(at, std::string::npos);
  config.replace(at, std::string("\"num_hidden_layers\": 32").size(), "\"num_hidden_layers\": 16");
  std::ofstream(set / "models" / "llama-half.json") << config;
  const std::string csv = (set / "validation" / "rows.csv").string();
  std::ofstream out(csv);
  out << "id,kind,system,chips,model,precision,seq_len,global_batch_seqs,micro_batch,tp,pp,dp,cp,ep,vpp,"
         "fsdp_or_zero,recompute,in_len,out_len,batch_or_concurrency,mode,metric,value,trust,source_url,notes\n"
      << b200_row("shipped", "llama-half") << b200_row("project", "llama3.1-8b") << b200_row("nowhere", "llama-9z");
  return csv;
}

TEST(ModelFiles, ARowRunsTheConfigItsMeasurementFileShipsAndSaysSo) {
  const std::string csv = write_measurement_set();
  const auto rows = validation::read_csv(csv);
  ASSERT_EQ(rows.size(), 3u);
  const fs::path expected = (fs::path(csv).parent_path() / ".." / "models" / "llama-half.json").lexically_normal();
  EXPECT_EQ(rows[0].model_file, expected.string());
  EXPECT_EQ(rows[0].model, "llama-half");  // the id stays what the file says
  EXPECT_TRUE(rows[1].model_file.empty());
  EXPECT_TRUE(rows[2].model_file.empty());

  // A streamed read finds the same files.
  validation::RowStream stream(csv);
  validation::Row row;
  ASSERT_TRUE(stream.next(row));
  EXPECT_EQ(row.model_file, rows[0].model_file);

  validation::Context ctx{&test::catalog(), kProjectModels, &test::shipped()};
  ctx.analytical_train = true;
  const auto results = validation::run_all(rows, ctx);
  ASSERT_EQ(results[0].prediction.status, validation::Status::Ok) << results[0].prediction.reason;
  ASSERT_EQ(results[1].prediction.status, validation::Status::Ok) << results[1].prediction.reason;
  EXPECT_EQ(results[0].prediction.assumptions.back(), "model config " + expected.string());
  for (const auto& a : results[1].prediction.assumptions) EXPECT_EQ(a.find("model config"), std::string::npos) << a;
  // Half the layers: the shipped config runs, not the project's 32-layer model. Its weights are
  // 4.5 B of 8.0 B (the embedding and LM head stay), so its tokens per second are over 1.5×.
  EXPECT_EQ(workload::load_model(rows[0].model_file, kProjectModels).layers, 16);
  EXPECT_GT(results[0].prediction.predicted, results[1].prediction.predicted * 1.5);
  // A model found in neither place is an error that names it.
  EXPECT_EQ(results[2].prediction.status, validation::Status::Error);
  EXPECT_NE(results[2].prediction.reason.find("unknown model 'llama-9z'"), std::string::npos);
}

// The public file in the project's own layout: its models are the project's, no row says
// otherwise.
TEST(ModelFiles, ThePublicFilesModelsAreTheProjects) {
  const auto rows = validation::read_csv(validation::default_public_file(XS_TESTDATA_DIR));
  validation::Context ctx{&test::catalog(), kProjectModels, &test::shipped()};
  ctx.analytical_train = true;
  for (const auto& r : rows) {
    ASSERT_FALSE(r.model_file.empty()) << r.id;
    EXPECT_TRUE(fs::equivalent(fs::path(r.model_file).parent_path(), kProjectModels)) << r.id;
  }
  const auto one = validation::predict_row(rows.front(), ctx);
  for (const auto& a : one.prediction.assumptions) EXPECT_EQ(a.find("model config"), std::string::npos) << a;
}

}  // namespace
