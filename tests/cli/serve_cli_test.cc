#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli_json.h"
#include "cli_runner.h"
#include "../scratch_path.h"

using xpusim::test::run_cli;

TEST(ServeCli, JsonHasUnitsInKeysAndOneDocument) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 5 --requests 200 "
                   "--in-len 512 --out-len 64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"ttft_p50_ms", "tpot_mean_ms", "throughput_tokens_per_s", "e2e_latency_p99_s",
                        "energy_j_per_output_token", "cost_usd_per_million_output_tokens", "timed_out_requests"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["requests"], 200);
}

TEST(ServeCli, TpNotDividingHeadsIsBadInput) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --tp 3 --chips 3");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tp must divide the attention heads"), std::string::npos) << r.err;
}

// A matmul precision the chip lacks (nvfp4 on H100) is exit 2 naming the chip's precisions and
// the way out; with --allow-fallback it runs (fp4 weights, fp8 matmuls) and the JSON says so.
TEST(ServeCli, PrecisionTheChipLacksIsBadInputUnlessFallbackIsAllowed) {
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --concurrency 4 --requests 40 "
                           "--in-len 256 --out-len 32 --json --precision nvfp4";
  auto refused = run_cli(base);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("no nvfp4 peak"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("bf16, fp16, fp8, int8"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--allow-fallback"), std::string::npos) << refused.err;
  auto fell = run_cli(base + " --allow-fallback");
  ASSERT_EQ(fell.exit_code, 0) << fell.err;
  EXPECT_NE(fell.out.find("weights stored nvfp4, matmuls run as fp8 (fallback allowed)"), std::string::npos);
}

TEST(ServeCli, UnknownModelSuggestsClosest) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8c");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("llama3.1-8b"), std::string::npos) << r.err;
}

TEST(ServeCli, ModelThatDoesNotFitExits1WithMemoryBreakdown) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-405b --tp 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("weights"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GiB"), std::string::npos) << r.err;
}

TEST(ServeCli, ScenarioFileRuns) {
  auto r = run_cli("serve --scenario " + xpusim::test::data_dir() +
                   "/scenarios/serve-trn3-llama70b.yaml --requests 500");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("TTFT"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(ServeCli, ScenarioFlagsWinOverTheFile) {
  auto r = run_cli("serve --scenario " + xpusim::test::data_dir() +
                   "/scenarios/serve-trn3-llama70b.yaml --requests 300 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["requests"], 300);
  EXPECT_EQ(j["tp"], 4);  // from the file's plan:
  EXPECT_EQ(j["inputs"]["workload"]["requests"], 300);
  EXPECT_EQ(j["inputs"]["plan"]["max_num_seqs"], 128);
}

TEST(ServeCli, FlatConfigStillRunsWithADeprecationMessage) {
  const std::string file = ::testing::TempDir() + "xs_flat_serve.yaml";
  std::ofstream(file) << "system: h100-sxm-dgx\nmodel: llama3.1-8b\nprecision: fp8\nin_len: 512\nout_len: 64\n"
                         "rate: 5\nrequests: 200\n";
  auto flat = run_cli("serve --config " + file + " --json");
  auto flags = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 5 --requests 200 "
                       "--in-len 512 --out-len 64 --json");
  ASSERT_EQ(flat.exit_code, 0) << flat.err;
  EXPECT_NE(flat.err.find("--config is deprecated"), std::string::npos) << flat.err;
  const auto a = nlohmann::json::parse(flat.out), b = nlohmann::json::parse(flags.out);
  EXPECT_EQ(a["ttft_p90_ms"], b["ttft_p90_ms"]);
  EXPECT_EQ(a["throughput_tokens_per_s"], b["throughput_tokens_per_s"]);
}

TEST(ServeCli, ArrivalsFileIsReplayed) {
  const std::string file = ::testing::TempDir() + "xs_arrivals.csv";
  std::ofstream(file) << "arrival_s,in_len,out_len\n0,128,16\n0.5,256,32\n1.0,64,8\n";
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --json ";
  auto arrivals = run_cli(base + "--arrivals " + file);
  ASSERT_EQ(arrivals.exit_code, 0) << arrivals.err;
  EXPECT_EQ(nlohmann::json::parse(arrivals.out)["requests"], 3);
  EXPECT_TRUE(arrivals.err.empty()) << arrivals.err;
}

/// The Mooncake conversation trace's header and first 300 requests, written to `name` in the test's
/// temporary directory; returns the path.
std::string conversation_head(const std::string& name) {
  const std::string file = ::testing::TempDir() + name;
  std::ifstream in(xpusim::test::data_dir() + "/traces/mooncake-conversation.csv");
  std::ofstream out(file);
  std::string line;
  for (int i = 0; i < 301 && std::getline(in, line); ++i) out << line << "\n";
  return file;
}

/// The distinct block ids among the whole blocks of an arrivals file's prompts (the first
/// in_len / block of each row's prefix_hashes).
long long distinct_whole_blocks(const std::string& file, long long block) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);  // header
  std::set<std::string> ids;
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string arrival, in_len, out_len, hashes;
    std::getline(row, arrival, ',');
    std::getline(row, in_len, ',');
    std::getline(row, out_len, ',');
    std::getline(row, hashes);
    std::stringstream list(hashes);
    std::string id;
    for (long long k = 0; k < std::stoll(in_len) / block && list >> id; ++k) ids.insert(id);
  }
  return static_cast<long long>(ids.size());
}

