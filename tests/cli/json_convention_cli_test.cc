// The JSON convention of docs/json.md, checked on whole documents: schema_version and inputs
// present; every numeric value has a unit word in its key or in an enclosing key, or is one of
// the documented unitless names; counts are integers.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "npy_fixture.h"

using xpusim::test::run_cli;
using Json = nlohmann::json;

namespace {

// docs/json.md: unit words (a key's `_`-separated words) and unitless names.
const std::set<std::string> kUnitWords = {"s",   "ms",    "us",   "j",      "w",   "kw", "usd",  "gib",  "tib",
                                          "mib", "bytes", "flop", "tflops", "pct", "gb", "tb",   "gbit", "ghz",
                                          "cycles", "db", "days", "mwh", "ratio", "day", "mw"};
const std::set<std::string> kUnitless = {
    "schema_version", "chips", "tp", "pp", "dp", "cp", "ep", "vpp", "engines", "decode_engines", "micro_batch",
    "micro_batches", "global_batch", "seq_len", "max_num_seqs", "max_batched_tokens", "static_batch",
    "block_size", "compiled_seq_len", "prefill_chips", "draft_len", "in_len", "out_len", "concurrency", "seed", "requests",
    "preemptions", "timed_out_requests", "warmup_requests", "events", "plans_evaluated", "plans_pruned", "tokens_per_step", "train_tokens",
    "kv_tokens_per_engine", "state_sequences_per_engine", "batch", "n", "ok", "unsupported", "errors", "acceptance", "kv_utilisation",
    "mean_kv_utilisation", "mean_batch_per_engine", "measured", "predicted", "predicted_low", "predicted_high", "cv_predicted", "stage_layers",
    // train at scale (docs/scale.md): fractions in [0, 1], counts, the PUE
    "goodput_fraction", "failure_goodput_fraction", "spare_available_fraction", "probability", "spares", "runs",
    "failures_mean", "pue", "largest_useful_chips", "stage",
    "straggler_stage", "max_global_batch_tokens", "lora_rank", "mtp_layers",
    // trust (report/trust_report.h): rows behind a band, log residuals (dimensionless)
    "band_rows", "log_residual_p10", "log_residual_p90", "sources", "log_spread", "cv_band_rows", "beyond_context_rows",
    // catalog: counts and ratios of the hardware
    "chips_per_node", "chips_per_domain", "max_chips", "size", "shape", "tiers", "oversubscription", "cores_per_chip",
    "pe_rows", "pe_cols", "tensor_rate_multiplier", "psum_free_dim", "vector_lanes_bf16", "scalar_lanes_bf16",
    "vector_lanes_fp32", "scalar_lanes_fp32",
    "sm_count", "tensor_tile_m", "tensor_tile_n",
    // model: shape dimensions and parameter counts
    "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab", "max_position", "sliding_window", "experts",
    "experts_per_token", "expert_ffn", "shared_experts", "moe_layers", "q_lora_rank", "kv_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "params_total", "params_active", "params_embedding",
    "params_lm_head", "params_matmul_active", "params_unquantized", "context",
    // model: a hybrid's Mamba-2 mixer (docs/models.md, Hybrid models)
    "mamba_layers", "attention_layers", "mlp_layers", "state", "groups", "conv_kernel", "chunk",
    "linear_attention_layers", "key_heads", "value_heads", "key_dim", "value_dim", "mamba_version", "dt_rank",
    // model: DeepSeek Sparse Attention (docs/models.md, Sparse attention)
    "topk", "index_heads", "index_head_dim",
    // model: Nemotron-NAS layers of different shapes (docs/models.md, Heterogeneous layers)
    "attention_mlp_layers", "attention_only_layers", "mlp_only_layers", "linear_only_layers",
    "linear_attention_replacements", "linear_mlp_replacements", "kv_heads_min", "kv_heads_max", "ffn_min", "ffn_max", "params",
    // collective and demo
    "bus_factor", "replicas", "train_chips", "serve_chips", "serve_tp", "serve_pp",
    // mx: tensor shapes and errors in the tensor's own unit, fractions, bits per element
    "axis", "blocks", "scale_shape", "elements", "rmse", "max_abs_error", "max_rel_error", "tensor_scale",
    "saturated_fraction", "flushed_to_zero_fraction", "bits_per_element", "m", "k", "n",
    // sweep: a point's number
    "index",
    // NVLink Fusion (docs/fusion.md): fractions of time in [0, 1], counts
    "utilisation", "idle_fraction", "bubble_fraction", "stages", "transfers",
    // mixed training, interleaved across the kinds: layers per chunk, boundary crossings
    "chunk_layers", "crossings_per_micro_batch",
    // MoE: the busiest expert-parallel rank's tokens over the mean (a ratio)
    "moe_load_imbalance", "moe_capacity_factor", "expert_tp",
    // prefix caching and trace-stats (docs/json.md): token and block counts
    "prefix_cache", "caches", "rows_with_prefix_hashes", "prompt_tokens", "output_tokens", "distinct_blocks",
    "sessions", "rows_in_sessions", "sessions_ended_at_context", "sessions_without_turns"};
// Counts among the unitless names: printed as integers.
const std::set<std::string> kCounts = {"chips", "tp", "pp", "dp", "requests", "events", "tokens_per_step",
                                       "spares", "runs", "largest_useful_chips",
                                       "train_tokens", "n", "ok", "preemptions", "timed_out_requests", "warmup_requests", "index",
                                       "stages", "transfers", "chunk_layers", "crossings_per_micro_batch", "expert_tp",
                                       "rows_with_prefix_hashes", "prompt_tokens", "output_tokens", "distinct_blocks",
                                       "sessions", "rows_in_sessions", "sessions_ended_at_context", "sessions_without_turns"};

bool has_unit_word(const std::string& key) {
  std::stringstream ss(key);
  std::string word;
  while (std::getline(ss, word, '_'))
    if (kUnitWords.count(word)) return true;
  return false;
}

void check(const Json& j, const std::string& key, bool unit_above, const std::string& where,
           std::vector<std::string>& bad) {
  // An object named by a unit, or by a documented unitless name (tensor_rate_multiplier), covers its members.
  const bool unit_here = unit_above || has_unit_word(key) || (j.is_object() && kUnitless.count(key));
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) check(v, k, unit_here, where + "." + k, bad);
  } else if (j.is_array()) {
    for (const auto& v : j) check(v, key, unit_here, where + "[]", bad);
  } else if (j.is_number()) {
    if (!unit_here && !kUnitless.count(key)) bad.push_back(where + " (no unit, not a documented count/ratio)");
    if (kCounts.count(key) && !j.is_number_integer()) bad.push_back(where + " (a count printed as a float)");
  }
}

