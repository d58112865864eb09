// Nemotron-NAS end to end: a config whose blocks all equal Llama-3.1-70B's layer trains and serves
// exactly as that model does, and a heterogeneous one runs, reports its layers and is flagged
// extrapolating (no validation row runs one).

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

using xpusim::test::run_cli;

namespace {

std::string write_nas_config(const std::string& name, const std::string& json) {
  const std::string path = ::testing::TempDir() + name + ".json";
  std::ofstream(path) << json;
  return path;
}

/// Llama-3.1-70B written as Nemotron-NAS: 80 blocks of 8 query heads per KV head and ffn_mult 5.25.
std::string llama70_as_nas() {
  std::string blocks;
  for (int i = 0; i < 80; ++i)
    blocks += std::string(i ? "," : "") + R"({"attention": {"n_heads_in_group": 8, "no_op": false,
      "replace_with_linear": false}, "ffn": {"ffn_mult": 5.25, "no_op": false, "replace_with_linear": false}})";
  return write_nas_config("llama70-nas", R"({"architectures": ["DeciLMForCausalLM"], "model_type": "nemotron-nas",
    "hidden_size": 8192, "num_attention_heads": 64, "num_hidden_layers": 80, "vocab_size": 128256,
    "intermediate_size": null, "num_key_value_heads": null, "max_position_embeddings": 131072,
    "rope_theta": 500000.0, "tie_word_embeddings": false, "block_configs": [)" + blocks + "]}");
}

/// The document without what names the model (its id, family and file) or the build, nor its
/// trust: the twin extrapolates (its model type is not validated), which widens its bands.
nlohmann::json without_identity(const std::string& out) {
  auto j = nlohmann::json::parse(out);
  j.erase("xpusim_version");
  j["inputs"].erase("model");
  for (const char* k : {"model", "family", "source", "trust"}) j.erase(k);
  std::vector<std::string> bands;
  for (const auto& [k, v] : j.items())
    if (k.size() > 4 && (k.rfind("_low") == k.size() - 4 || k.rfind("_high") == k.size() - 5)) bands.push_back(k);
  for (const auto& k : bands) j.erase(k);
  return j;
}

}  // namespace

TEST(NemotronNasCli, UniformBlocksTrainAndServeAsTheirLlamaTwin) {
  const std::string nas = llama70_as_nas();
  for (const std::string& cmd :
       {std::string("train --system h100-sxm-dgx --chips 64 --tp 8 --pp 2 --global-batch 256 --json --model "),
        std::string("serve --system h100-sxm-dgx --tp 4 --in-len 2000 --out-len 200 --rate 3 --requests 200 --json --model ")}) {
    const auto twin = run_cli(cmd + nas);
    const auto llama = run_cli(cmd + "llama3.1-70b");
    ASSERT_EQ(twin.exit_code, 0) << twin.err;
    ASSERT_EQ(llama.exit_code, 0) << llama.err;
    EXPECT_EQ(without_identity(twin.out).dump(1), without_identity(llama.out).dump(1)) << cmd;
  }
}

TEST(NemotronNasCli, HeterogeneousModelShowsItsLayersAndRunsExtrapolating) {
  const std::string path = write_nas_config("nas-small", R"({"model_type": "nemotron-nas", "hidden_size": 1024,
    "num_attention_heads": 16, "num_hidden_layers": 4, "vocab_size": 32000, "max_position_embeddings": 8192,
    "block_configs": [{"attention": {"n_heads_in_group": 8}, "ffn": {"ffn_mult": 2.625}},
      {"attention": {"no_op": true}, "ffn": {"ffn_mult": 1.3}},
      {"attention": {"replace_with_linear": true}, "ffn": {"ffn_mult": 5.25}},
      {"attention": {"n_heads_in_group": 16}, "ffn": {"replace_with_linear": true}}]})");
  const auto show = run_cli("model show --json " + path);
  ASSERT_EQ(show.exit_code, 0) << show.err;
  const auto j = nlohmann::json::parse(show.out);
  const auto& layers = j["heterogeneous_layers"];
  EXPECT_EQ(layers["attention_mlp_layers"], 1);
  EXPECT_EQ(layers["mlp_only_layers"], 2);
  EXPECT_EQ(layers["attention_only_layers"], 1);
  EXPECT_EQ(layers["linear_attention_replacements"], 1);
  EXPECT_EQ(layers["linear_mlp_replacements"], 1);
  EXPECT_EQ(layers["kv_heads_min"], 1);
  EXPECT_EQ(layers["kv_heads_max"], 2);
  EXPECT_EQ(layers["ffn_min"], 1024);
  EXPECT_EQ(layers["ffn_max"], 3584);
  ASSERT_EQ(layers["per_layer"].size(), 4u);
  EXPECT_EQ(layers["per_layer"][0]["kv_heads"], 2);
  EXPECT_EQ(layers["per_layer"][1]["kv_heads"], 0);
  EXPECT_EQ(layers["per_layer"][2]["linear_attention"], true);
  EXPECT_EQ(layers["per_layer"][3]["ffn"], 0);
  EXPECT_EQ(layers["per_layer"][3]["linear_mlp"], true);
  // Layer 1: an MLP of 1,024 (3·h·f) and its norm.
  EXPECT_EQ(layers["per_layer"][1]["params"], 3 * 1024 * 1024 + 1024);
  EXPECT_NE(run_cli("model show " + path).out.find("Nemotron-NAS"), std::string::npos);
  for (const std::string& cmd : {std::string("train --system h100-sxm-dgx --chips 8 --tp 2 --json --model "),
                                 std::string("serve --system h100-sxm-dgx --tp 2 --in-len 1000 --out-len 100 "
                                             "--rate 2 --requests 50 --json --model ")}) {
    const auto r = run_cli(cmd + path);
    ASSERT_EQ(r.exit_code, 0) << cmd << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    EXPECT_TRUE(doc["trust"]["extrapolating"].get<bool>()) << cmd;
    EXPECT_NE(doc["trust"]["reasons"].dump().find("dense-heterogeneous"), std::string::npos) << cmd;
  }
}

// tp must split or replicate every layer's KV heads: 24 heads in groups of 3 (8 KV heads) and of 8
// (3 KV heads); tp 8 fits the first layer but not the second.
TEST(NemotronNasCli, TensorParallelismMustFitEveryLayersKvHeads) {
  const std::string path = write_nas_config("nas-kv", R"({"model_type": "nemotron-nas", "hidden_size": 1536,
    "num_attention_heads": 24, "num_hidden_layers": 2, "vocab_size": 32000,
    "block_configs": [{"attention": {"n_heads_in_group": 3}, "ffn": {"ffn_mult": 1}},
      {"attention": {"n_heads_in_group": 8}, "ffn": {"ffn_mult": 1}}]})");
  const auto r = run_cli("serve --system h100-sxm-dgx --tp 8 --in-len 100 --out-len 10 --requests 5 --model " + path);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("KV heads (3)"), std::string::npos) << r.err;
}