/// The JSON document of a serve command that must succeed (a failure is reported with its
/// stderr, and the document is then empty).
nlohmann::json serve_json(const std::string& args) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// The Mooncake conversation trace's first 300 requests (data/traces): the framework's prefix cache
// (vLLM's, on by default) serves part of every prompt that shares a leading block with an
// earlier one, the prefill work drops and TTFT with it; off, no prompt hits and the JSON says
// so with null.
TEST(ServeCli, PrefixCacheServesTheTracesSharedPromptBlocks) {
  const std::string file = conversation_head("xs_mooncake300.csv");
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-70b --chips 8 --tp 8 --precision fp8 "
                           "--framework vllm --json --arrivals " + file;
  auto on = run_cli(base);
  auto off = run_cli(base + " --prefix-cache off");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  ASSERT_EQ(off.exit_code, 0) << off.err;
  const auto a = nlohmann::json::parse(on.out), b = nlohmann::json::parse(off.out);
  ASSERT_TRUE(a["prefix_cache"].is_object());
  EXPECT_TRUE(b["prefix_cache"].is_null());
  const auto& pc = a["prefix_cache"];
  EXPECT_EQ(pc["requests_looked_up"], 300);
  EXPECT_EQ(pc["block_tokens"], 512);
  EXPECT_GT(pc["token_hit_ratio"].get<double>(), 0.05);
  EXPECT_LE(pc["blocks_hit"].get<long long>(), pc["blocks"].get<long long>());
  EXPECT_LT(a["ttft_mean_ms"].get<double>(), b["ttft_mean_ms"].get<double>());
  // A cache of one block's tokens holds one block: it can serve no prompt's two leading blocks.
  auto tiny = run_cli(base + " --prefix-cache-tokens 512");
  ASSERT_EQ(tiny.exit_code, 0) << tiny.err;
  const auto t = nlohmann::json::parse(tiny.out)["prefix_cache"];
  EXPECT_LE(t["blocks_hit"].get<long long>(), t["requests_hit"].get<long long>());
  EXPECT_EQ(t["capacity_tokens_per_engine"], 512);
}

// KV offload to host memory (--kv-tier host:SIZE): with a prefix cache too small for the trace,
// the blocks it evicts wait in host memory, so more prompt tokens come from a cache and fewer are
// prefilled; each one found there loads back at the host link's rate. The load time is derived
// from the tokens loaded, the KV bytes per token per chip and the catalog's 64 GB/s PCIe 5.0 x16
// at serving.kv_tiers.host_load_efficiency 0.8. Without a trace it has no effect, and says so.
TEST(ServeCli, HostTierTakesEvictedBlocksAndLoadsThemBack) {
  const std::string file = conversation_head("xs_mooncake300_tier.csv");
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --framework vllm --json "
                           "--prefix-cache-tokens 20000 --arrivals " + file;
  auto a = serve_json(base), b = serve_json(base + " --kv-tier host:64GiB");
  EXPECT_FALSE(a["prefix_cache"].contains("host_tier"));
  const auto& tier = b["prefix_cache"]["host_tier"];
  const long long loaded = tier["tokens_loaded"].get<long long>();
  ASSERT_GT(loaded, 0) << b["prefix_cache"].dump();
  // More is served from a cache (the HBM hits themselves shift a little: loaded blocks re-enter
  // the HBM cache and change what it evicts next), and the loads are part of what is served.
  EXPECT_GT(b["prefix_cache"]["prefill_tokens_saved"].get<long long>(), a["prefix_cache"]["prefill_tokens_saved"].get<long long>());
  EXPECT_LE(loaded, b["prefix_cache"]["prefill_tokens_saved"].get<long long>());
  // Llama-3.1-8B: 32 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes = 128 KiB per token on one chip.
  const double kv_per_token = 32.0 * 8 * 128 * 2 * 2;
  EXPECT_NEAR(tier["load_time_s"].get<double>(), static_cast<double>(loaded) * kv_per_token / (64e9 * 0.8),
              1e-9 * static_cast<double>(loaded));
  EXPECT_EQ(tier["capacity_tokens_per_engine"].get<long long>(), static_cast<long long>(64.0 * (1LL << 30) / kv_per_token));
  EXPECT_EQ(b["inputs"]["plan"]["kv_tier"], "host:64GiB");
  const auto plain = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --rate 1 --requests 20 --kv-tier host:1GiB");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("the offload tiers have no effect here"), std::string::npos) << plain.out;
  const auto bad = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --rate 1 --kv-tier remote:4TiB");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--kv-pool"), std::string::npos) << bad.err;
  for (const char* wrong : {"host:1GiB,host:2GiB", "ssd", "ssd:0GiB", "host:1GiB,disk:1TiB", ",", "host:1GiB,"}) {
    const auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --rate 1 --kv-tier '" +
                           std::string(wrong) + "'");
    EXPECT_EQ(r.exit_code, 2) << wrong;
    EXPECT_NE(r.err.find("kv_tier"), std::string::npos) << wrong << ": " << r.err;
  }
}

