// xpusim demo: the first thing a newcomer runs. Trn3 Gen2 UltraServer beside GB300 NVL72 and
// Trn2 UltraServer; what llama3.1-405b and deepseek-v3 need to train and to serve; the time to
// train llama3.1-405b on 15T tokens, with failures, from a thousand chips to a million.

#include <iostream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli_util.h"
#include "demo_scale.h"
#include "demo_serving.h"
#include "demo_trace.h"
#include "xpusim/core/format.h"
#include "xpusim/cost/energy.h"
#include "xpusim/engine/sizing.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/mapping/memory.h"
#include "xpusim/report/json_convention.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::cli {

namespace {

using core::fmt_int;
using core::fmt_num;
using core::strformat;
using report::Json;

const char* kSystems[] = {"trn3-ultraserver-gen2", "gb300-nvl72", "trn2-ultraserver"};

double peak_tf(const hw::ChipSpec& c, core::Dtype d) {
  return c.supports(d) ? core::to_tflops(c.peak_for(d)) : 0.0;
}

std::string tf_or_dash(double v) { return v > 0 ? fmt_num(v, 4) : "-"; }

/// Scale-up bandwidth per chip, both directions, summed over the scale-up dims.
double scale_up_gbs(const hw::SystemSpec& s) {
  double t = 0;
  for (const auto& d : s.scale_up) t = std::max(t, core::to_gbps(d.bandwidth_per_chip.value));
  return t;
}

Json hardware(const hw::Catalog& cat, std::ostream& o) {
  Json j = Json::array();
  o << "== Hardware: per chip and per scale-up domain (dense peaks; every number has a source in "
       "`xpusim catalog show ID`)\n\n";
  o << strformat("%-24s %8s %8s %8s %9s %7s %7s %9s %7s %8s\n", "system (chip)", "BF16 TF", "FP8 TF",
                 "MXFP8 TF", "FP4 TF", "HBM GiB", "HBM TB/s", "scale-up", "TDP W", "$/chip-h");
  for (const char* id : kSystems) {
    const auto& s = cat.system(id);
    const auto& c = s.chip;
    const double fp4 = std::max(peak_tf(c, core::Dtype::Mxfp4), peak_tf(c, core::Dtype::Nvfp4));
    o << strformat("%-24s %8s %8s %8s %9s %7s %7s %6s GB/s %7s %8s%s\n", id, tf_or_dash(peak_tf(c, core::Dtype::Bf16)).c_str(),
                   tf_or_dash(peak_tf(c, core::Dtype::Fp8)).c_str(), tf_or_dash(peak_tf(c, core::Dtype::Mxfp8)).c_str(),
                   tf_or_dash(fp4).c_str(), fmt_num(core::to_gib(c.hbm_capacity.value), 4).c_str(),
                   fmt_num(core::to_tbps(c.hbm_bandwidth.value), 3).c_str(), fmt_num(scale_up_gbs(s), 4).c_str(),
                   fmt_num(core::to_watts(c.tdp.value), 4).c_str(),
                   fmt_num(core::to_dollars_per_hour(s.price_per_chip_hour.value), 3).c_str(),
                   s.price_per_chip_hour.confidence == hw::Confidence::Published ? "" : "*");
  }
  o << "\n" << strformat("%-24s %6s %9s %9s %9s %9s %9s %8s %9s\n", "per UltraServer / rack", "chips", "BF16 PF", "MX/FP8 PF",
                         "FP4 PF", "HBM TiB", "HBM TB/s", "kW", "$/h");
  for (const char* id : kSystems) {
    const auto& s = cat.system(id);
    const auto& c = s.chip;
    const double n = s.chips_per_domain;
    const double fp8 = std::max(peak_tf(c, core::Dtype::Fp8), peak_tf(c, core::Dtype::Mxfp8));
    const double fp4 = std::max(peak_tf(c, core::Dtype::Mxfp4), peak_tf(c, core::Dtype::Nvfp4));
    const double kw = n * core::to_watts(c.tdp.value + s.overhead_power_per_chip.value) / 1e3;
    const double usd = n * core::to_dollars_per_hour(s.price_per_chip_hour.value);
    o << strformat("%-24s %6d %9s %9s %9s %9s %9s %8s %9s\n", id,
                   s.chips_per_domain, fmt_num(n * peak_tf(c, core::Dtype::Bf16) / 1e3, 4).c_str(),
                   fmt_num(n * fp8 / 1e3, 4).c_str(), fp4 > 0 ? fmt_num(n * fp4 / 1e3, 4).c_str() : "-",
                   fmt_num(n * core::to_gib(c.hbm_capacity.value) / 1024.0, 4).c_str(),
                   fmt_num(n * core::to_tbps(c.hbm_bandwidth.value), 4).c_str(), fmt_num(kw, 4).c_str(),
                   fmt_num(usd, 4).c_str());
    Json peaks = Json::object();
    for (const auto& [d, p] : c.peak) peaks[core::dtype_name(d)] = core::to_tflops(p.value);
    j.push_back({{"system", id},
                 {"chip", c.id},
                 {"peak_tflops_by_dtype", peaks},
                 {"hbm_gib", core::to_gib(c.hbm_capacity.value)},
                 {"hbm_tb_s", core::to_tbps(c.hbm_bandwidth.value)},
                 {"scale_up_gb_s_per_chip", scale_up_gbs(s)},
                 {"tdp_w", core::to_watts(c.tdp.value)},
                 {"price_per_chip_hour_usd", core::to_dollars_per_hour(s.price_per_chip_hour.value)},
                 {"price_estimated", s.price_per_chip_hour.confidence != hw::Confidence::Published},
                 {"chips_per_domain", s.chips_per_domain},
                 {"domain_power_kw", kw},
                 {"domain_price_per_hour_usd", usd}});
  }
  o << "  (* price estimated: no public list price; power includes the system's per-chip overhead)\n\n";
  return j;
}

Json models(const hw::Catalog& cat, const std::string& models_dir, const calib::Params& params, std::ostream& o) {
  Json j = Json::array();
  o << "== Models: size, FLOPs, memory, and the fewest chips that hold them\n\n";
  for (const char* id : {"llama3.1-405b", "deepseek-v3"}) {
    const auto m = workload::load_model(id, models_dir);
    const auto pc = workload::count_params(m);
    const long long seq = std::min<long long>(m.max_position, 8192) >= 8192 ? 8192 : 4096;
    const auto tf = workload::train_flops_per_token(m, seq, workload::RecomputeKind::None);
    const double prefill = workload::prefill_flops_per_token(m, seq);
    const double decode = workload::decode_flops_per_token(m, seq);
    const double train_state_gib = 16.0 * pc.total / 1073741824.0;
    const double weights_fp8 = core::to_gib(workload::weight_bytes(m, core::Dtype::Fp8));
    o << id << ": " << fmt_num(pc.total / 1e9, 4) << "B parameters (" << fmt_num(pc.active / 1e9, 4)
      << "B active per token)\n";
    o << "  training: " << fmt_num(tf.model / 1e9, 4) << " GFLOP per token at " << seq
      << " tokens (6N + attention); weights+grads+Adam state " << fmt_num(train_state_gib / 1024.0, 4)
      << " TiB (16 B/param) before activations\n";
    o << "  serving:  " << fmt_num(prefill / 1e9, 4) << " GFLOP per prefill token, " << fmt_num(decode / 1e9, 4)
      << " GFLOP per decode step at " << seq << " context; weights " << fmt_num(weights_fp8, 4)
      << " GiB in fp8, KV cache " << fmt_num(core::to_bytes(workload::kv_bytes_per_token(m, core::Dtype::Bf16)) / 1024.0, 4)
      << " KiB per token (bf16)\n";
    Json jm = {{"model", id}, {"params_total", report::as_count(pc.total)}, {"params_active", report::as_count(pc.active)}, {"seq_len", seq},
               {"train_model_flop_per_token", tf.model}, {"prefill_flop_per_token", prefill},
               {"decode_flop_per_token", decode}, {"train_state_gib", train_state_gib},
               {"weights_fp8_gib", weights_fp8}};
    Json fits = Json::array();
    o << strformat("  %-24s %-58s %s\n", "fewest chips on", "to train (plan)", "to serve in fp8, one 8k-token sequence (tp×pp)");
    for (const char* sid : kSystems) {
      const auto& s = cat.system(sid);
      const auto t = engine::fewest_chips_to_train(s, m, seq, core::Dtype::Bf16, params);
      const auto v = engine::fewest_chips_to_serve(s, m, core::Dtype::Fp8, 8192, params);
      auto doms = [&](long long chips) {
        return fmt_int((chips + s.chips_per_domain - 1) / s.chips_per_domain) + " " + s.domain_name + "(s)";
      };
      std::string ts = t.found ? fmt_int(t.chips) + " = " + doms(t.chips) + " (tp" + std::to_string(t.scenario.plan.tp) +
                                     " pp" + std::to_string(t.scenario.plan.pp) + ", ZeRO-" +
                                     mapping::zero_name(t.scenario.plan.zero) + ", recompute " +
                                     mapping::recompute_name(t.scenario.plan.recompute) + ")"
                               : "none found";
      std::string vs = v.found ? fmt_int(v.chips) + " (" + std::to_string(v.tp) + "×" + std::to_string(v.pp) + ", " +
                                     fmt_num(core::to_gib(v.per_chip), 3) + " GiB/chip)"
                               : "none found";
      o << strformat("  %-24s %-58s %s\n", sid, ts.c_str(), vs.c_str());
      fits.push_back({{"system", sid}, {"train_chips", t.found ? t.chips : 0},
                      {"train_memory_per_chip_gib", t.found ? core::to_gib(t.result.memory.total()) : 0.0},
                      {"serve_chips", v.found ? v.chips : 0}, {"serve_tp", v.tp}, {"serve_pp", v.pp}});
    }
    jm["fewest_chips"] = fits;
    j.push_back(jm);
    o << "\n";
  }
  return j;
}

}  // namespace

