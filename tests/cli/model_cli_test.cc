// xpusim model: JSON output, text output, list, and the bad-input exits.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

using xpusim::test::run_cli;

TEST(ModelCli, ShowJsonParsesAndCountsLlama405b) {
  const auto r = run_cli("model show llama3.1-405b --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["params_total"].is_number_integer());
  EXPECT_NEAR(j["params_total"].get<double>() / 405.85e9, 1.0, 0.005);
  EXPECT_EQ(j["params_active"], j["params_total"]);
  EXPECT_EQ(j["family"], "llama");
  EXPECT_EQ(j["layers"], 126);
  EXPECT_EQ(j["seq_len"], 4096);  // min(max_position 131072, 4096)
  // Model FLOPs per token ≥ 6 × active matmul params; recompute only adds.
  const double model = j["train_flop_per_token"]["model"].get<double>();
  EXPECT_GT(model, 6.0 * j["params_matmul_active"].get<double>());
  EXPECT_GT(j["train_flop_per_token"]["hardware_selective"].get<double>(), model);
  EXPECT_GT(j["train_flop_per_token"]["hardware_full"].get<double>(),
            j["train_flop_per_token"]["hardware_selective"].get<double>());
  // bf16 weights are 2 bytes per parameter; KV per token 2·8·128·126·2 bytes.
  EXPECT_DOUBLE_EQ(j["weight_bytes"]["bf16"].get<double>(), 2.0 * j["params_total"].get<double>());
  EXPECT_DOUBLE_EQ(j["kv_bytes_per_token"]["bf16"].get<double>(), 2.0 * 8 * 128 * 126 * 2);
  for (const char* dt : {"fp8", "mxfp8", "mxfp4", "nvfp4"}) EXPECT_TRUE(j["weight_bytes"].contains(dt)) << dt;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(ModelCli, ShowJsonMoeActiveAndSeqOption) {
  const auto r = run_cli("model show qwen3-30b-a3b --json --seq 2048 --context 8192");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["params_total"].get<double>() / 30.53e9, 1.0, 0.005);
  EXPECT_NEAR(j["params_active"].get<double>() / 3.35e9, 1.0, 0.005);
  EXPECT_EQ(j["seq_len"], 2048);
  EXPECT_EQ(j["context"], 8192);
  EXPECT_EQ(j["moe"]["experts"], 128);
}

TEST(ModelCli, ShowByPathPrintsText) {
  const auto r = run_cli("model show " + xpusim::test::data_dir() + "/models/deepseek-v3.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("model deepseek-v3 (deepseek_v3)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("active 37.55"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mla"), std::string::npos) << r.out;
}

TEST(ModelCli, ListShowsEveryModel) {
  const auto r = run_cli("model list --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["models"].size(), 76u);
  const auto t = run_cli("model list");
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_NE(t.out.find("mixtral-8x7b"), std::string::npos);
}

TEST(ModelCli, UnknownIdExits2WithDidYouMean) {
  const auto r = run_cli("model show llama3.1-8c");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown model 'llama3.1-8c'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean 'llama3.1-8b'?"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(ModelCli, MissingFileAndUsageErrorsExit2) {
  EXPECT_EQ(run_cli("model show /nonexistent/config.json").exit_code, 2);
  EXPECT_EQ(run_cli("model").exit_code, 2);
  EXPECT_EQ(run_cli("model show llama3.1-8b --seq 0").exit_code, 2);
  EXPECT_EQ(run_cli("model show --help").exit_code, 0);
}

// --seq and --context are judged as every other count: a name, the value and the range (not
// CLI11's "not in range 0 to 1.8e308"), including an absurd length.
TEST(ModelCli, LengthsOutOfRangeNameTheFlagTheValueAndTheRange) {
  const std::pair<const char*, const char*> cases[] = {
      {"--seq 0", "error: --seq: must be a positive integer (got '0'; expected an integer ≥ 1"},
      {"--context -5", "error: --context: must be a positive integer (got '-5'"},
      {"--seq 100000000000", "error: --seq: exceeds the limit (got '100000000000'; expected at most 1073741824)"}};
  for (const auto& [args, message] : cases) {
    const auto r = run_cli(std::string("model show llama3.1-8b ") + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

// A hybrid model runs through every command: `model show` states its blocks and its Mamba state,
// `serve` and `train` run it and flag the answer extrapolating (no validation row is a hybrid).
TEST(ModelCli, HybridShowsItsBlocksAndServesAndTrainsExtrapolating) {
  const auto show = run_cli("model show nemotron-h-8b --json");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const auto j = nlohmann::json::parse(show.out);
  EXPECT_EQ(j["mamba"]["mamba_layers"], 24);
  EXPECT_EQ(j["mamba"]["attention_layers"], 4);
  EXPECT_EQ(j["mamba"]["state_bytes_per_sequence_bf16"], 24 * 1079296 * 2);
  const auto serve = run_cli("serve --system h100-sxm-dgx --model nemotron-h-8b --chips 1 --concurrency 16 --requests 64 "
                             "--in-len 512 --out-len 128");
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  EXPECT_NE(serve.out.find("model type hybrid not validated"), std::string::npos) << serve.out;
  const auto train = run_cli("train --system h100-sxm-dgx --chips 8 --model nemotron-h-8b --tp 2 --seq-len 4096");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  EXPECT_NE(train.out.find("model type hybrid not validated"), std::string::npos) << train.out;
}

// A state-space model without attention: `model show` says so (no heads, no KV cache, the state
// per sequence), `serve` counts its cache in sequences and flags the model type ssm, `train` runs,
// and a tp that does not split the Mamba groups is exit 2 naming them.
TEST(ModelCli, MambaOnlyModelHasNoKvCacheAndServesInSequences) {
  const auto show = run_cli("model show mamba-codestral-7b");
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("no attention"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("ssm         64 Mamba-2"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("kv cache    none"), std::string::npos) << show.out;
  const auto json = nlohmann::json::parse(run_cli("model show mamba-2.8b --json").out);
  EXPECT_EQ(json["heads"], 0);
  EXPECT_EQ(json["mamba"]["mamba_version"], 1);
  EXPECT_EQ(json["mamba"]["dt_rank"], 160);
  EXPECT_EQ(json["mamba"]["state_bytes_per_sequence_bf16"], 64 * 5120 * 19 * 2);
  const auto serve = run_cli("serve --system h100-sxm-dgx --model mamba-codestral-7b --chips 1 --concurrency 16 "
                             "--requests 64 --in-len 512 --out-len 128 --json");
  ASSERT_EQ(serve.exit_code, 0) << serve.err;
  const auto s = nlohmann::json::parse(serve.out);
  EXPECT_EQ(s["kv_tokens_per_engine"], 0);
  EXPECT_GT(s["state_sequences_per_engine"].get<long long>(), 16);
  const auto text = run_cli("serve --system h100-sxm-dgx --model mamba-codestral-7b --chips 1 --concurrency 16 "
                            "--requests 64 --in-len 512 --out-len 128");
  EXPECT_NE(text.out.find("state cache"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("model type ssm not validated"), std::string::npos) << text.out;
  const auto train = run_cli("train --system h100-sxm-dgx --chips 8 --model mamba-2.8b --tp 2 --seq-len 4096");
  ASSERT_EQ(train.exit_code, 0) << train.err;
  const auto bad = run_cli("train --system h100-sxm-dgx --chips 16 --model mamba-codestral-7b --tp 16");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("128 Mamba heads and 8 groups"), std::string::npos) << bad.err;
}