// KV offload to local SSD (--kv-tier host:SIZE,ssd:SIZE): below a host tier too small for the
// trace, the SSD keeps what the host evicts, so as many prompt tokens come from a cache as with a
// host tier large enough for all of them; the SSD's share loads at the node's NVMe read rate
// (the catalog's local_nvme_read_bandwidth_per_node, 52 GB/s on an H100 DGX, x
// serving.kv_tiers.ssd_load_efficiency 0.7), the deployment's one chip the node's only user.
// Alone, the SSD takes what the prefix cache evicts.
TEST(ServeCli, SsdTierTakesWhatTheTierAboveEvicts) {
  const std::string file = conversation_head("xs_mooncake300_ssd.csv");
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --framework vllm --json "
                           "--prefix-cache-tokens 20000 --arrivals " + file + " --kv-tier ";
  const auto big_host = run_cli(base + "host:64GiB"), small_host = run_cli(base + "host:2GiB");
  const auto both = run_cli(base + "host:2GiB,ssd:64GiB"), ssd_only = run_cli(base + "ssd:64GiB");
  for (const auto* r : {&big_host, &small_host, &both, &ssd_only}) ASSERT_EQ(r->exit_code, 0) << r->err;
  const auto saved = [](const auto& r) -> long long {
    const nlohmann::json j = nlohmann::json::parse(r.out);
    return j["prefix_cache"]["prefill_tokens_saved"];
  };
  EXPECT_LT(saved(small_host), saved(big_host));
  EXPECT_EQ(saved(both), saved(big_host));
  EXPECT_EQ(saved(ssd_only), saved(big_host));
  const auto pc = nlohmann::json::parse(both.out)["prefix_cache"];
  ASSERT_TRUE(pc.contains("host_tier") && pc.contains("ssd_tier")) << pc.dump();
  const long long from_ssd = pc["ssd_tier"]["tokens_loaded"].get<long long>();
  ASSERT_GT(from_ssd, 0);
  const double kv_per_token = 32.0 * 8 * 128 * 2 * 2;  // Llama-3.1-8B bf16, one chip
  EXPECT_NEAR(pc["ssd_tier"]["load_time_s"].get<double>(), static_cast<double>(from_ssd) * kv_per_token / (52e9 * 0.7),
              1e-9 * static_cast<double>(from_ssd));
  EXPECT_EQ(pc["ssd_tier"]["capacity_tokens_per_engine"].get<long long>(), static_cast<long long>(64.0 * (1LL << 30) / kv_per_token));
  const auto alone = nlohmann::json::parse(ssd_only.out)["prefix_cache"];
  EXPECT_FALSE(alone.contains("host_tier"));
  EXPECT_GT(alone["ssd_tier"]["tokens_loaded"].get<long long>(), from_ssd);
}

// KV offload to a remote pool (--kv-pool remote:SIZE): two engines, each with a small HBM cache,
// share one pool every finished prompt is written to, so an engine finds the prompts the other
// one prefilled: more prompt tokens come from a cache than from the engines' own caches. A hit
// loads over the scale-out network: the DGX's 400 Gb/s InfiniBand NDR per GPU (50 GB/s each way)
// x serving.kv_tiers.remote_load_efficiency 0.6, plus one start-up latency per request loaded.
TEST(ServeCli, RemotePoolSharesPromptsAcrossEngines) {
  const std::string file = conversation_head("xs_mooncake300_pool.csv");
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 2 --tp 1 --framework vllm --json "
                           "--prefix-cache-tokens 20000 --arrivals " + file;
  auto own = serve_json(base), pooled = serve_json(base + " --kv-pool remote:1TiB");
  auto a = own["prefix_cache"], b = pooled["prefix_cache"];
  EXPECT_FALSE(a.contains("remote_pool"));
  EXPECT_GT(b["prefill_tokens_saved"].get<long long>(), a["prefill_tokens_saved"].get<long long>());
  const auto& pool = b["remote_pool"];
  const long long loaded = pool["tokens_loaded"].get<long long>();
  ASSERT_GT(loaded, 0) << b.dump();
  const double kv_per_token = 32.0 * 8 * 128 * 2 * 2;  // Llama-3.1-8B bf16, one chip per engine
  const double transfer = static_cast<double>(loaded) * kv_per_token / (50e9 * 0.6);
  const double load = pool["load_time_s"].get<double>();
  EXPECT_GE(load, transfer);
  EXPECT_LE(load, transfer + b["requests_looked_up"].get<double>() * 10e-6);  // a few us of start-up each
  EXPECT_EQ(pool["capacity_tokens"].get<long long>(), static_cast<long long>(1024.0 * (1LL << 30) / kv_per_token));
  EXPECT_EQ(pooled["inputs"]["plan"]["kv_pool"], "remote:1TiB");
  // The pool receives each distinct whole block of the prompts once (a block it holds is not sent
  // again), each over the engine's link at the load's rate, outbound.
  const long long distinct = distinct_whole_blocks(file, 512);
  EXPECT_EQ(pool["blocks_written"].get<long long>(), distinct);
  EXPECT_EQ(pool["tokens_written"].get<long long>(), distinct * 512);
  EXPECT_NEAR(pool["write_time_s"].get<double>(), static_cast<double>(distinct * 512) * kv_per_token / (50e9 * 0.6), 1e-9);
  for (const char* wrong : {"host:1TiB", "remote", "remote:0B", "remote:lots"}) {
    const auto r = run_cli(base + " --kv-pool " + wrong);
    EXPECT_EQ(r.exit_code, 2) << wrong;
    EXPECT_NE(r.err.find("kv_pool"), std::string::npos) << wrong << ": " << r.err;
  }
}

// Mooncake FAST'25 section 5 (data/traces/README.md, "Published effects"): with its global KV pool
// the end-to-end replays on 16 nodes spent 36 % (conversation) and 64 % (synthetic) less prefill GPU
// time than vLLM without prefix caching. The same replay of the whole traces: 16 nodes of 8
// A100-80GB, 8 prefill and 8 decode engines of TP 8 (vLLM), every prompt's blocks written through to
// one remote pool, against the cache off. The prefill pool's busy time drops by the cached prompt
// tokens' share less the attention those tokens' successors still pay over them, so by a little
// less than the token hit ratio, and within 3 points of the published figures.
TEST(ServeCli, MooncakeReplaySavesThePublishedPrefillTime) {
  const std::string base = "serve --system a100-80g-dgx --model llama3.1-70b --chips 128 --tp 8 --framework vllm "
                           "--prefill-chips 64 --timeout 3600s --json --arrivals " + xpusim::test::data_dir() + "/traces/mooncake-";
  const std::pair<const char*, double> published[] = {{"conversation", 0.36}, {"synthetic", 0.64}};
  for (const auto& [trace, saved_published] : published) {
    const auto off = serve_json(base + trace + ".csv --prefix-cache off");
    const auto pooled = serve_json(base + trace + ".csv --kv-pool remote:100TiB");
    ASSERT_TRUE(off.contains("prefill_engine_busy_s") && pooled.contains("prefix_cache")) << trace;
    const double saved = 1 - pooled["prefill_engine_busy_s"].get<double>() / off["prefill_engine_busy_s"].get<double>();
    EXPECT_NEAR(saved, saved_published, 0.03) << trace;
    EXPECT_LT(saved, pooled["prefix_cache"]["token_hit_ratio"].get<double>()) << trace;
    EXPECT_EQ(off["timed_out_requests"], 0) << trace;
  }
}

