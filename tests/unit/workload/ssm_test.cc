// State-space models without attention (Mamba-1, Falcon Mamba, Mamba-2): every layer a Mamba
// mixer alone. Each expected value is derived here from the shapes (data/models/README.md), not
// read back.

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "xpusim/core/diagnostics.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "config_text.h"

using namespace xpusim;
using workload::LayerBlock;
using workload::ModelSpec;

namespace {

const std::string kSsmModels = std::string(XS_TESTDATA_DIR) + "/models";

ModelSpec ssm(const std::string& id) { return workload::load_model(id, kSsmModels); }

/// The load error of a config ("" when it loads).
std::string ssm_error(const std::string& json) { return test::config_text_error("ssm_bad", json); }

bool says(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

}  // namespace

// Mamba-2.8B: 64 Mamba-1 layers. Per layer: in_proj 2560 × 2·5120, the conv 5120·(4 + 1), x_proj
// 5120 × (160 + 2·16), dt_proj 160 × 5120 and its bias 5120, A_log 5120·16, D 5120, out_proj 5120
// × 2560 and the block's norm 2560: 41,244,160. With the tied embedding 50,280 × 2560 and the final
// norm: 2,768,345,600, the card's 2.8B.
TEST(Ssm, Mamba28bCountsEachLayerOnce) {
  const ModelSpec m = ssm("mamba-2.8b");
  EXPECT_EQ(m.mamba.version, 1);
  EXPECT_EQ(m.attention_layers(), 0);
  for (int i = 0; i < m.layers; ++i) ASSERT_EQ(m.layer_block(i), LayerBlock::Mamba) << i;
  const double layer = 2560.0 * 2 * 5120 + 5120.0 * 5 + 5120.0 * (160 + 32) + 160.0 * 5120 + 5120 + 5120.0 * 16 + 5120 +
                       5120.0 * 2560 + 2560;
  EXPECT_DOUBLE_EQ(layer, 41244160.0);
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 0).total(), layer);
  const auto p = workload::count_params(m);
  EXPECT_DOUBLE_EQ(p.total, 64 * layer + 50280.0 * 2560 + 2560);
  EXPECT_DOUBLE_EQ(p.total, 2768345600.0);
  EXPECT_DOUBLE_EQ(p.active, p.total);
}

// Falcon Mamba 7B: the mixer reads intermediate_size 8192 (not expand 16 × hidden); its RMSNorms of
// dt, B and C carry no weights. Per layer 4096·2·8192 + 8192·5 + 8192·(256 + 32) + 256·8192 + 8192
// + 8192·16 + 8192 + 8192·4096 + 4096 = 105,312,256; untied embeddings 2 × 65,024 × 4096.
TEST(Ssm, FalconMambaUsesIntermediateSizeAndWeightlessNorms) {
  const ModelSpec m = ssm("falcon-mamba-7b");
  EXPECT_EQ(m.mamba.inner(), 8192);
  EXPECT_EQ(m.mamba.dt_rank, 256);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 0).total(), 105312256.0);
  EXPECT_DOUBLE_EQ(workload::count_params(m).total, 64 * 105312256.0 + 2 * 65024.0 * 4096 + 4096);
  EXPECT_DOUBLE_EQ(workload::count_params(m).total, 7272665088.0);
}

// Mamba-Codestral 7B: 64 Mamba-2 layers of the shape of Nemotron-H-8B's (128 heads × 64, 8 groups,
// state 128: 109,640,064 each, derived in hybrid_test.cc); untied embeddings 2 × 32,768 × 4096:
// 7,285,403,648.
TEST(Ssm, MambaCodestralCountsMamba2Layers) {
  const ModelSpec m = ssm("mamba-codestral-7b");
  EXPECT_EQ(m.mamba.version, 2);
  EXPECT_EQ(m.mamba.chunk, 256);
  EXPECT_DOUBLE_EQ(workload::layer_params(m, 0).total(), 109640064.0);
  EXPECT_DOUBLE_EQ(workload::count_params(m).total, 64 * 109640064.0 + 2 * 32768.0 * 4096 + 4096);
  EXPECT_DOUBLE_EQ(workload::count_params(m).total, 7285403648.0);
}

