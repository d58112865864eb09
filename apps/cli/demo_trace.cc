// The trace part of `xpusim demo`: the Mooncake conversation trace's first 2,000 requests (Kimi's
// production chat traffic, long prompts that repeat earlier turns' blocks) on a Trn3 UltraServer
// slice and a GB300 NVL72 slice, each with the prefix cache off and on (serve::run_scenario).

#include "demo_trace.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "xpusim/core/format.h"
#include "xpusim/serve/scenario.h"

namespace xpusim::cli {

namespace {

using core::fmt_int;
using core::fmt_num;
using core::strformat;
using Json = nlohmann::ordered_json;

constexpr long long kRequests = 2000;
constexpr const char* kModel = "llama3.3-70b";

struct DemoDeployment {
  const char* system;
  long long chips;
  int tp;
};
// Deployments that carry the trace's rate without the cache (neither overloaded): Trn3 engines
// encode one bucketed prompt per step (NxD Inference), so they need more of them.
const DemoDeployment kDeployments[] = {{"trn3-ultraserver-gen2", 64, 8}, {"gb300-nvl72", 8, 2}};

/// Host memory per engine of the demo's KV offload tier (--kv-tier host:400GiB): stated, within
/// the catalog's host_memory_per_node (a GB300 engine of TP 2 has one Grace's 480 GB = 447 GiB of
/// LPDDR5X, the OS's share left; an 8-chip Trn3 Gen2 engine spans two 768 GiB servers).
constexpr double kHostTierGiB = 400;

/// The cache as the demo runs it: off, on, and on with the host tier behind it.
enum class CacheMode { Off, On, OnWithHost };

serve::ServeScenario trace_scenario(const DemoDeployment& d, const std::vector<serve::Request>& trace, CacheMode mode) {
  const bool cache = mode != CacheMode::Off;
  serve::ServeScenario sc;
  sc.system = d.system;
  sc.model = kModel;
  sc.chips = d.chips;
  sc.tp = d.tp;
  sc.precision = "fp8";
  sc.prefix_caching = cache;
  if (mode == CacheMode::OnWithHost) sc.kv_host = core::gib(kHostTierGiB);
  sc.load.arrival = serve::ArrivalKind::Trace;
  sc.load.trace = trace;
  sc.load.requests = static_cast<long long>(trace.size());
  for (const auto& r : trace) {
    sc.load.in_len = std::max(sc.load.in_len, r.in_len);
    sc.load.out_len = std::max(sc.load.out_len, r.out_len);
  }
  return sc;
}

}  // namespace

nlohmann::ordered_json demo_trace(const hw::Catalog& cat, const std::string& data_dir, const calib::Params& params,
                                  std::ostream& o) {
  const std::string file = data_dir + "/traces/mooncake-conversation.csv";
  std::vector<serve::Request> trace = serve::read_arrivals_file(file).requests;
  trace.resize(std::min<size_t>(trace.size(), kRequests));
  serve::ServeEnv env{&cat, data_dir + "/models", &params};
  o << "== A real trace: the Mooncake conversation trace's first " << fmt_int(static_cast<long long>(trace.size()))
    << " requests (Kimi's chat traffic, data/traces; prompts\n"
       "   of 12k tokens on average that repeat earlier turns' 512-token blocks), "
    << kModel << " fp8, 8 engines of TP8\n"
       "   on Trn3 and 4 of TP2 on GB300 (each carries the rate uncached), the prefix cache (each engine's KV cache,\n"
       "   LRU; on Neuron stated, not its default) off, on, and on with 400 GiB of host memory per engine behind it\n"
       "   (KV offload: evicted blocks load back over the host link; docs/serving.md, \"Prefix caching\", \"KV offload\")\n\n";
  o << strformat("  %-22s %6s %-5s %6s %10s %10s %9s %10s %8s\n", "system", "chips", "cache", "hit", "TTFT p50",
                 "TTFT p90", "TPOT p90", "busy s", "$/M tok");
  Json j = Json::array();
  for (const auto& d : kDeployments) {
    for (const CacheMode mode : {CacheMode::Off, CacheMode::On, CacheMode::OnWithHost}) {
      const bool cache = mode != CacheMode::Off;
      const char* label = mode == CacheMode::Off ? "off" : mode == CacheMode::On ? "on" : "+host";
      const auto rep = serve::run_scenario(trace_scenario(d, trace, mode), env);
      Json jr = {{"system", d.system}, {"model", kModel}, {"chips", d.chips}, {"tp", d.tp}, {"prefix_cache", cache}};
      if (mode == CacheMode::OnWithHost) jr["kv_host_gib_per_engine"] = kHostTierGiB;
      if (!rep) {
        o << strformat("  %-22s %6s %-5s %s\n", d.system, fmt_int(d.chips).c_str(), label, rep.error().c_str());
        jr["reason"] = rep.error();
        j.push_back(jr);
        continue;
      }
      const auto& s = rep->sim;
      o << strformat("  %-22s %6s %-5s %5.1f%% %7s ms %7s ms %6s ms %10s %8s*\n", d.system, fmt_int(d.chips).c_str(),
                     label, 100 * s.prefix.token_hit_rate(), fmt_int(std::llround(s.ttft_ms.p50)).c_str(),
                     fmt_int(std::llround(s.ttft_ms.p90)).c_str(), fmt_num(s.tpot_ms.p90, 3).c_str(),
                     fmt_int(std::llround(s.busy_time.base())).c_str(),
                     fmt_num(rep->dollars_per_million_output_tokens, 3).c_str());
      jr["requests"] = s.requests;
      jr["token_hit_ratio"] = s.prefix.token_hit_rate();
      jr["ttft_p50_ms"] = s.ttft_ms.p50;
      jr["ttft_p90_ms"] = s.ttft_ms.p90;
      jr["tpot_p90_ms"] = s.tpot_ms.p90;
      jr["engine_busy_s"] = s.busy_time.base();
      jr["cost_usd_per_million_output_tokens"] = rep->dollars_per_million_output_tokens;
      j.push_back(jr);
    }
  }
  o << "  (hit: prompt tokens served from the cache, the host tier's included; busy s: engine time in steps,\n"
       "   summed over the engines;\n"
       "   * estimated prices. `xpusim trace-stats` replays a trace's caches alone; `serve --search --arrivals`\n"
       "   finds the fewest chips for a trace.)\n\n";
  return j;
}

}  // namespace xpusim::cli