struct Command {
  const char* name;
  std::string args;
};

class JsonConvention : public ::testing::TestWithParam<Command> {};

// The envelope, the units and the counts of one whole document.
void expect_convention(const Json& j) {
  EXPECT_EQ(j.value("schema_version", 0), 1);
  EXPECT_TRUE(j.contains("command"));
  EXPECT_TRUE(j.contains("inputs") && j["inputs"].is_object());
  EXPECT_TRUE(j.contains("xpusim_version") && j["xpusim_version"].is_string());
  for (const char* digest : {"catalog_digest", "calibration_digest"})
    EXPECT_TRUE(j.contains(digest) && (j[digest].is_null() || j[digest].get<std::string>().rfind("fnv1a64:", 0) == 0))
        << digest;
  std::vector<std::string> bad;
  for (const auto& [k, v] : j.items())
    if (k != "inputs") check(v, k, false, k, bad);
  EXPECT_TRUE(bad.empty()) << [&] {
    std::string s;
    for (const auto& b : bad) s += "\n  " + b;
    return s;
  }();
}

TEST_P(JsonConvention, EnvelopeUnitsAndCounts) {
  const auto r = run_cli(xpusim::test::with_npy_fixtures(GetParam().args));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j;
  ASSERT_NO_THROW(j = Json::parse(r.out)) << r.out.substr(0, 400);
  expect_convention(j);
}

