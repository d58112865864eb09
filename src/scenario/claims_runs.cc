// The simulations behind `xpusim claims`: training on the UltraServers, serving gpt-oss on one
// 16-chip server, and Llama-3.1-405B at a million chips (docs/claims.md, "Conditions").

#include <string>

#include "claims_runs.h"
#include "xpusim/core/format.h"
#include "xpusim/serve/software_range.h"

namespace xpusim::scenario::claims_detail {

namespace {

TrainPoint scale_point(const Runs& r, long long chips, long long cp, long long global_batch) {
  TrainInputs in;
  in.system = std::string(kTrn3Gen2);
  in.model = std::string(kScaleModel);
  in.chips = chips;
  in.tp = 16;
  in.pp = 16;
  in.cp = cp;
  in.precision = "mxfp8";
  in.seq_len = kTrainSeqLen;
  in.global_batch = global_batch;
  TrainPoint p;
  p.system = kTrn3Gen2;
  p.precision = "mxfp8";
  p.chips = chips;
  p.run = run_train(in, r.cat, r.models_dir, *r.params, false);
  return p;
}

std::string serve_key(const std::string& chip, const std::string& precision, long long load) {
  return chip + "/" + precision + "/" + std::to_string(load);
}

}  // namespace

std::vector<std::string> estimate_notes(const Runs& r) {
  return {"Trn3 chip TDP " + core::fmt_num(r.tdp.value) + " W (range " + core::fmt_num(r.tdp.low) + " .. " +
              core::fmt_num(r.tdp.high) + " W)",
          core::strformat("Trn3 price $%.2f per chip-hour (range $%.2f .. $%.2f)", r.price.value, r.price.low,
                          r.price.high),
          "Trn2 TDP 500 W and price $2.24 per chip-hour are catalog point estimates (no range published)"};
}

void run_training(Runs& r) {
  for (const char* p : {"mxfp8", "fp8", "bf16"}) r.train["gen2/" + std::string(p)] = train_point(r, kTrn3Gen2, 144, p);
  r.train["gen1/mxfp8"] = train_point(r, kTrn3Gen1, 64, "mxfp8");
  for (const char* p : {"fp8", "bf16"}) r.train["trn2/" + std::string(p)] = train_point(r, kTrn2, 64, p);
  r.scale["ref"] = scale_point(r, kScaleReferenceChips, 1, 2048);
  for (long long batch : {2048LL, 4096LL, 16384LL}) r.scale[std::to_string(batch)] = scale_point(r, kMillion, 4, batch);
}

void run_serving(Runs& r) {
  for (long long load : kServeLoads) {
    for (const auto& [chip, system, precision] : {std::tuple{"trn3", kTrn3Gen2, "mxfp4"}, {"trn3", kTrn3Gen2, "bf16"},
                                                  {"trn2", kTrn2, "fp8"}, {"trn2", kTrn2, "bf16"}}) {
      auto rep = serve_point(r, r.cat, system, precision, load);
      if (rep) r.serve.emplace(serve_key(chip, precision, load), std::move(*rep));
    }
  }
  for (auto [end, out] : {std::pair{r.tdp.low, &r.serve_tdp_low}, {r.tdp.high, &r.serve_tdp_high}}) {
    hw::Catalog cat = r.cat;
    apply_overrides(cat, kTrn3Gen2, EstimateOverrides{std::nullopt, end});
    *out = serve_point(r, cat, kTrn3Gen2, "mxfp4", kServeLoads[0]);
  }
  if (const auto* central = find_serve(r, "trn3", "mxfp4", kServeLoads[0]))
    r.trn3_software = serve::software_range(*central, serve::ServeEnv{&r.cat, r.models_dir, r.params});
}

const serve::ServeReport* find_serve(const Runs& r, const std::string& chip, const std::string& precision, long long load) {
  const auto it = r.serve.find(serve_key(chip, precision, load));
  return it == r.serve.end() ? nullptr : &it->second;
}

}  // namespace xpusim::scenario::claims_detail
