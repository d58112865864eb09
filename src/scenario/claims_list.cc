// The claims of `xpusim claims`, one builder each (docs/claims.md): the claim as made, its
// conditions, and the cases xpusim computes from the catalog and the runs of claims_runs.cc.

#include <string>

#include "claims_runs.h"
#include "xpusim/core/format.h"

namespace xpusim::scenario::claims_detail {

namespace {

using core::fmt_num;

const TrainPoint& tp(const Runs& r, const std::string& key) { return r.train.at(key); }
double tps(const Runs& r, const std::string& key) { return tp(r, key).run.result.tokens_per_s; }
double mfu_pct(const TrainPoint& p) { return p.run.result.mfu * 100.0; }
std::string pct(double x) { return fmt_num(x, 3) + "%"; }

double hbm_gib(const hw::SystemSpec& s) { return per_domain(s, core::to_gib(s.chip.hbm_capacity.value)); }


}  // namespace

Claim claim_speed(const Runs& r) {
  Claim c = make_claim("seed-4x-speed", "Trainium3 is 4x faster than Trainium2", "project seed (issue 10); AWS re:Invent 2025 [21*], [22]",
                 "not stated; read as training throughput of one Trn3 Gen2 UltraServer (144 chips) over one Trn2 "
                 "UltraServer (64 chips): Llama-3.1-70B, 8K sequences, 576 sequences per step, each chip at its fastest "
                 "training precision (MXFP8 on Trn3, FP8 on Trn2), plan chosen by xpusim's plan search",
                 "tokens/s per UltraServer, Trn3 / Trn2", 4.0);
  const double central = tps(r, "gen2/mxfp8") / tps(r, "trn2/fp8");
  c.cases = {{"Gen2 MXFP8 vs Trn2 FP8 (central)", central},
             {"both BF16", tps(r, "gen2/bf16") / tps(r, "trn2/bf16")},
             {"both plain FP8", tps(r, "gen2/fp8") / tps(r, "trn2/fp8")},
             {"Gen2 MXFP8 vs Trn2 BF16", tps(r, "gen2/mxfp8") / tps(r, "trn2/bf16")},
             {"Gen1 (64 chips) MXFP8 vs Trn2 FP8", tps(r, "gen1/mxfp8") / tps(r, "trn2/fp8")},
             {"per chip, Gen2 MXFP8 vs Trn2 FP8", central * 64.0 / 144.0}};
  c.why = {"per UltraServer = chips (144 / 64 = 2.25x) x per-chip speed (" + ratio_text(central * 64.0 / 144.0) + ")",
           "per chip: Trn3 MXFP8 at " + pct(mfu_pct(tp(r, "gen2/mxfp8"))) + " MFU of 2,517 TF vs Trn2 FP8 at " +
               pct(mfu_pct(tp(r, "trn2/fp8"))) + " of 1,299 TF: MX doubles the peak, not the delivered rate",
           "precision: in BF16 the two chips have the same peak (671 vs 667 TF), so the BF16 gain is chips, HBM and fabric",
           "software stack: Trainium efficiency is fitted on Trn1/Trn2 rows and carried to Trn3 through the NeuronCore "
           "model (TensorE tiles with MX quad-row, VectorE, PSUM read-out, HBM, NeuronLink); no Trn3 run is public"};
  c.figures = {{"trn3_gen2_mxfp8_tokens_per_s", tps(r, "gen2/mxfp8")}, {"trn2_fp8_tokens_per_s", tps(r, "trn2/fp8")},
               {"trn3_gen2_mxfp8_mfu_pct", mfu_pct(tp(r, "gen2/mxfp8"))}, {"trn2_fp8_mfu_pct", mfu_pct(tp(r, "trn2/fp8"))}};
  return c;
}

Claim claim_memory(const Runs& r) {
  const auto &g2 = r.cat.system(kTrn3Gen2), &g1 = r.cat.system(kTrn3Gen1), &t2 = r.cat.system(kTrn2);
  Claim c = make_claim("seed-4x-memory", "Trainium3 has 4x the memory of Trainium2", "project seed (issue 10); press [25]",
                 "read as HBM capacity per UltraServer: Trn3 Gen2 (144 x 144 GiB) over Trn2 UltraServer (64 x 96 GiB)",
                 "HBM GiB per UltraServer, Trn3 / Trn2", 4.0);
  c.cases = {{"Gen2 UltraServer vs Trn2 UltraServer (central)", hbm_gib(g2) / hbm_gib(t2)},
             {"Gen1 UltraServer (64 chips) vs Trn2 UltraServer", hbm_gib(g1) / hbm_gib(t2)},
             {"per chip", core::to_gib(g2.chip.hbm_capacity.value) / core::to_gib(t2.chip.hbm_capacity.value)}};
  c.why = {"catalog: " + fmt_num(hbm_gib(g2), 6) + " GiB vs " + fmt_num(hbm_gib(t2), 6) +
               " GiB; 4x is the rounded marketing reading ('20 TB' vs '6 TB' would be 3.3x; C3, C7)",
           "per chip the gain is 1.5x (144 vs 96 GiB); the rest is 2.25x more chips per UltraServer"};
  c.figures = {{"trn3_gen2_hbm_per_ultraserver_gib", hbm_gib(g2)}, {"trn2_hbm_per_ultraserver_gib", hbm_gib(t2)}};
  return c;
}

Claim claim_energy_per_chip(const Runs& r) {
  Claim c = make_claim("seed-40pct-energy-efficiency", "Trainium3 has 40% better energy efficiency (per chip)",
                 "project seed (issue 10); AWS 2024 preview [23], [25]",
                 "not stated; read as training tokens per joule per chip (chip + system overhead power), the runs of "
                 "seed-4x-speed; Trn3 TDP is an estimate",
                 "tokens per joule, Trn3 / Trn2", 1.4);
  const auto& t3 = tp(r, "gen2/mxfp8");
  const double t2 = tokens_per_joule(tp(r, "trn2/fp8"), r);
  const double lo = tokens_per_joule(t3, r, r.tdp.low) / t2, hi = tokens_per_joule(t3, r, r.tdp.high) / t2;
  c.cases = {{"Gen2 MXFP8 vs Trn2 FP8, catalog TDP (central)", tokens_per_joule(t3, r) / t2},
             {"both BF16", tokens_per_joule(tp(r, "gen2/bf16"), r) / tokens_per_joule(tp(r, "trn2/bf16"), r)},
             {"both plain FP8", tokens_per_joule(tp(r, "gen2/fp8"), r) / t2},
             {"Trn3 TDP " + fmt_num(r.tdp.low) + " W (range low)", lo},
             {"Trn3 TDP " + fmt_num(r.tdp.high) + " W (range high)", hi}};
  c.why = {"energy = static share of TDP + energy per FLOP and per byte derived from TDP + overhead power "
           "(docs/energy.md): both chips' TDPs are estimates (Trn3 " + fmt_num(r.tdp.value) + " W, Trn2 500 W)",
           "the ratio tracks tokens/s per chip over power per chip; Trn3 draws more power per chip for " +
               ratio_text(tps(r, "gen2/mxfp8") / 144.0 / (tps(r, "trn2/fp8") / 64.0)) + " the tokens/s per chip",
           "conflict C7: '40% better' (chip, 2024) vs '4x' (UltraServer, 2025) cannot both hold at peak"};
  add_flip(c, "Trn3 at least 1.4x Trn2's tokens per joule", "Trn3 TDP", lo, hi, r.tdp, " W", 1.4 - printed_half_unit(1.4));
  add_flip(c, "Trn3 more energy-efficient than Trn2", "Trn3 TDP", lo, hi, r.tdp, " W", 1.0);
  return c;
}

Claim claim_million_chips(const Runs& r) {
  Claim c = make_claim("seed-1m-chips", "up to 1 million Trainium3 chips in one application",
                 "project seed (issue 10); AWS EC2 UltraClusters 3.0 [24], [25]",
                 "Llama-3.1-405B pre-training on 1,048,576 Trn3 chips (Gen2 UltraServers over EFA), MXFP8, tp 16 x pp 16 "
                 "x cp 4, 8K sequences, Llama 3.1's own global batch of 2,048 sequences (16M tokens); reference: the same "
                 "plan without cp on 4,096 chips",
                 "useful fraction: MFU x goodput (failures, restarts and stragglers) at 1,048,576 chips / the same at "
                 "4,096 chips (1 = every chip as useful as at small scale)",
                 1.0);
  // Useful work per chip-second: the step's MFU times the share of time the run trains (goodput).
  const auto useful = [](const TrainPoint& p) { return p.run.result.mfu * p.run.goodput.goodput_fraction; };
  const double ref = useful(r.scale.at("ref"));
  for (const char* batch : {"2048", "4096", "16384"}) {
    const auto& p = r.scale.at(batch);
    c.cases.push_back({std::string("global batch ") + batch + " sequences (" +
                           fmt_num(std::stod(batch) * kTrainSeqLen / 1e6, 3) + "M tokens)" +
                           (std::string(batch) == "2048" ? " (central)" : ""),
                       useful(p) / ref});
    c.figures.push_back({std::string("batch_") + batch + "_tokens_per_s", p.run.result.tokens_per_s});
    c.figures.push_back({std::string("batch_") + batch + "_goodput_pct", p.run.goodput.goodput_fraction * 100.0});
    c.figures.push_back({std::string("batch_") + batch + "_mfu_pct", mfu_pct(p)});
    c.figures.push_back({std::string("batch_") + batch + "_step_time_s", core::to_seconds(p.run.result.step_time)});
  }
  c.figures.push_back({"reference_4096_chips_mfu_pct", r.scale.at("ref").run.result.mfu * 100.0});
  c.figures.push_back({"reference_4096_chips_goodput_pct", r.scale.at("ref").run.goodput.goodput_fraction * 100.0});
  const auto& m = r.scale.at("2048").run.built.scenario.plan;
  c.why = {"xpusim runs the million-chip step (" + fmt_num(r.scale.at("2048").run.result.tokens_per_s / 1e6, 4) +
               "M tokens/s), but a real batch leaves each pipeline " + std::to_string(m.micro_batches()) +
               " micro-batch(es) for 16 stages: the pipeline bubble, not the network, caps MFU at " +
               pct(mfu_pct(r.scale.at("2048"))) + " against " + pct(r.scale.at("ref").run.result.mfu * 100.0) +
               " at 4,096 chips",
           "larger batches recover efficiency (16,384 sequences: " + pct(mfu_pct(r.scale.at("16384"))) +
               ") but exceed the batch sizes published for dense models of this size",
           "failures, restarts and stragglers (train's goodput model): the million-chip run trains " +
               pct(r.scale.at("2048").run.goodput.goodput_fraction * 100.0) + " of its time against " +
               pct(r.scale.at("ref").run.goodput.goodput_fraction * 100.0) + " at 4,096 chips"};
  return c;
}

}  // namespace xpusim::scenario::claims_detail