// A per-engine offload tier is bounded by the node: the deployment's engines on one node share its
// host memory (catalog host_memory_per_node, 2 TiB on an H100 DGX) and drives (local_nvme_per_node,
// 30.72 TB). Eight one-chip engines on one node have 256 GiB of host memory each; one engine of a
// one-chip deployment has the whole node; an engine of 16 chips spans two nodes.
TEST(ServeCli, AnOffloadTierBeyondTheNodeIsRefused) {
  const std::string file = conversation_head("xs_mooncake300_bound.csv");
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --framework vllm --arrivals " + file;
  EXPECT_EQ(run_cli(base + " --chips 8 --tp 1 --kv-tier host:256GiB").exit_code, 0);
  const auto over = run_cli(base + " --chips 8 --tp 1 --kv-tier host:257GiB");
  EXPECT_NE(over.exit_code, 0);
  for (const char* part : {"--kv-tier", "host tier of 257.0 GiB", "2048.0 GiB", "host_memory_per_node", "at most 256.0 GiB"})
    EXPECT_NE(over.err.find(part), std::string::npos) << part << ": " << over.err;
  EXPECT_EQ(run_cli(base + " --chips 1 --kv-tier host:2048GiB").exit_code, 0);
  EXPECT_NE(run_cli(base + " --chips 1 --kv-tier host:2049GiB").exit_code, 0);
  EXPECT_EQ(run_cli(base + " --chips 16 --tp 16 --kv-tier host:4096GiB").exit_code, 0);
  const auto drives = run_cli(base + " --chips 8 --tp 1 --kv-tier ssd:4TiB");
  EXPECT_NE(drives.exit_code, 0);
  EXPECT_NE(drives.err.find("local_nvme_per_node"), std::string::npos) << drives.err;
}

// A block that two offload tiers hold comes off the faster one. One engine with a 20,000-token
// HBM cache: what it evicts goes to a local SSD and every prompt is written through to a remote
// pool, both large enough for every prompt of the trace, so both hold every block the HBM cache
// does not. On an H100 DGX whose one chip has the node's drives to itself, the SSD (52 GB/s x 0.7
// = 36.4 GB/s) is faster than the pool (50 GB/s x 0.6 per chip = 30 GB/s) and serves them all;
// with the SSD at efficiency 0.05 (2.6 GB/s) and the pool at 1 (50 GB/s) the pool serves them.
TEST(ServeCli, TheFasterOfTwoTiersServesABlockBothHold) {
  const std::string file = conversation_head("xs_mooncake300_fastest.csv");
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --framework vllm --json "
                           "--prefix-cache-tokens 20000 --arrivals " + file + " --kv-tier ssd:1TiB";
  auto ssd = serve_json(base), both = serve_json(base + " --kv-pool remote:1TiB");
  const long long from_ssd = ssd["prefix_cache"]["ssd_tier"]["tokens_loaded"].get<long long>();
  ASSERT_GT(from_ssd, 0);
  EXPECT_EQ(both["prefix_cache"]["prefill_tokens_saved"], ssd["prefix_cache"]["prefill_tokens_saved"]);
  // What the HBM cache holds at each lookup shifts a little with the load times (3 of 435 blocks
  // here): the offload tiers serve the rest, all of it from the faster one.
  const double near = 0.05 * static_cast<double>(from_ssd);
  EXPECT_NEAR(both["prefix_cache"]["ssd_tier"]["tokens_loaded"].get<double>(), static_cast<double>(from_ssd), near);
  EXPECT_EQ(both["prefix_cache"]["remote_pool"]["tokens_loaded"].get<long long>(), 0);
  const std::string slow_ssd = ::testing::TempDir() + "xs_slow_ssd.yaml";
  std::ofstream(slow_ssd) << "serving:\n  kv_tiers:\n    ssd_load_efficiency: \"0.05\"\n    remote_load_efficiency: \"1\"\n";
  auto flipped = serve_json(base + " --kv-pool remote:1TiB --calibration " + slow_ssd);
  EXPECT_NEAR(flipped["prefix_cache"]["remote_pool"]["tokens_loaded"].get<double>(), static_cast<double>(from_ssd), near);
  EXPECT_EQ(flipped["prefix_cache"]["ssd_tier"]["tokens_loaded"].get<long long>(), 0);
}

