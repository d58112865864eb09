// AWS's Trainium3 launch claims and the seed's inference-cost claim (docs/claims.md).

#include <string>

#include "claims_runs.h"
#include "xpusim/core/format.h"

namespace xpusim::scenario::claims_detail {

namespace {

using core::fmt_num;

// hardware.md §2.3 / §10 [29]: the 2023 Trn2 preview announced UltraClusters of up to 100,000 chips.
constexpr double kTrn2PreviewClusterChips = 100000;

const char* kServeConditions =
    "gpt-oss-120b, 8K prompt / 1K output (the Neuron Trn3 gpt-oss tutorial's shape), 16 chips (one server), closed "
    "loop of concurrent requests; each chip at its fastest serving precision: Trn3 with MXFP4 (the Trn3 recipe's "
    "native weights), Trn2 with FP8 (no MX); "
    "xpusim's default serving layout; the load AWS used is not published, so loads of 1 to 1,024 are shown";

double peak_tflops(const hw::SystemSpec& s, core::Dtype d) { return per_domain(s, core::to_tflops(s.chip.peak_for(d))); }
double hbm_tb_s(const hw::SystemSpec& s) { return per_domain(s, core::to_tbps(s.chip.hbm_bandwidth.value)); }
double delivered_tflops(const TrainPoint& p) { return p.run.result.model_tflops_per_chip * static_cast<double>(p.chips); }

enum class ServeMetric { Throughput, Latency, Energy, Cost };

/// Trn3 over Trn2 on the serving runs (or Trn2 over Trn3 where lower is better); 0 when a run is missing.
/// Trn3 at `trn3_precision` over Trn2 at `trn2_precision` (FP8, Trn2's fastest, by default).
double serve_ratio(const Runs& r, long long load, const std::string& trn3_precision, ServeMetric m,
                   const serve::ServeReport* trn3_override = nullptr, const std::string& trn2_precision = "fp8") {
  const auto* a = trn3_override ? trn3_override : find_serve(r, "trn3", trn3_precision, load);
  const auto* b = find_serve(r, "trn2", trn2_precision, load);
  if (!a || !b) return 0;
  switch (m) {
    case ServeMetric::Throughput: return a->output_tokens_per_s_per_chip / b->output_tokens_per_s_per_chip;
    case ServeMetric::Latency: return b->sim.e2e_s.mean / a->sim.e2e_s.mean;
    case ServeMetric::Energy: return b->joules_per_output_token / a->joules_per_output_token;
    case ServeMetric::Cost: return b->dollars_per_million_output_tokens / a->dollars_per_million_output_tokens;
  }
  return 0;
}

/// The central case (the first load, Trn3 MXFP4 vs Trn2 FP8), the other loads, both in BF16, and
/// Trn3 MXFP4 against Trn2 in BF16 (a baseline below Trn2's fastest, shown for comparison).
std::vector<ClaimCase> serve_cases(const Runs& r, ServeMetric m) {
  std::vector<ClaimCase> cases;
  for (long long load : kServeLoads) {
    const double x = serve_ratio(r, load, "mxfp4", m);
    if (x > 0)
      cases.push_back({"MXFP4 vs FP8, " + std::to_string(load) + " concurrent requests" +
                           (load == kServeLoads[0] ? " (central)" : ""),
                       x});
  }
  const double bf16 = serve_ratio(r, kServeLoads[0], "bf16", m, nullptr, "bf16");
  if (bf16 > 0) cases.push_back({"both BF16, " + std::to_string(kServeLoads[0]) + " concurrent requests", bf16});
  const double low_base = serve_ratio(r, kServeLoads[0], "mxfp4", m, nullptr, "bf16");
  if (low_base > 0)
    cases.push_back({"MXFP4 vs Trn2 in BF16 (not Trn2's fastest), " + std::to_string(kServeLoads[0]) + " concurrent requests",
                     low_base});
  return cases;
}

// The Trn3 forecast's software range as two more cases: the same Trn3 run under the slowest
// validated Neuron stack and under GPU-grade serving software, against Trn2 as it runs
// (docs/serving.md, "Software range"). Throughput and latency only: the ends carry no energy or cost.
void add_software_cases(const Runs& r, ServeMetric m, Claim& c) {
  const auto* trn2 = find_serve(r, "trn2", "fp8", kServeLoads[0]);
  if (!r.trn3_software || !trn2) return;
  for (const auto& [end, what] : {std::pair{&r.trn3_software->low, "software range low"},
                                  std::pair{&r.trn3_software->high, "software range high"}}) {
    const double ratio = m == ServeMetric::Throughput
                             ? end->output_tokens_per_s_per_chip / trn2->output_tokens_per_s_per_chip
                             : trn2->sim.e2e_s.mean / end->e2e_mean_s;
    c.cases.push_back({"Trn3 " + std::string(what) + ": " + end->stack, ratio});
  }
}

std::string serve_detail(const Runs& r) {
  const auto* a = find_serve(r, "trn3", "mxfp4", kServeLoads[0]);
  const auto* b = find_serve(r, "trn2", "fp8", kServeLoads[0]);
  if (!a || !b) return "a serving run did not fit";
  return "at " + std::to_string(kServeLoads[0]) + " concurrent requests xpusim serves Trn3 as " + std::to_string(a->engines) +
         " engine(s) of tp " + std::to_string(a->scenario.tp) + " and Trn2 as " + std::to_string(b->engines) +
         " of tp " + std::to_string(b->scenario.tp) + " (mean batch per engine " + fmt_num(a->sim.mean_batch, 3) +
         " vs " + fmt_num(b->sim.mean_batch, 3) + "): the batch each engine holds, not only FLOP/s and HBM, sets the ratio";
}

}  // namespace

Claim claim_inference_cost(const Runs& r) {
  Claim c = make_claim("seed-lower-inference-cost", "Trainium3 lowers the cost of inference", "project seed (issue 10); AWS [22]",
                 std::string(kServeConditions) + "; Trn3 price is an estimate",
                 "USD per million output tokens, Trn2 / Trn3 (above 1: Trn3 cheaper)", 1.0);
  c.published_at_least = true;
  c.cases = serve_cases(r, ServeMetric::Cost);
  const double central = serve_ratio(r, kServeLoads[0], "mxfp4", ServeMetric::Cost);
  // Cost is price x time: at another Trn3 price the ratio scales by catalog price / that price.
  const double lo = central * r.price.value / r.price.low, hi = central * r.price.value / r.price.high;
  c.cases.push_back({core::strformat("Trn3 price $%.2f (range low)", r.price.low), lo});
  c.cases.push_back({core::strformat("Trn3 price $%.2f (range high)", r.price.high), hi});
  c.why = {"cost per token = price per chip-hour / tokens per chip-hour: Trn3's price is an estimate ($" +
               fmt_num(r.price.value, 3) + ", range $" + fmt_num(r.price.low, 3) + " .. $" + fmt_num(r.price.high, 3) + ")",
           serve_detail(r)};
  add_flip(c, "Trn3 cheaper per output token than Trn2", "Trn3 price", lo, hi, r.price, " USD/chip-h", 1.0);
  return c;
}

Claim claim_compute(const Runs& r) {
  const auto &g2 = r.cat.system(kTrn3Gen2), &g1 = r.cat.system(kTrn3Gen1), &t2 = r.cat.system(kTrn2);
  using core::Dtype;
  Claim c = make_claim("aws-4.4x-compute", "Trn3 UltraServer: 4.4x more compute than Trn2 UltraServer",
                 "AWS re:Invent 2025 [21*], [22]",
                 "dense peak per UltraServer, Trn3 Gen2 (144 chips) vs Trn2 UltraServer (64), each chip's fastest dense format",
                 "peak FLOP/s per UltraServer, Trn3 / Trn2", 4.4);
  const double central = peak_tflops(g2, Dtype::Mxfp8) / peak_tflops(t2, Dtype::Fp8);
  c.cases = {{"Gen2 MXFP8 vs Trn2 FP8, catalog peaks (central)", central},
             {"Gen2 plain FP8 (2x, not 4x: C9/D2) vs Trn2 FP8", peak_tflops(g2, Dtype::Fp8) / peak_tflops(t2, Dtype::Fp8)},
             {"both BF16", peak_tflops(g2, Dtype::Bf16) / peak_tflops(t2, Dtype::Bf16)},
             {"Gen1 (64 chips) MXFP8 vs Trn2 FP8", peak_tflops(g1, Dtype::Mxfp8) / peak_tflops(t2, Dtype::Fp8)},
             {"delivered in training (Llama-3.1-70B, seed-4x-speed runs)",
              delivered_tflops(r.train.at("gen2/mxfp8")) / delivered_tflops(r.train.at("trn2/fp8"))}};
  c.why = {"catalog: " + fmt_num(peak_tflops(g2, Dtype::Mxfp8) / 1e3, 5) + " PF vs " +
               fmt_num(peak_tflops(t2, Dtype::Fp8) / 1e3, 4) + " PF = 2.25x the chips x 1.94x per chip (MXFP8 vs FP8)",
           "the claim compares Trn3's MX formats with Trn2's plain FP8; in BF16 the gain is the chip count alone",
           "delivered compute in a real step is lower than peak on both, and lower on Trn3 (MFU: see seed-4x-speed)"};
  return c;
}

Claim claim_memory_bandwidth(const Runs& r) {
  const auto &g2 = r.cat.system(kTrn3Gen2), &g1 = r.cat.system(kTrn3Gen1), &t2 = r.cat.system(kTrn2);
  Claim c = make_claim("aws-3.9x-memory-bandwidth", "Trn3 UltraServer: nearly 4x (3.9x) the memory bandwidth",
                 "AWS re:Invent 2025 [21*], [26]", "HBM bandwidth per UltraServer, Trn3 Gen2 vs Trn2 UltraServer",
                 "HBM TB/s per UltraServer, Trn3 / Trn2", 3.9);
  c.cases = {{"Gen2 vs Trn2 UltraServer (central)", hbm_tb_s(g2) / hbm_tb_s(t2)},
             {"Gen1 (64 chips) vs Trn2 UltraServer", hbm_tb_s(g1) / hbm_tb_s(t2)},
             {"per chip", core::to_tbps(g2.chip.hbm_bandwidth.value) / core::to_tbps(t2.chip.hbm_bandwidth.value)}};
  c.why = {"catalog: " + fmt_num(hbm_tb_s(g2), 5) + " vs " + fmt_num(hbm_tb_s(t2), 5) +
           " TB/s; 3.9x needs Trn2 at about 2.8 TB/s per chip, and the NKI guide's 4.7 TB/s for Trn3 (C4) would give 3.65x"};
  return c;
}

Claim claim_energy_per_ultraserver(const Runs& r) {
  Claim c = make_claim("aws-4x-energy-efficiency", "Trn3 UltraServer: 4x greater energy efficiency than Trn2 UltraServer",
                 "AWS re:Invent 2025 [21*], [20]", std::string(kServeConditions) + "; tokens per joule is the same per "
                 "chip and per UltraServer when every chip does the same work; Trn3 TDP is an estimate",
                 "output tokens per joule (chip + overhead power), Trn3 / Trn2", 4.0);
  c.cases = serve_cases(r, ServeMetric::Energy);
  const double lo = r.serve_tdp_low ? serve_ratio(r, kServeLoads[0], "mxfp4", ServeMetric::Energy, &*r.serve_tdp_low) : 0;
  const double hi = r.serve_tdp_high ? serve_ratio(r, kServeLoads[0], "mxfp4", ServeMetric::Energy, &*r.serve_tdp_high) : 0;
  c.cases.push_back({"Trn3 TDP " + fmt_num(r.tdp.low) + " W (range low)", lo});
  c.cases.push_back({"Trn3 TDP " + fmt_num(r.tdp.high) + " W (range high)", hi});
  const auto& t3 = r.train.at("gen2/mxfp8");
  c.cases.push_back({"training Llama-3.1-70B (seed-4x-speed runs)", tokens_per_joule(t3, r) / tokens_per_joule(r.train.at("trn2/fp8"), r)});
  c.why = {"D6: 4.4x compute at 4x perf/W would mean about 250 W per Trn3 chip, against the ~1 kW hint: AWS's 4x is a "
           "workload figure (tokens per MW) whose workload and load are not published",
           serve_detail(r), "Trn3 TDP " + fmt_num(r.tdp.value) + " W and Trn2 500 W are estimates"};
  add_flip(c, "Trn3 at least 4x Trn2's tokens per joule", "Trn3 TDP", lo, hi, r.tdp, " W", 4.0 - printed_half_unit(4.0));
  add_flip(c, "Trn3 more energy-efficient than Trn2", "Trn3 TDP", lo, hi, r.tdp, " W", 1.0);
  return c;
}

Claim claim_throughput_per_chip(const Runs& r) {
  Claim c = make_claim("aws-3x-throughput-per-chip-gpt-oss", "Trn3: 3x the throughput per chip on gpt-oss",
                 "AWS re:Invent 2025 [22]; Neuron gpt-oss Trn3 tutorial (3.3b)", kServeConditions,
                 "output tokens/s per chip, Trn3 / Trn2", 3.0);
  c.cases = serve_cases(r, ServeMetric::Throughput);
  add_software_cases(r, ServeMetric::Throughput, c);
  c.why = {serve_detail(r),
           "precision: MXFP4 halves weight bytes per decode step against Trn2's BF16 (Trn2 has no MX); with Trn3 in BF16 "
           "the gain is HBM bandwidth and capacity alone",
           "software stack: the Trn3 recipe's fused decode megakernel, LNC=1 and EP128 layout are not modelled; xpusim "
           "uses the Neuron serving overheads fitted on Trn2 (issue 10 item 1)"};
  return c;
}

Claim claim_response_time(const Runs& r) {
  Claim c = make_claim("aws-4x-lower-response-time-gpt-oss", "Trn3: 4x lower response time on gpt-oss",
                 "AWS re:Invent 2025 [22]", kServeConditions, "mean end-to-end latency, Trn2 / Trn3", 4.0);
  c.cases = serve_cases(r, ServeMetric::Latency);
  add_software_cases(r, ServeMetric::Latency, c);
  c.why = {"unloaded (1 request) the latency ratio is the per-token step-time ratio; under load Trn2 queues first, so "
           "the ratio grows with the load",
           "decode steps carry a Neuron per-step overhead fitted on Trn2 batch-1 rows, which Trn3 inherits (issue 10 item 1)"};
  return c;
}

Claim claim_ultracluster_scale(const Runs& r) {
  const auto &g2 = r.cat.system(kTrn3Gen2), &t2 = r.cat.system(kTrn2);
  const double t3_max = static_cast<double>(g2.max_chips.value), t2_max = static_cast<double>(t2.max_chips.value);
  Claim c = make_claim("aws-ultraclusters-10x", "EC2 UltraClusters 3.0: up to 1 million Trainium3 chips, 10x the previous generation",
                 "AWS re:Invent 2025 [24], [25]",
                 "largest cluster of each generation: the catalog's max_chips (Trn3 1,048,576 for '1 million'; Trn2 "
                 "the ~500,000-chip Project Rainier)",
                 "largest cluster, Trn3 / Trn2", 10.0);
  c.cases = {{"catalog max_chips (central)", t3_max / t2_max},
             {"against the 2023 Trn2 preview's 100,000-chip UltraClusters [29]", t3_max / kTrn2PreviewClusterChips}};
  const auto& m = r.scale.at("2048").run.result;
  c.figures = {{"llama405b_1m_chips_tokens_per_s", m.tokens_per_s}, {"llama405b_1m_chips_mfu_pct", m.mfu * 100.0}};
  c.why = {"10x holds against the 100,000-chip Trn2 UltraCluster of the 2023 preview; Trn2 clusters actually deployed "
           "(Project Rainier, ~500,000 chips, [30*]) make it about 2x",
           "what such a cluster delivers on one dense job is in seed-1m-chips"};
  return c;
}

}  // namespace xpusim::scenario::claims_detail
