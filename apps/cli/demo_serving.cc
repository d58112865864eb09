// The serving part of `xpusim demo`: for one stated load and SLO, the fewest chips and the plan
// that serve it on each system (serve::compare_systems), side by side with tokens/s per chip,
// $ per million output tokens and J per output token.

#include "demo_serving.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xpusim/core/format.h"
#include "xpusim/report/serve_report.h"
#include "xpusim/serve/search.h"

namespace xpusim::cli {

namespace {

using core::fmt_int;
using core::fmt_num;
using core::strformat;
using Json = nlohmann::ordered_json;

struct DemoLoad {
  const char* model;
  double rate_per_s;
};

// The load: 1,024 prompt tokens and 1,024 output tokens per request, Poisson arrivals. Rates
// chosen so that every system needs more than one replica.
constexpr long long kIn = 1024, kOut = 1024;
constexpr double kTtftSloS = 2.0, kTpotSloMs = 50.0;
const DemoLoad kLoads[] = {{"llama3.3-70b", 40.0}, {"deepseek-v3", 20.0}};

/// Chips of one replica: a tp group (times its pipeline stages), or with DP attention the ep chips
/// its experts span.
long long replica_chips(const serve::PlanCandidate& c) {
  return (c.dp_attention ? c.ep : c.tp) * static_cast<long long>(c.pp);
}

std::string plan_text(const serve::PlanCandidate& c) {
  const long long engine = replica_chips(c);
  std::string s = c.dp_attention ? "DP-attn" : "TP" + std::to_string(c.tp);
  if (c.pp > 1) s += " PP" + std::to_string(c.pp);
  if (c.ep > 1) s += " EP" + std::to_string(c.ep);
  if (c.prefill_chips > 0) {
    s += ", " + fmt_int(c.prefill_chips / engine) + "P+" + fmt_int((c.chips - c.prefill_chips) / engine) + "D";
  } else {
    s += " x " + fmt_int(c.chips / engine);
  }
  return s + ", " + fmt_int(c.max_num_seqs) + " seqs";
}

}  // namespace

nlohmann::ordered_json demo_serving(const hw::Catalog& cat, const std::string& models_dir, const calib::Params& params,
                                    std::ostream& o) {
  Json j = Json::array();
  serve::ServeEnv env{&cat, models_dir, &params};
  const auto systems = serve::default_compare_systems();
  o << "== Serving: fewest chips for a request rate within an SLO (1,024 in / 1,024 out per request,\n"
       "   Poisson arrivals; SLO TTFT p90 <= "
    << fmt_num(kTtftSloS, 2) << " s and TPOT p90 <= " << fmt_num(kTpotSloMs, 2)
    << " ms; fp8 weights, math and KV cache;\n"
       "   default framework per chip: TensorRT-LLM on NVIDIA, NxD Inference on Trainium; plans tried:\n"
       "   TP within the scale-up domain (EP = TP for MoE; for MoE also DP attention beside EP groups)\n"
       "   x max_num_seqs 64 or 256, colocated or prefill:decode pools 1:1 (also 2:1, 1:2, 3:1, 1:3);\n"
       "   each candidate simulated request by request)\n\n";
  for (const auto& load : kLoads) {
    serve::SearchSpec spec;
    spec.base.model = load.model;
    spec.base.precision = "fp8";
    spec.base.load.in_len = kIn;
    spec.base.load.out_len = kOut;
    spec.base.load.seed = 1;
    spec.rate_per_s = load.rate_per_s;
    spec.ttft_p90_slo = core::seconds(kTtftSloS);
    spec.tpot_p90_slo = core::milliseconds(kTpotSloMs);
    spec.requests = 400;
    spec.tp_candidates = {1, 2, 4, 8, 16, 32, 64};
    spec.max_num_seqs_candidates = {64, 256};
    const auto res = serve::compare_systems(spec, systems, env);
    o << load.model << " at " << fmt_num(load.rate_per_s, 3) << " requests/s ("
      << fmt_int(static_cast<long long>(load.rate_per_s * kOut)) << " output tokens/s):\n";
    o << strformat("  %-22s %6s  %-26s %9s %9s %10s %9s %8s\n", "system", "chips", "plan (per replica)",
                   "TTFT p90", "TPOT p90", "tok/s/chip", "$/M tok", "J/tok");
    for (const auto& r : res) {
      const auto& sys = cat.system(r.system);
      const bool price_est = sys.price_per_chip_hour.confidence != hw::Confidence::Published;
      Json jr = {{"model", load.model}, {"system", r.system}, {"rate_per_s", load.rate_per_s},
                 {"in_len", kIn}, {"out_len", kOut}, {"ttft_p90_slo_s", kTtftSloS},
                 {"tpot_p90_slo_ms", kTpotSloMs}, {"found", r.found}};
      if (!r.found) {
        o << strformat("  %-22s %6s  %s\n", r.system.c_str(), "-", ("no plan: " + r.best.note).substr(0, 90).c_str());
        jr["reason"] = r.best.note;
        j.push_back(jr);
        continue;
      }
      const auto& c = r.best;
      o << strformat("  %-22s %6s  %-26s %7s ms %6s ms %10s %8s%s %7s*\n", r.system.c_str(), fmt_int(c.chips).c_str(),
                     plan_text(c).c_str(), fmt_int(static_cast<long long>(c.ttft_p90_ms + 0.5)).c_str(),
                     fmt_num(c.tpot_p90_ms, 3).c_str(), fmt_num(c.output_tokens_per_s_per_chip, 4).c_str(),
                     fmt_num(c.dollars_per_million_output_tokens, 3).c_str(), price_est ? "*" : " ",
                     fmt_num(c.joules_per_output_token, 3).c_str());
      jr["chips"] = c.chips;
      jr["plan"] = {{"tp", c.tp}, {"pp", c.pp}, {"ep", c.ep}, {"dp_attention", c.dp_attention},
                    {"replicas", c.prefill_chips > 0 ? 0 : c.chips / replica_chips(c)},
                    {"prefill_chips", c.prefill_chips}, {"max_num_seqs", c.max_num_seqs}};
      jr["ttft_p90_ms"] = c.ttft_p90_ms;
      jr["tpot_p90_ms"] = c.tpot_p90_ms;
      jr["output_tokens_per_s_per_chip"] = c.output_tokens_per_s_per_chip;
      jr["cost_usd_per_million_output_tokens"] = c.dollars_per_million_output_tokens;
      jr["price_estimated"] = price_est;
      jr["energy_j_per_output_token"] = c.joules_per_output_token;
      jr["energy_estimated"] = true;
      if (r.software_range) {
        const auto& sr = *r.software_range;
        o << strformat("  %-22s %6s  software: %s; the same plan %s .. %s ms TPOT p90, %s .. %s ms TTFT p90\n", "", "",
                       sr.central.c_str(), fmt_num(sr.high.tpot_p90_ms, 3).c_str(), fmt_num(sr.low.tpot_p90_ms, 3).c_str(),
                       fmt_int(static_cast<long long>(sr.high.ttft_p90_ms + 0.5)).c_str(),
                       fmt_int(static_cast<long long>(sr.low.ttft_p90_ms + 0.5)).c_str());
        jr["software_range"] = report::software_range_json(sr);
      }
      j.push_back(jr);
    }
    o << "\n";
  }
  o << "  (* estimated: energy from TDP and busy time; prices with no public list price. P+D: prefill and\n"
       "   decode engines of a disaggregated replica. software: the Neuron stack a Trainium line assumes, and\n"
       "   the same plan from GPU-grade serving software (TensorRT-LLM's overheads, Blackwell's kernel\n"
       "   efficiencies on the chip's peaks) to the slowest validated Neuron stack; docs/serving.md\n"
       "   \"Software range\". `xpusim serve --compare` runs other loads.)\n\n";
  return j;
}

}  // namespace xpusim::cli