// A short run is judged against the rate its own arrivals offered (issue 45 item 4: a search
// that never misses a plan): 60 Poisson requests at 1 req/s may span 70 s or more, and one chip
// that serves them at 28 ms TPOT sustains that rate; the search used to answer "no plan".
TEST(ServeCli, SearchOnAShortRunJudgesTheRateItsArrivalsOffered) {
  const auto r = run_cli("serve --search --system trn2-48xl --model llama3.1-8b --rate 1 --requests 60 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out)["results"][0];
  ASSERT_TRUE(best["found"].get<bool>()) << best["best"].dump();
  EXPECT_EQ(best["best"]["chips"], 1);
}

// A trace cut to a window of its own clock, thinned to N rows evenly spaced, or sped up.
TEST(ServeCli, ArrivalsAreWindowedSampledAndSpedUp) {
  const std::string file = ::testing::TempDir() + "xs_arrivals_ten.csv";
  {
    std::ofstream out(file);
    out << "arrival_s,in_len,out_len\n";
    for (int i = 0; i < 10; ++i) out << i << ",128,16\n";
  }
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --json --arrivals " + file;
  auto requests = [&](const std::string& extra) {
    const auto r = run_cli(base + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << extra << ": " << r.err;
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  };
  EXPECT_EQ(requests("--arrivals-window 2..5")["requests"], 3);  // rows at 2, 3, 4
  EXPECT_EQ(requests("--arrivals-sample 5")["requests"], 5);
  const auto whole = requests(""), fast = requests("--arrivals-speedup 10");
  EXPECT_EQ(fast["requests"], 10);
  EXPECT_LT(fast["duration_s"].get<double>(), 0.5 * whole["duration_s"].get<double>());
  EXPECT_EQ(fast["inputs"]["workload"]["arrivals_speedup"], 10);
  const auto none = run_cli(base + " --arrivals-window 20..30");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no request arrives in the window"), std::string::npos) << none.err;
}

// The search serves a trace: its rate is the trace's, each slice a round-robin share of its
// requests; the plan's command replays the whole trace with the same cuts.
TEST(ServeCli, SearchServesATrace) {
  const std::string trace = xpusim::test::data_dir() + "/traces/mooncake-conversation.csv";
  const std::string base = "serve --search --system h100-sxm-dgx --model llama3.1-70b --precision fp8 --framework vllm "
                           "--ttft-slo '10 s' --tpot-slo '100 ms' --json --arrivals " + trace + " --arrivals-window 0..300";
  const auto r = run_cli(base);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto result = nlohmann::json::parse(r.out)["results"][0];
  EXPECT_TRUE(result["best"]["meets_slo"].get<bool>());
  const std::string cmd = result["command"].get<std::string>();
  EXPECT_NE(cmd.find("--arrivals " + trace + " --arrivals-window 0..300"), std::string::npos) << cmd;
  EXPECT_EQ(cmd.find("--rate"), std::string::npos) << cmd;
  const auto both = run_cli(base + " --rate 3");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("rate: an arrivals file sets the rate"), std::string::npos) << both.err;
}

// A search on a trace whose prompts share prefixes puts the same search without the prefix cache
// beside it; a cache-off search has nothing to contrast.
TEST(ServeCli, SearchOnATraceWithPrefixesShowsTheSearchWithoutTheCache) {
  const std::string file = conversation_head("xs_search_prefix.csv");
  const std::string base = "serve --search --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --arrivals " + file;
  auto text = run_cli(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("the same trace without the prefix cache"), std::string::npos) << text.out;
  auto json = run_cli(base + " --json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["without_prefix_cache"].size(), 1u);
  const auto& with = j["results"][0]["best"];
  const auto& without = j["without_prefix_cache"][0]["best"];
  EXPECT_GE(without["chips"].get<long long>(), with["chips"].get<long long>());
  EXPECT_GE(without["cost_usd_per_million_output_tokens"].get<double>(), with["cost_usd_per_million_output_tokens"].get<double>());
  auto off = run_cli(base + " --prefix-cache off --json");
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_FALSE(nlohmann::json::parse(off.out).contains("without_prefix_cache"));
  EXPECT_FALSE(j.contains("without_offload_tier"));
}

// With offload tiers the same search also runs without each of them (issue 47 item 5: chips and
// $/M output tokens with and without each tier), each a search of its own that finds a plan.
TEST(ServeCli, SearchWithOffloadTiersShowsTheSearchWithoutEach) {
  const std::string file = conversation_head("xs_search_tiers.csv");
  const std::string base = "serve --search --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --framework vllm "
                           "--prefix-cache-tokens 20000 --kv-tier host:64GiB,ssd:1TiB --kv-pool remote:10TiB --arrivals " + file;
  auto text = run_cli(base);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* column : {"no prefix cache", "no host tier", "no ssd tier", "no remote pool"})
    EXPECT_NE(text.out.find(column), std::string::npos) << column << ": " << text.out;
  const auto j = serve_json(base + " --json");
  ASSERT_TRUE(j.contains("without_offload_tier")) << j.dump();
  const auto& tiers = j["without_offload_tier"];
  EXPECT_EQ(tiers.size(), 3u);
  for (const char* tier : {"host", "ssd", "remote"}) {
    ASSERT_EQ(tiers[tier].size(), 1u) << tier;
    EXPECT_TRUE(tiers[tier][0]["found"].get<bool>()) << tier;
  }
}

// trace-stats reads the trace alone: no catalog, no engine.
TEST(TraceStatsCli, ReplaysTheCachesAskedBesideAnUnboundedOne) {
  auto r = run_cli("trace-stats " + xpusim::test::data_dir() + "/traces/mooncake-synthetic.csv --cache-tokens 3000000 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["requests"], 3993);
  ASSERT_EQ(j["caches"].size(), 2u);
  EXPECT_TRUE(j["caches"][0]["capacity_tokens"].is_null());
  EXPECT_EQ(j["caches"][1]["capacity_tokens"], 3000000);
  EXPECT_GT(j["caches"][0]["block_hit_ratio"].get<double>(), j["caches"][1]["block_hit_ratio"].get<double>());
}

// --trace writes the serving timeline: Chrome trace JSON with one event per engine step and
// the three phases of every request (a small run records all of them).
TEST(ServeCli, TraceWritesATimelineWithEveryStepAndRequestPhase) {
  const std::string file = ::testing::TempDir() + "xs_serve_trace.json";
  std::remove(file.c_str());
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --requests 20 --in-len 256 "
                   "--out-len 16 --json --trace " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(file);
  ASSERT_TRUE(in.good()) << file;
  const auto trace = nlohmann::json::parse(in);
  long long steps = 0, queued = 0, prefill = 0, decode = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "step") {
      ++steps;
      EXPECT_TRUE(e["args"].contains("decode_seqs") && e["args"].contains("prefill_tokens")) << e.dump();
    }
    if (e["cat"] == "request") {
      queued += e["name"] == "queued";
      prefill += e["name"] == "prefill";
      decode += e["name"] == "decode";
    }
  }
  EXPECT_EQ(steps, trace["otherData"]["steps_total"].get<long long>());
  EXPECT_GT(steps, 0);
  EXPECT_EQ(queued, 20);
  EXPECT_EQ(prefill, 20);
  EXPECT_EQ(decode, 20);
}