// No attention: no heads, no KV cache, only the per-sequence state (Mamba-1: channels × (state +
// 3 conv inputs); Mamba-2: heads × head_dim × state + (8192 + 2·8·128) conv channels × 3), and a
// decode token costs the weights' 2 FLOPs per parameter plus the recurrent step (Mamba-1: 4
// multiply-adds per channel and state element; Mamba-2: 2 per state element).
TEST(Ssm, NoAttentionMeansNoKvCacheOnlyState) {
  const ModelSpec m1 = ssm("mamba-2.8b");
  EXPECT_EQ(m1.heads, 0);
  EXPECT_EQ(m1.kv_heads, 0);
  EXPECT_DOUBLE_EQ(workload::kv_bytes_per_token(m1, core::Dtype::Bf16).base(), 0.0);
  EXPECT_DOUBLE_EQ(workload::recurrent_state_bytes_per_sequence(m1, core::Dtype::Bf16).base(), 64 * 5120.0 * 19 * 2);
  const double mm1 = workload::count_params(m1).matmul_active;
  EXPECT_NEAR(workload::decode_flops_per_token(m1, 100000), 2 * mm1 + 64 * 8.0 * 5120 * 16, 1.0);
  const ModelSpec m2 = ssm("mamba-codestral-7b");
  EXPECT_DOUBLE_EQ(workload::recurrent_state_bytes_per_sequence(m2, core::Dtype::Bf16).base(),
                   64 * (128.0 * 64 * 128 + 10240.0 * 3) * 2);
  const double mm2 = workload::count_params(m2).matmul_active;
  EXPECT_NEAR(workload::decode_flops_per_token(m2, 100000), 2 * mm2 + 64 * 4.0 * 128 * 64 * 128, 1.0);
}

// Tensor parallelism must split every sharded part: Mamba-1 channels, Mamba-2 heads and groups,
// attention heads (a hybrid: both).
TEST(Ssm, TensorParallelMustDivideTheMixers) {
  const ModelSpec m1 = ssm("mamba-2.8b"), m2 = ssm("mamba-codestral-7b"), h = ssm("nemotron-h-8b");
  EXPECT_TRUE(workload::tp_divides(m1, 8));
  EXPECT_FALSE(workload::tp_divides(m1, 3));
  EXPECT_TRUE(workload::tp_divides(m2, 8));
  EXPECT_FALSE(workload::tp_divides(m2, 16));  // 8 groups
  EXPECT_EQ(workload::tp_divisors_text(m2), "128 Mamba heads and 8 groups");
  EXPECT_EQ(workload::tp_divisors_text(m1), "5120 Mamba channels");
  EXPECT_FALSE(workload::tp_divides(h, 16));
  EXPECT_EQ(workload::tp_divisors_text(h), "32 attention heads and 128 Mamba heads and 8 groups");
  EXPECT_FALSE(workload::tp_divides(m1, 0));
}

// Bad configs name the field, the value and what was expected.
TEST(Ssm, ConfigErrorsNameTheField) {
  const std::string base2 = R"({"model_type": "mamba2", "hidden_size": 256, "num_hidden_layers": 2, "vocab_size": 100,
    "head_dim": 64, "n_groups": 2, "state_size": 16)";
  EXPECT_EQ(ssm_error(base2 + R"(, "num_heads": 8})"), "");
  const std::string width = ssm_error(base2 + R"(, "num_heads": 6})");
  EXPECT_TRUE(says(width, "num_heads") && says(width, "expand × hidden_size") && says(width, "512")) << width;
  std::string three_groups = base2;
  three_groups.replace(three_groups.find(R"("n_groups": 2)"), std::string(R"("n_groups": 2)").size(), R"("n_groups": 3)");
  const std::string groups = ssm_error(three_groups + R"(, "num_heads": 8})");
  EXPECT_TRUE(says(groups, "n_groups") && says(groups, "does not divide num_heads")) << groups;
  const std::string base1 = R"({"model_type": "mamba", "hidden_size": 256, "num_hidden_layers": 2, "vocab_size": 100)";
  EXPECT_EQ(ssm_error(base1 + R"(, "time_step_rank": "auto"})"), "");
  EXPECT_EQ(workload::load_model(::testing::TempDir() + "ssm_bad.json", kSsmModels).mamba.dt_rank, 16);
  const std::string rank = ssm_error(base1 + R"(, "time_step_rank": "big"})");
  EXPECT_TRUE(says(rank, "time_step_rank") && says(rank, "auto")) << rank;
  const std::string state = ssm_error(base1 + R"(, "state_size": 0})");
  EXPECT_TRUE(says(state, "state_size") && says(state, "positive")) << state;
  const std::string vocab = ssm_error(R"({"model_type": "falcon_mamba", "hidden_size": 256, "num_hidden_layers": 2})");
  EXPECT_TRUE(says(vocab, "vocab_size")) << vocab;
}
