// FLOP and byte identities. Each expected value is derived here from a stated formula; see
// docs/models.md for the conventions (GEMM = 2mnk; causal mean keys (s+1)/2; training = 3×
// forward; LM head counted even when tied; the input embedding is a lookup, not a GEMM).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"
#include "xpusim/workload/ops.h"

using namespace xpusim;
using workload::count_params;
using workload::load_model;
using workload::ModelSpec;
using workload::RecomputeKind;

namespace {

const std::string kModels = std::string(XS_TESTDATA_DIR) + "/models";

double rel(double a, double b) { return std::abs(a - b) / std::abs(b); }

}  // namespace

// Dense llama (no biases, untied): model FLOPs per token at sequence s =
//   6·(N − embedding − norms) + 3 · layers · 2·heads·(2·head_dim)·(s+1)/2
// where N − embedding − norms are exactly the GEMM weights incl. the LM head.
TEST(TrainFlops, DenseLlamaIsSixNPlusCausalAttention) {
  const ModelSpec m = load_model("llama3.1-8b", kModels);
  const auto p = count_params(m);
  const double norms = m.hidden * (2.0 * m.layers + 1);  // two RMSNorms per layer + final
  const double n_gemm = p.total - p.embedding - norms;
  const double head = double(m.vocab) * m.hidden;  // the LM head is not recomputed
  struct Case { long long s; };
  for (const Case c : {Case{1}, Case{2048}, Case{4096}, Case{8192}}) {
    const double attn_fwd = m.layers * 2.0 * m.heads * (2.0 * m.head_dim) * (c.s + 1) / 2.0;
    const double expect = 6.0 * n_gemm + 3.0 * attn_fwd;
    const auto f = workload::train_flops_per_token(m, c.s, RecomputeKind::None);
    EXPECT_NEAR(rel(f.model, expect), 0.0, 1e-12) << c.s;
    EXPECT_DOUBLE_EQ(f.hardware, f.model);
    // Selective recompute re-runs QK^T and AV forward; full re-runs the layers' forward.
    EXPECT_NEAR(rel(workload::train_flops_per_token(m, c.s, RecomputeKind::Selective).hardware,
                    expect + attn_fwd), 0.0, 1e-12);
    EXPECT_NEAR(rel(workload::train_flops_per_token(m, c.s, RecomputeKind::Full).hardware,
                    8.0 * n_gemm - 2.0 * head + 4.0 * attn_fwd), 0.0, 1e-12);
  }
}