TEST(ServeCli, CompareListsTheThreeSystems) {
  auto r = run_cli("serve --compare --model llama3.1-8b --precision fp8 --rate 5 --requests 200 --in-len 512 --out-len 128");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* s : {"trn3-ultraserver-gen2", "trn2-ultraserver", "gb300-nvl72"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

// 5 requests/s of an 8B model fit one chip of each system (a GB300 serves one in 0.3 s). The
// sustained-rate test compares with the rate the drawn arrivals offered, so a finite Poisson
// sample a few percent under the nominal rate does not push the search to 200,000 chips.
TEST(ServeCli, CompareFindsOneChipForALightLoad) {
  auto r = run_cli("serve --compare --model llama3.1-8b --precision fp8 --rate 5 --requests 200 --in-len 512 "
                   "--out-len 128 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  for (const auto& sys : doc["results"]) {
    ASSERT_TRUE(sys["found"].get<bool>()) << sys["system"];
    EXPECT_LE(sys["best"]["chips"].get<long long>(), 2) << sys["system"];
  }
}

// Arrivals spanning more than 30 days (requests / rate, or a trace's last arrival) are refused
// by name: the integer clock would otherwise wrap.
TEST(ServeCli, ArrivalSpanBeyondThirtyDaysIsBadInput) {
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 ";
  auto poisson = run_cli(base + "--rate 0.0001 --requests 1000");
  EXPECT_EQ(poisson.exit_code, 2);
  EXPECT_NE(poisson.err.find("rate: requests / rate"), std::string::npos) << poisson.err;
  const std::string file = xpusim::test::scratch_path("xs_late_arrivals", ".csv");
  std::ofstream(file) << "arrival_s,in_len,out_len\n0,128,16\n1e7,128,16\n";
  auto trace = run_cli(base + "--arrivals " + file);
  EXPECT_EQ(trace.exit_code, 2);
  EXPECT_NE(trace.err.find("2592000"), std::string::npos) << trace.err;
}

TEST(ServeCli, PueScalesTheSiteEnergyAndIsChecked) {
  const std::string args = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --in-len 200 --out-len 100 "
                           "--rate 2 --requests 40 --json";
  const auto base = run_cli(args);
  const auto site = run_cli(args + " --pue 1.3");
  ASSERT_EQ(base.exit_code, 0) << base.err;
  ASSERT_EQ(site.exit_code, 0) << site.err;
  const auto a = nlohmann::json::parse(base.out), b = nlohmann::json::parse(site.out);
  EXPECT_EQ(a["energy_j_per_output_token"], b["energy_j_per_output_token"]);
  EXPECT_DOUBLE_EQ(b["pue"].get<double>(), 1.3);
  EXPECT_EQ(b["inputs"]["pue"].get<double>(), 1.3);
  EXPECT_NEAR(b["site_energy_j_per_output_token"].get<double>(),
              1.3 * b["energy_j_per_output_token"].get<double>(), 1e-9);
  EXPECT_GT(a["pue"].get<double>(), 1.0);  // the calibration's default PUE
  for (const char* bad : {"0.9", "1", "3.5"}) {
    const auto r = run_cli(args + " --pue " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--pue"), std::string::npos) << r.err;
  }
}

// The search keeps what the user states of the layout (--tp, --ep, --pp, --dp-attention,
// --max-num-seqs) and refuses what it chooses itself (--chips, --prefill-chips) instead of silently
// ignoring them.
TEST(ServeCli, SearchKeepsTheStatedLayoutAndRefusesWhatItChooses) {
  const std::string dense = "serve --system h100-sxm-dgx --model llama3.1-8b --rate 2 --requests 200 --search ";
  const auto tp = run_cli(dense + "--tp 2 --pp 2 --max-num-seqs 32 --json");
  ASSERT_EQ(tp.exit_code, 0) << tp.err;
  const auto j = nlohmann::json::parse(tp.out);
  EXPECT_EQ(j["results"][0]["best"]["tp"], 2);
  EXPECT_EQ(j["results"][0]["best"]["pp"], 2);
  for (const auto& c : j["results"][0]["tried"]) {
    EXPECT_EQ(c["tp"], 2);
    EXPECT_EQ(c["pp"], 2);
    EXPECT_EQ(c["max_num_seqs"], 32);
  }
  for (const auto& [flag, field] : {std::pair{"--chips 16", "chips: chosen by the search"},
                                    std::pair{"--prefill-chips 4", "prefill_chips: chosen by the search"},
                                    std::pair{"--concurrency 8", "concurrency: not a load the search serves"},
                                    std::pair{"--offline", "offline: not a load the search serves"},
                                    std::pair{"--trace t.json", "--trace: applies to a single run"}}) {
    const auto r = run_cli(dense + flag);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(field), std::string::npos) << flag << ": " << r.err;
  }
  const std::string moe = "serve --system h200-sxm-hgx --model qwen3-235b-a22b --precision fp8 --rate 5 "
                          "--in-len 1024 --out-len 256 --requests 200 --search ";
  const auto dp = run_cli(moe + "--dp-attention --ep 4 --json");
  ASSERT_EQ(dp.exit_code, 0) << dp.err;
  const auto dp_doc = nlohmann::json::parse(dp.out);
  for (const auto& c : dp_doc["results"][0]["tried"]) {
    EXPECT_EQ(c["dp_attention"], true);
    EXPECT_EQ(c["ep"], 4);
  }
  const auto bad = run_cli(moe + "--dp-attention --tp 8");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("DP attention needs tp = 1"), std::string::npos) << bad.err;
  const auto staged = run_cli(moe + "--dp-attention --pp 2");
  EXPECT_EQ(staged.exit_code, 2);
  EXPECT_NE(staged.err.find("pp: DP attention runs one pipeline stage"), std::string::npos) << staged.err;
}

// Speculative decoding's settings are stated when it runs, and refused without draft tokens
// (they would be dropped): --acceptance or --draft-model alone exits 2 naming the field.
TEST(ServeCli, SpeculativeDecodingIsStatedAndItsSettingsNeedDraftTokens) {
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --requests 20 ";
  const auto on = run_cli(base + "--draft-len 2 --json");
  ASSERT_EQ(on.exit_code, 0) << on.err;
  EXPECT_NE(on.out.find("speculative decoding: draft 2, acceptance 0.70 per token; draft cost folded into the fused step"),
            std::string::npos);
  for (const auto& [flag, message] :
       {std::pair{"--acceptance 0.8", "acceptance: needs speculative decoding (got '0.8'"},
        std::pair{"--draft-model mtp", "draft_model: needs speculative decoding (got 'mtp'"}}) {
    const auto r = run_cli(base + flag);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(message), std::string::npos) << flag << ": " << r.err;
  }
}