int run_demo(const Args& args) {
  CLI::App app{"Trn3 Gen2 UltraServer beside GB300 NVL72 and Trn2: hardware, models, fit, time to train, serving",
               "xpusim demo"};
  bool json = false;
  app.add_flag("--json", json, "print one JSON document");
  std::string calibration_file;
  add_calibration_option(app, calibration_file);
  add_catalog_option(app);
  if (int rc = parse(app, args); rc >= 0) return rc;
  const calib::Params params = load_calibration(calibration_file);
  const hw::Catalog cat = load_catalog();
  const std::string models_dir = data_dir() + "/models";
  std::ostringstream text;
  Json j;
  j["hardware"] = hardware(cat, text);
  j["models"] = models(cat, models_dir, params, text);
  j["scale"] = demo_scale(cat, models_dir, params, text);
  j["serving"] = demo_serving(cat, models_dir, params, text);
  j["trace"] = demo_trace(cat, data_dir(), params, text);
  const Json inputs = {{"calibration", calibration_file.empty() ? Json(nullptr) : Json(calibration_file)}};
  if (json) std::cout << report::document("demo", provenance(true, true, calibration_file), inputs, j).dump(2) << "\n";
  else std::cout << "xpusim demo — AWS Trainium3 UltraServer beside NVIDIA GB300 NVL72 and Trainium2\n\n" << text.str();
  return 0;
}

}  // namespace xpusim::cli