// A remat policy that saves only the QKV and MLP up-projection outputs (AXLearn) reruns the
// rest of each layer's forward: per layer the output projection heads·hd·h and the
// down-projection ffn·h GEMMs (2 FLOPs per weight) plus the attention core, never the QKV or the
// up/gate GEMMs and never the LM head.
TEST(TrainFlops, ProjectionsOnlyRematRecomputesOutputProjectionsAndAttention) {
  const ModelSpec m = load_model("llama2-70b", kModels);
  const long long s = 4096;
  const double h = m.hidden;
  const double attn_fwd = m.layers * 2.0 * m.heads * (2.0 * m.head_dim) * (s + 1) / 2.0;
  const double output_side = m.layers * (m.heads * m.head_dim * h + h * m.ffn);
  const auto none = workload::train_flops_per_token(m, s, RecomputeKind::None);
  const auto remat = workload::train_flops_per_token(m, s, RecomputeKind::SelectiveAllButProjections);
  EXPECT_NEAR(rel(remat.hardware, none.model + 2.0 * output_side + attn_fwd), 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(remat.model, none.model);
  // Between Megatron's selective (attention core only) and full recompute.
  EXPECT_GT(remat.hardware, workload::train_flops_per_token(m, s, RecomputeKind::Selective).hardware);
  EXPECT_LT(remat.hardware, workload::train_flops_per_token(m, s, RecomputeKind::Full).hardware);
}

// MoE: the router and the top-k routed down-projections (h·expert_ffn each) are on the output side.
TEST(TrainFlops, OutputSideMatmulOfAMoeLayer) {
  const ModelSpec m = load_model("mixtral-8x7b", kModels);
  const double h = m.hidden;
  const double expect = m.heads * m.head_dim * h + h * m.moe.num_experts +
                        m.moe.experts_per_token * h * m.moe.expert_ffn;
  EXPECT_NEAR(rel(workload::output_side_matmul(m, 0), expect), 0.0, 1e-12);
}

// The GEMMs a layer's operator list marks GemmRole::Other are exactly the output side that
// accounting counts (o_proj, router, routed and shared down, dense down): per token, their
// forward FLOPs are 2·output_side_matmul. Dense GQA, MLA with shared experts and a first dense
// layer, and MoE with biases; one sequence on one chip, so the balanced expert rows are exact.
TEST(TrainFlops, OutputSideRolesMatchAccountingForEveryLayerKind) {
  for (const char* id : {"llama3.1-8b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b", "qwen3-30b-a3b"}) {
    const ModelSpec m = load_model(id, kModels);
    workload::LayerShard s;
    s.batch = 1;
    s.seq = 4096;
    for (int layer : {0, m.layers - 1}) {
      double other = 0, saved = 0;
      bool qkv = false, up = false;
      for (const auto& op : workload::layer_ops(m, layer, s)) {
        if (op.kind != workload::OpKind::Gemm) continue;
        (op.role == workload::GemmRole::Other ? other : saved) += op.flops();
        qkv = qkv || op.role == workload::GemmRole::QkvProjection;
        up = up || op.role == workload::GemmRole::UpProjection;
      }
      const double per_token = other / static_cast<double>(s.seq);
      EXPECT_NEAR(rel(per_token, 2.0 * workload::output_side_matmul(m, layer)), 0.0, 1e-9) << id << " layer " << layer;
      EXPECT_TRUE(qkv && up) << id << " layer " << layer << ": a layer saves its QKV and up-projection outputs";
      EXPECT_GT(saved, 0.0) << id;
    }
  }
}

// Narayanan et al. (SC'21) for GPT-style models, per token, non-causal:
//   model = 72·l·h²·(1 + s/(6h) + V/(12·l·h)), full recompute = 96·l·h²·(1 + s/(6h) + V/(16·l·h)).
// With causal attention the s/(6h) term becomes (s+1)/(12h). The 13h biases per layer and the
// norms are not GEMM weights, so the identity is exact.
TEST(TrainFlops, GptMatchesNarayananWithCausalAttention) {
  for (const char* id : {"gpt3-175b", "megatron-gpt-1t", "megatron-gpt-22b"}) {
    const ModelSpec m = load_model(id, kModels);
    const double l = m.layers, h = m.hidden, V = m.vocab;
    for (long long s : {2048LL, 4096LL}) {
      const double model = 72 * l * h * h * (1 + (s + 1) / (12 * h) + V / (12 * l * h));
      const double full = 96 * l * h * h * (1 + (s + 1) / (12 * h) + V / (16 * l * h));
      EXPECT_NEAR(rel(workload::train_flops_per_token(m, s, RecomputeKind::None).model, model), 0,
                  1e-12) << id;
      EXPECT_NEAR(rel(workload::train_flops_per_token(m, s, RecomputeKind::Full).hardware, full), 0,
                  1e-12) << id;
    }
  }
}

// MoE: only the router and the top-k experts count. Mixtral per layer GEMM weights:
//   attention 2·h·(heads·hd) + 2·h·(kv·hd), router h·E, k experts of 3·h·f.
TEST(TrainFlops, MoeCountsActiveExpertsOnly) {
  const ModelSpec m = load_model("mixtral-8x7b", kModels);
  const double h = m.hidden, hd = m.head_dim, f = m.moe.expert_ffn;
  const double per_layer = 2 * h * m.heads * hd + 2 * h * m.kv_heads * hd + h * m.moe.num_experts +
                           m.moe.experts_per_token * 3 * h * f;
  const double n_gemm = m.layers * per_layer + m.vocab * h;
  const long long s = 4096;
  const double attn_fwd = m.layers * 2.0 * m.heads * 2 * hd * (s + 1) / 2.0;
  EXPECT_NEAR(rel(workload::train_flops_per_token(m, s, RecomputeKind::None).model,
                  6 * n_gemm + 3 * attn_fwd), 0, 1e-12);
  EXPECT_NEAR(rel(count_params(m).matmul_active, n_gemm), 0, 1e-12);
}

// MLA attends over d_qk = nope + rope for QK^T and d_v for AV with every head.
TEST(TrainFlops, MlaAttentionUsesQkAndVHeadDims) {
  const ModelSpec m = load_model("deepseek-v3", kModels);
  const long long s = 4096;
  const double attn_fwd = m.layers * 2.0 * m.heads * (192 + 128) * (s + 1) / 2.0;
  const auto f = workload::train_flops_per_token(m, s, RecomputeKind::None);
  EXPECT_NEAR(rel(f.model, 6 * count_params(m).matmul_active + 3 * attn_fwd), 0, 1e-12);
}

TEST(CausalMeanKeys, MatchesBruteForceSum) {
  struct Case { long long s, w; };
  for (const Case c : {Case{1, 0}, Case{7, 0}, Case{4096, 0}, Case{4096, 128}, Case{100, 100},
                       Case{100, 1000}, Case{129, 128}}) {
    double sum = 0;
    for (long long i = 1; i <= c.s; ++i) sum += (c.w > 0 ? std::min(i, c.w) : i);
    EXPECT_DOUBLE_EQ(workload::causal_mean_keys(c.s, c.w), sum / c.s) << c.s << " " << c.w;
  }
}

// gpt-oss: sliding layers (even) see min(i, 128) keys, full layers (odd) see i.
TEST(TrainFlops, SlidingWindowCapsContextPerLayer) {
  const ModelSpec m = load_model("gpt-oss-120b", kModels);
  const long long s = 8192, w = 128;
  const double per_key = 2.0 * m.heads * (2 * m.head_dim);
  const double sliding_keys = (w * (w + 1) / 2.0 + double(s - w) * w) / s;
  const double attn_fwd = 18 * per_key * sliding_keys + 18 * per_key * (s + 1) / 2.0;
  const auto f = workload::train_flops_per_token(m, s, RecomputeKind::None);
  EXPECT_NEAR(rel(f.model, 6 * count_params(m).matmul_active + 3 * attn_fwd), 0, 1e-12);
  // Decode at context L: sliding layers read min(L, w) keys.
  const long long L = 10000;
  EXPECT_NEAR(rel(workload::decode_flops_per_token(m, L),
                  2 * count_params(m).matmul_active + 18 * per_key * w + 18 * per_key * L), 0,
              1e-12);
}

// Prefill: GEMMs for every prompt token except the LM head (last position only) + causal attention.
TEST(InferFlops, PrefillAndDecode) {
  const ModelSpec m = load_model("llama3.1-70b", kModels);
  const double n = count_params(m).matmul_active, head = double(m.vocab) * m.hidden;
  const double per_key = 2.0 * m.heads * 2 * m.head_dim * m.layers;
  for (long long P : {1LL, 512LL, 8192LL}) {
    EXPECT_NEAR(rel(workload::prefill_flops_per_token(m, P),
                    2 * (n - head) + 2 * head / P + per_key * (P + 1) / 2.0), 0, 1e-12);
  }
  for (long long L : {1LL, 4096LL, 131072LL}) {
    EXPECT_NEAR(rel(workload::decode_flops_per_token(m, L), 2 * n + per_key * L), 0, 1e-12);
  }
}

TEST(Bytes, WeightBytesAreParamsTimesBytesPerElement) {
  const ModelSpec m = load_model("llama3.1-8b", kModels);
  const double n = count_params(m).total;
  EXPECT_DOUBLE_EQ(core::to_bytes(workload::weight_bytes(m, core::Dtype::Bf16)), 2 * n);
  EXPECT_DOUBLE_EQ(core::to_bytes(workload::weight_bytes(m, core::Dtype::Fp8)), n);
  EXPECT_DOUBLE_EQ(core::to_bytes(workload::weight_bytes(m, core::Dtype::Mxfp4)), n * (0.5 + 1.0 / 32));
  const ModelSpec moe = load_model("qwen3-30b-a3b", kModels);
  EXPECT_DOUBLE_EQ(core::to_bytes(workload::active_weight_bytes(moe, core::Dtype::Bf16)),
                   2 * count_params(moe).active);
}

// KV per token: GQA 2·kv_heads·head_dim per layer; MLA kv_lora_rank + qk_rope_head_dim.
TEST(Bytes, KvBytesPerToken) {
  struct Case { const char* id; double elems_per_layer; };
  for (const Case c : {Case{"llama3.1-8b", 2.0 * 8 * 128}, Case{"llama2-7b", 2.0 * 32 * 128},
                       Case{"falcon-180b", 2.0 * 8 * 64}, Case{"deepseek-v3", 512.0 + 64},
                       Case{"gpt-oss-120b", 2.0 * 8 * 64}, Case{"qwen3-235b-a22b", 2.0 * 4 * 128}}) {
    const ModelSpec m = load_model(c.id, kModels);
    EXPECT_DOUBLE_EQ(core::to_bytes(workload::kv_bytes_per_token(m, core::Dtype::Bf16)),
                     c.elems_per_layer * m.layers * 2) << c.id;
    EXPECT_DOUBLE_EQ(core::to_bytes(workload::kv_bytes_per_token(m, core::Dtype::Fp8)),
                     c.elems_per_layer * m.layers) << c.id;
  }
}

TEST(Bytes, KvForContextCapsSlidingLayers) {
  const ModelSpec m = load_model("gpt-oss-120b", kModels);
  const double per_layer_token = 2.0 * 8 * 64 * 2;  // bf16
  for (long long L : {64LL, 128LL, 4096LL}) {
    const double expect = (18.0 * std::min<long long>(L, 128) + 18.0 * L) * per_layer_token;
    EXPECT_DOUBLE_EQ(core::to_bytes(workload::kv_bytes_for_context(m, core::Dtype::Bf16, L)), expect);
  }
  const ModelSpec dense = load_model("llama3.1-8b", kModels);
  EXPECT_DOUBLE_EQ(core::to_bytes(workload::kv_bytes_for_context(dense, core::Dtype::Bf16, 1000)),
                   1000 * core::to_bytes(workload::kv_bytes_per_token(dense, core::Dtype::Bf16)));
}

TEST(Params, LayerBreakdownSumsToTotal) {
  for (const char* id : {"deepseek-v3", "gpt-oss-120b", "gpt-j-6b", "mpt-7b"}) {
    const ModelSpec m = load_model(id, kModels);
    const auto p = count_params(m);
    double layers = 0;
    for (int i = 0; i < m.layers; ++i) layers += workload::layer_params(m, i).total();
    const double final_norm = m.hidden * (m.norm == workload::NormKind::LayerNorm && m.norm_bias ? 2 : 1);
    EXPECT_NEAR(rel(p.embedding + p.lm_head + final_norm + layers, p.total), 0, 1e-12) << id;
  }
  // DeepSeek: 3 dense layers, 58 MoE layers of 256 routed experts of 3·7168·2048.
  const ModelSpec ds = load_model("deepseek-v3", kModels);
  EXPECT_DOUBLE_EQ(count_params(ds).routed_total, 58.0 * 256 * 3 * 7168 * 2048);
  EXPECT_DOUBLE_EQ(count_params(ds).expert, 3.0 * 7168 * 2048);
}

// gpt-oss-120b's checkpoint keeps its attention, router, embedding and LM head in bf16 beside the
// MXFP4 experts (quantization_config.modules_to_not_convert). Served (checkpoint_formats), those
// GEMMs carry Op::unquantized; trained, none do (the recipe sets the formats). Its weight bytes
// are the rest at the format's size plus those parameters at 2 bytes, each summed here from
// layer_params; that sum comes to 60.7 GiB at MXFP4 (4.25 bits), the size of the published
// checkpoint (about 65 GB, recalled from its model card, not in ../shared).
TEST(Unquantized, GptOssServesItsBf16ModulesInBf16) {
  const ModelSpec m = load_model("gpt-oss-120b", kModels);
  workload::LayerShard s;
  s.batch = 1;
  s.seq = s.q_len = s.kv_len = 16;
  s.checkpoint_formats = true;
  std::string marked;
  for (const auto& op : workload::layer_ops(m, 0, s))
    if (op.unquantized) marked += op.name + " ";
  EXPECT_EQ(marked, "qkv_proj o_proj router ");
  EXPECT_TRUE(workload::head_ops(m, s).at(1).unquantized);  // lm_head
  s.checkpoint_formats = false;
  for (const auto& op : workload::layer_ops(m, 0, s)) EXPECT_FALSE(op.unquantized) << op.name;
  EXPECT_FALSE(workload::head_ops(m, s).at(1).unquantized);

  double unq = workload::embedding_params(m) + workload::lm_head_params(m);
  for (int i = 0; i < m.layers; ++i) {
    const auto lp = workload::layer_params(m, i);
    unq += lp.attention() + lp.router_matmul + lp.router_bias;
  }
  EXPECT_NEAR(workload::unquantized_params(m), unq, 1.0);
  const double total = count_params(m).total;
  EXPECT_NEAR(workload::weight_bytes(m, core::Dtype::Mxfp4).base(), (total - unq) * 4.25 / 8.0 + unq * 2.0, 1.0);
  EXPECT_NEAR(workload::weight_bytes(m, core::Dtype::Bf16).base(), total * 2.0, 1.0);
  EXPECT_NEAR(workload::weight_bytes(m, core::Dtype::Mxfp4).base() / 1073741824.0, 60.7, 0.1);
}