// A MoE load imbalance on a serving engine: stated among the assumptions, it slows the engine
// (the busiest expert-parallel rank sets each MoE layer's time); it needs a MoE model and ep > 1,
// and the search needs the ep it applies to.
TEST(ServeCli, AMoeLoadImbalanceIsStatedSlowsTheEngineAndNeedsExpertParallelism) {
  const std::string base = "serve --system h200-sxm-hgx --model qwen3-235b-a22b --precision fp8 --chips 8 --tp 8 "
                           "--in-len 1024 --out-len 256 --concurrency 64 --requests 100 ";
  const auto a = xpusim::test::run_cli_json(base + "--ep 8 --json");
  const auto b = xpusim::test::run_cli_json(base + "--ep 8 --moe-load-imbalance 1.5 --json");
  ASSERT_FALSE(a.is_null() || b.is_null());
  EXPECT_GT(b["ttft_mean_ms"].get<double>(), a["ttft_mean_ms"].get<double>());
  EXPECT_GT(b["tpot_mean_ms"].get<double>(), a["tpot_mean_ms"].get<double>());
  EXPECT_LT(b["throughput_tokens_per_s"].get<double>(), a["throughput_tokens_per_s"].get<double>());
  EXPECT_EQ(b["inputs"]["plan"]["moe_load_imbalance"], 1.5);
  // A scenario file's plan.moe_load_imbalance is the flag's (it was read and then dropped).
  const std::string scen = ::testing::TempDir() + "serve_moe_imbalance.yaml";
  std::ofstream(scen) << "plan: {ep: 8, moe_load_imbalance: 1.5}\n";
  const auto c = xpusim::test::run_cli_json(base + "--scenario " + scen + " --json");
  ASSERT_FALSE(c.is_null());
  EXPECT_EQ(c["tpot_mean_ms"], b["tpot_mean_ms"]);
  EXPECT_EQ(c["inputs"]["plan"]["moe_load_imbalance"], 1.5);
  bool stated = false;
  for (const auto& s : b["assumptions"]) stated = stated || s.get<std::string>().rfind("MoE load imbalance 1.5 (input)", 0) == 0;
  EXPECT_TRUE(stated) << b["assumptions"].dump();
  for (const auto& [args, message] :
       {std::pair{"--moe-load-imbalance 1.5", "moe_load_imbalance: the imbalance is over the expert-parallel ranks"},
        std::pair{"--ep 8 --moe-load-imbalance 12", "(got '12'; expected from 1 to ep = 8)"}}) {
    const auto r = run_cli(base + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  const auto dense = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --moe-load-imbalance 1.2 --requests 10");
  EXPECT_EQ(dense.exit_code, 2);
  EXPECT_NE(dense.err.find("needs a mixture of experts"), std::string::npos) << dense.err;
  const auto search = run_cli("serve --system h200-sxm-hgx --model qwen3-235b-a22b --precision fp8 --search --rate 2 "
                              "--moe-load-imbalance 1.5 --requests 20");
  EXPECT_EQ(search.exit_code, 2);
  EXPECT_NE(search.err.find("moe_load_imbalance: the imbalance is over the expert-parallel ranks: state --ep with it"),
            std::string::npos) << search.err;
}

// Stated lengths beyond the context the model's config states are bad input (issue 45, case 6):
// Llama-2-7B's config says max_position_embeddings 4096, so 8000 + 300 = 8300 tokens cannot run,
// while 3796 + 300 = 4096 (the whole window) does.
TEST(ServeCli, StatedLengthsBeyondTheContextWindowAreBadInput) {
  const std::string base = "serve --system h100-sxm-dgx --model llama2-7b --chips 1 --rate 1 --requests 20 ";
  const long long window = 4096, out = 300, in = 8000;
  auto r = run_cli(base + "--in-len " + std::to_string(in) + " --out-len " + std::to_string(out));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("exceeds the model's context window"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(std::to_string(in + out) + " tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at most " + std::to_string(window) + " tokens (max_position_embeddings"), std::string::npos)
      << r.err;
  auto fits = run_cli(base + "--in-len " + std::to_string(window - out) + " --out-len " + std::to_string(out));
  EXPECT_EQ(fits.exit_code, 0) << fits.err;
}

// A failed run does not read as a healthy one (issue 45, case 7): requests past the endpoint
// timeout and an offered rate beyond what the run completes lead the text as warnings and are
// listed in the JSON; a run within its capacity has none.
TEST(ServeCli, OverloadAndTimeoutsAreWarningsThatLeadTheReport) {
  const std::string base = "serve --system h100-sxm-dgx --model llama3.1-8b --chips 1 --requests 100 "
                           "--in-len 512 --out-len 64 ";
  auto healthy = run_cli(base + "--rate 1 --json");
  ASSERT_EQ(healthy.exit_code, 0) << healthy.err;
  const auto h = nlohmann::json::parse(healthy.out);
  EXPECT_TRUE(h["warnings"].empty()) << h["warnings"].dump();
  EXPECT_DOUBLE_EQ(h["endpoint_timeout_s"].get<double>(), 60.0);

  // Every request takes longer than 1 ms end to end: all 100 exceed a 1 ms timeout.
  auto timed_out = run_cli(base + "--rate 1 --timeout '1 ms' --json");
  ASSERT_EQ(timed_out.exit_code, 0) << timed_out.err;
  const auto t = nlohmann::json::parse(timed_out.out);
  EXPECT_EQ(t["timed_out_requests"].get<long long>(), 100);
  ASSERT_FALSE(t["warnings"].empty());
  EXPECT_EQ(t["warnings"][0].get<std::string>(), "100 of 100 requests (100%) exceeded the 0.001 s endpoint timeout");

  EXPECT_FALSE(h["overloaded"].get<bool>());
  EXPECT_GT(h["capacity_requests_per_s"].get<double>(), 1.0);

  // 10,000 req/s is far beyond one H100: beyond the offline throughput of the same engine on the
  // same lengths (capacity_requests_per_s), so the run is overloaded, says so first, and reports
  // its throughput over the whole run, drain included: never above the capacity.
  auto overloaded = run_cli(base + "--rate 10000 --json");
  ASSERT_EQ(overloaded.exit_code, 0) << overloaded.err;
  const auto o = nlohmann::json::parse(overloaded.out);
  EXPECT_TRUE(o["overloaded"].get<bool>());
  const double capacity = o["capacity_requests_per_s"].get<double>();
  EXPECT_DOUBLE_EQ(capacity, h["capacity_requests_per_s"].get<double>());  // the engines', not the load's
  const double completed = o["throughput_requests_per_s"].get<double>();
  EXPECT_LE(completed, capacity);
  EXPECT_NEAR(completed, 100 / o["duration_s"].get<double>(), 1e-9 * completed);
  // The offered rate is the drawn arrivals' (100 Poisson draws at 10,000 req/s span about 10 ms).
  bool named = false;
  for (const auto& w : o["warnings"]) {
    const std::string text = w.get<std::string>();
    if (text.find("overloaded: the offered ") != 0) continue;
    const double offered = std::stod(text.substr(std::string("overloaded: the offered ").size()));
    named = offered > 5000 && offered < 20000;
  }
  EXPECT_TRUE(named) << o["warnings"].dump();
  auto text = run_cli(base + "--rate 10000");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("WARNING: overloaded"), text.out.find('\n') + 1) << text.out;
}

// NAME@VERSION picks the stack's version range; the output says which software it modelled, and
// a range no measurement stands behind makes the forecast extrapolating.
TEST(ServeCli, FrameworkVersionIsAnInputTheOutputStates) {
  const std::string run = "serve --system h100-sxm-dgx --model llama3.1-8b --rate 2 --requests 50 --json --framework ";
  auto r = run_cli(run + "trtllm@1.1.0rc5");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["software"]["framework"], "trtllm");
  EXPECT_EQ(j["software"]["version"], "1.1.0rc5");
  EXPECT_EQ(j["software"]["version_range"], ">=1.0rc0,<2");
  EXPECT_EQ(j["software"]["validated"], true);
  r = run_cli(run + "trtllm");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["software"]["version"].is_null());
  EXPECT_EQ(j["software"]["version_range"], ">=1.0rc0,<2");  // the default range, said so
  bool said = false;
  for (const auto& a : j["assumptions"]) said = said || a.get<std::string>().find("version not stated") != std::string::npos;
  EXPECT_TRUE(said);
  r = run_cli(run + "trtllm@0.9.0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["software"]["validated"], false);
  EXPECT_EQ(j["trust"]["extrapolating"], true);
  EXPECT_NE(j["trust"]["reasons"].dump().find("trtllm 0.9.0"), std::string::npos) << j["trust"].dump();
}