// The demo's document, run once (the demo is the suite's longest command): the convention, and
// what it holds. Trn3 beside GB300 at each chip count, where a million Trn3 chips have no plan
// within the batch; the trace section has each system with the prefix cache off, then on, and on,
// prompts hit and the first tokens come no later.
TEST(JsonConvention, DemoDocumentHoldsEverySection) {
  const auto r = run_cli("demo --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json doc;
  ASSERT_NO_THROW(doc = Json::parse(r.out)) << r.out.substr(0, 400);
  expect_convention(doc);
  ASSERT_TRUE(doc.contains("scale"));
  int found = 0, million = 0;
  for (const auto& p : doc["scale"]) {
    found += p["found"].get<bool>() ? 1 : 0;
    if (p["chips"] == 1048464) {
      ++million;
      EXPECT_FALSE(p["found"].get<bool>());
    }
  }
  EXPECT_EQ(million, 1);
  EXPECT_EQ(found, 7);
  ASSERT_TRUE(doc.contains("trace"));
  ASSERT_EQ(doc["trace"].size(), 6u);  // per system: cache off, on, on with a host tier behind it
  for (size_t i = 0; i < 6; i += 3) {
    const auto& off = doc["trace"][i];
    const auto& on = doc["trace"][i + 1];
    const auto& host = doc["trace"][i + 2];
    EXPECT_EQ(off["system"], on["system"]);
    EXPECT_EQ(host["system"], on["system"]);
    EXPECT_EQ(host["kv_host_gib_per_engine"], 400);
    EXPECT_GE(host["token_hit_ratio"].get<double>(), on["token_hit_ratio"].get<double>()) << host["system"];
    EXPECT_FALSE(off["prefix_cache"].get<bool>());
    EXPECT_EQ(off["token_hit_ratio"], 0.0);
    EXPECT_GT(on["token_hit_ratio"].get<double>(), 0.05) << on["system"];
    EXPECT_LE(on["ttft_p90_ms"].get<double>(), off["ttft_p90_ms"].get<double>()) << on["system"];
    EXPECT_EQ(on["requests"], 2000);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Commands, JsonConvention,
    ::testing::Values(
        Command{"train", "train --system trn2-48xl --model llama3.1-8b --chips 16 --tp 4 --pp 1 --train-tokens 1e12 --json"},
        Command{"train_goodput", "train --system trn2-48xl --model llama3.1-8b --chips 16 --tp 4 --pp 1 --train-tokens 1e10 "
                                 "--runs 5 --spares 1 --pue 1.2 --json"},
        Command{"train_scaling", "train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --scaling 8..32 --json"},
        Command{"train_deadline", "train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --train-tokens 2e12 "
                                  "--deadline 10d --json"},
        Command{"serve", "serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 5 --requests 100 "
                         "--in-len 256 --out-len 32 --json"},
        Command{"serve_static_shapes", "serve --system trn2-48xl --model llama3.1-8b --framework neuron-nxdi --tp 1 "
                                       "--chips 1 --concurrency 4 --requests 8 --in-len 1500 --out-len 16 "
                                       "--compiled-seq-len 4096 --json"},
        Command{"serve_search", "serve --search --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 2 "
                                "--requests 100 --in-len 256 --out-len 32 --json"},
        Command{"serve_hetero", "serve --model llama3.1-8b --precision fp8 --tp 2 --prefill-system gb300-fusion-mixed-rack "
                                "--prefill-chips 2 --decode-system trn4-fusion-mixed-rack --decode-chips 2 --rate 5 "
                                "--requests 50 --in-len 512 --out-len 16 --json"},
        Command{"train_straggler", "train --system h100-sxm-dgx --model llama3.1-8b --chips 16 --tp 1 --pp 2 "
                                   "--seq-len 2048 --straggler 1.2 --json"},
        Command{"train_mix", "train --model llama3.1-8b --tp 2 --global-batch 8 --seq-len 2048 "
                             "--mix trn4-fusion-mixed-rack:4,gb300-fusion-mixed-rack:4 --json"},
        Command{"validate", "validate --json"},
        Command{"validate_explain", "validate --json --explain"},
        Command{"catalog_list", "catalog list --json"},
        Command{"catalog_show_system", "catalog show trn3-ultraserver-gen2 --json"},
        Command{"catalog_show_chip", "catalog show trainium2 --json"},
        Command{"model_list", "model list --json"},
        Command{"model_show", "model show deepseek-v3 --json"},
        Command{"model_show_hybrid", "model show nemotron-h-8b --json"},
        Command{"model_show_deltanet", "model show qwen3-next-80b-a3b --json"},
        Command{"model_show_mamba1", "model show jamba-1.5-mini --json"},
        Command{"model_show_ssm", "model show mamba-2.8b --json"},
        Command{"model_show_sparse", "model show deepseek-v3.2 --json"},
        Command{"serve_ssm", "serve --system h100-sxm-dgx --model mamba-codestral-7b --chips 2 --prefill-chips 1 "
                             "--requests 32 --in-len 512 --out-len 64 --json"},
        Command{"mx_quantize", "mx quantize --format mxfp8_e4m3 {A} " + testing::TempDir() + "xs_conv_q.npy --json"},
        Command{"mx_stats", "mx stats {A} --json"},
        Command{"mx_gemm", "mx gemm {A} {B} --format mxfp4_e2m1 --json"},
        Command{"calibration_show", "calibration show --json"},
        Command{"claims", "claims --json"},
        Command{"sweep", std::string("sweep ") + XS_TESTDATA_DIR + "/sweeps/train-llama3.1-8b-h100.yaml --json"},
        Command{"collective", "collective --system trn3-ultraserver-gen2 --chips 16 --op all-reduce --bytes 1073741824 "
                              "--json"},
        Command{"trace_stats", std::string("trace-stats ") + XS_TESTDATA_DIR + "/traces/mooncake-synthetic.csv "
                               "--cache-tokens 1000000 --json"},
        Command{"sessions", "sessions --sessions 50 --max-context 2048 --out " + testing::TempDir() + "xs_conv_sessions.csv --json"},
        Command{"serve_prefix_cache", std::string("serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 "
                                                  "--json --arrivals ") + XS_TESTDATA_DIR + "/traces/mooncake-synthetic.csv"}),
    [](const ::testing::TestParamInfo<Command>& command) { return std::string(command.param.name); });

TEST(JsonConvention, InputsEchoTheScenarioShape) {
  const auto r = run_cli("train --system trn2-48xl --model llama3.1-8b --chips 16 --tp 4 --pp 1 --seq-len 4096 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json in = Json::parse(r.out)["inputs"];
  EXPECT_EQ(in["system"], "trn2-48xl");
  EXPECT_EQ(in["chips"], 16);
  EXPECT_EQ(in["plan"]["tp"], 4);
  EXPECT_EQ(in["workload"]["seq_len"], 4096);
  EXPECT_FALSE(in["plan"].contains("dp"));  // unset inputs are left out
}

// Provenance: the digests name the data in use; a calibration override changes the calibration
// digest only, and a command that reads no catalog or calibration prints null.
TEST(JsonConvention, DigestsNameTheDataInUse) {
  const Json shipped = Json::parse(run_cli("calibration show --json").out);
  const std::string override_file = testing::TempDir() + "xs_conv_override.yaml";
  {
    std::ofstream(override_file) << "network:\n  nvlink_efficiency: \"0.5\"\n";
  }
  const auto over = run_cli("calibration show --json --calibration " + override_file);
  ASSERT_EQ(over.exit_code, 0) << over.err;
  EXPECT_NE(Json::parse(over.out)["calibration_digest"], shipped["calibration_digest"]);
  EXPECT_TRUE(shipped["catalog_digest"].is_null());
  const Json collective = Json::parse(
      run_cli("collective --system trn2-ultraserver --chips 8 --op all-gather --bytes 1048576 --json").out);
  EXPECT_TRUE(collective["catalog_digest"].is_string());
  EXPECT_EQ(collective["calibration_digest"], shipped["calibration_digest"]);
  EXPECT_EQ(collective["xpusim_version"], shipped["xpusim_version"]);
}

}  // namespace