TEST(ServeCli, AFrameworkVersionNoRangeHoldsIsBadInput) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --rate 2 --requests 50 --framework trtllm@3.0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("framework"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(">=1.0rc0,<2"), std::string::npos) << r.err;  // the known ranges
  r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --rate 2 --requests 50 --framework vllm@nightly");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("PEP 440"), std::string::npos) << r.err;
}

// A --compare or --search row names everything that made it: precision, framework, the
// engines' maximum sequences, and a command that runs the plan, which runs and sustains the rate.
TEST(ServeCli, SearchRowsNameTheirSettingsAndTheCommandThatRunsThem) {
  auto r = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --search --rate 10 --in-len 512 --out-len 64 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& res = j["results"][0];
  ASSERT_TRUE(res["found"].get<bool>());
  EXPECT_EQ(res["best"]["precision"], "bf16");
  EXPECT_EQ(res["best"]["framework"], "trtllm");
  const std::string cmd = res["command"];
  EXPECT_NE(cmd.find("--max-num-seqs " + std::to_string(res["best"]["max_num_seqs"].get<long long>())), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--chips " + std::to_string(res["best"]["chips"].get<long long>())), std::string::npos) << cmd;
  const std::string prefix = "xpusim ";
  ASSERT_EQ(cmd.rfind(prefix, 0), 0u) << cmd;
  auto again = run_cli(cmd.substr(prefix.size()) + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const auto k = nlohmann::json::parse(again.out);
  EXPECT_FALSE(k["overloaded"].get<bool>());
  EXPECT_EQ(k["chips"], res["best"]["chips"]);
  auto text = run_cli("serve --system h100-sxm-dgx --model llama3.1-8b --search --rate 10 --in-len 512 --out-len 64");
  EXPECT_NE(text.out.find("$/M out tok"), std::string::npos) << text.out;
}
