#include "xpusim/core/check.h"
#include "xpusim/serve/scenario.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"
#include "xpusim/net/collective.h"
#include "xpusim/net/topology.h"
#include "xpusim/cost/energy.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::serve {

using core::Dtype;

namespace {

std::string fmt(double v, int prec = 1) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(prec);
  os << v;
  return os.str();
}

bool is_low(Dtype d) { return d != Dtype::Bf16 && d != Dtype::Fp16 && d != Dtype::Fp32 && d != Dtype::Tf32; }

// Chips a topology is built for: the engine group, widened to whole scale-up domains when it
// spans more than one.
long long topo_chips(const hw::SystemSpec& sys, long long group) {
  const long long dom = std::max(1, sys.chips_per_domain);
  if (group <= dom) return group;
  return ((group + dom - 1) / dom) * dom;
}

}  // namespace

Dtype precision_dtype(const std::string& name, const std::string& path) {
  auto d = core::parse_dtype(name);
  if (!d) core::fail(path, "unknown precision", name, core::join(core::all_dtype_names()),
                     core::did_you_mean(name, core::all_dtype_names()));
  return *d;
}

int default_tp(const hw::SystemSpec& sys, const workload::ModelSpec& m, Dtype weights,
               long long chips, bool attention_dp) {
  if (attention_dp) return 1;
  const double w = workload::weight_bytes(m, weights).base();
  const double hbm = sys.chip.hbm_capacity.value.base();
  const long long cap = std::max<long long>(1, chips > 0 ? chips : sys.chips_per_domain);
  int best = 1;
  for (int t = 1; t <= 64 && t <= cap; t *= 2) {
    if (m.heads % t != 0) break;
    if (chips > 0 && chips % t != 0) break;
    best = t;
    // Weights at most 60% of HBM leave room for a useful KV cache.
    if (w / t <= 0.6 * hbm) return t;
  }
  return best;
}

core::Result<ServeReport> run_scenario(const ServeScenario& in, const ServeEnv& env) {
  XS_CHECK(env.catalog != nullptr, "run_scenario: no catalog");
  ServeReport rep;
  ServeScenario sc = in;
  const hw::SystemSpec& sys = env.catalog->system(sc.system, "system");
  const workload::ModelSpec model = workload::load_model(sc.model, env.models_dir);
  core::Diagnostics diags;

  const Dtype math = precision_dtype(sc.precision, "precision");
  const Dtype wdt = sc.weight_precision.empty() ? math : precision_dtype(sc.weight_precision, "weight_precision");
  Dtype kvdt = Dtype::Bf16;
  if (!sc.kv_precision.empty()) kvdt = precision_dtype(sc.kv_precision, "kv_precision");
  else if (is_low(math)) kvdt = Dtype::Fp8;
  if (sc.kv_precision.empty()) sc.kv_precision = core::dtype_name(kvdt);

  const Framework fw = sc.framework.value_or(default_framework(sys.chip));
  if (!sc.framework) rep.assumptions.push_back("framework: " + framework_name(fw) + " (default for " + sys.chip.id + ")");
  sc.framework = fw;
  XS_CHECK(env.calibration != nullptr, "ServeEnv::calibration not set");
  FrameworkProfile prof = framework_profile(fw, sys.chip, *env.calibration);
  const net::TopologyOptions topo_opts{net::network_params(*env.calibration), std::nullopt};
  apply_framework_version(prof, sc.framework_version);
  if (!prof.gqa_kv_sharing)
    rep.assumptions.push_back(framework_name(fw) + " " + sc.framework_version +
                              ": decode attention reads the KV cache once per query head (pre-XQA)");
  if (sc.overlap_ep_comm) prof.overlap_ep_comm = true;

  if (sc.attention_dp && sc.tp > 1) diags.error("tp", "DP attention needs tp = 1", std::to_string(sc.tp));
  if (sc.pp < 1) diags.error("pp", "must be at least 1", std::to_string(sc.pp));
  if (sc.ep < 1) diags.error("ep", "must be at least 1", std::to_string(sc.ep));
  diags.throw_if_any();
  if (sc.tp <= 0) {
    const long long per_engine_chips = sc.chips > 0 ? sc.chips / std::max(1, sc.pp) : 0;
    sc.tp = default_tp(sys, model, wdt, per_engine_chips, sc.attention_dp);
    rep.assumptions.push_back("tp = " + std::to_string(sc.tp) +
                              " (smallest power of two with weights <= 60% of HBM per chip)");
  }
  const long long engine_chips = sc.attention_dp ? 1 : static_cast<long long>(sc.tp) * sc.pp;
  if (sc.chips <= 0) sc.chips = sc.attention_dp ? sc.ep : engine_chips;
  // Layout checks: every one reported at once.
  const bool pads_heads = fw == Framework::NeuronTnx || fw == Framework::NeuronNxdi;
  if (model.heads % sc.tp != 0 && pads_heads)
    rep.assumptions.push_back("heads padded to a multiple of tp (" + std::to_string(sc.tp) + "), as Neuron does");
  if (model.heads % sc.tp != 0 && !pads_heads)
    diags.error("tp", "tp must divide the attention heads (" + std::to_string(model.heads) + ")",
                std::to_string(sc.tp));
  if (!pads_heads && model.kv_heads > 0 && model.kv_heads % sc.tp != 0 && sc.tp % model.kv_heads != 0)
    diags.error("tp", "tp and the KV heads (" + std::to_string(model.kv_heads) + ") must divide one another",
                std::to_string(sc.tp));
  if (sc.pp > model.layers) diags.error("pp", "more pipeline stages than layers", std::to_string(sc.pp));
  if (sc.ep > 1 && (!model.is_moe() || model.moe.num_experts % sc.ep != 0))
    diags.error("ep", model.is_moe() ? "ep must divide the experts (" + std::to_string(model.moe.num_experts) + ")"
                                     : "ep > 1 needs a mixture-of-experts model",
                std::to_string(sc.ep));
  const long long pool_chips = sc.prefill_chips > 0 ? sc.prefill_chips : sc.chips;
  if (sc.prefill_chips > 0 && sc.prefill_chips >= sc.chips)
    diags.error("prefill_chips", "the prefill pool must leave chips for the decode pool",
                std::to_string(sc.prefill_chips), "< chips (" + std::to_string(sc.chips) + ")");
  if (pool_chips % engine_chips != 0 || (sc.chips - (sc.prefill_chips > 0 ? sc.prefill_chips : 0)) % engine_chips != 0)
    diags.error("chips", "chips must be a multiple of tp x pp (" + std::to_string(engine_chips) + ")",
                std::to_string(sc.chips));
  if (sc.attention_dp && sc.chips % sc.ep != 0)
    diags.error("chips", "chips must be a multiple of ep with DP attention", std::to_string(sc.chips));
  if (sys.max_chips.value > 0 && sc.chips > sys.max_chips.value)
    diags.error("chips", "more chips than the system's largest cluster (" + std::to_string(sys.max_chips.value) + ")",
                std::to_string(sc.chips));
  if (sc.load.requests < 1 && sc.load.arrival != ArrivalKind::Trace)
    diags.error("requests", "must be at least 1", std::to_string(sc.load.requests));
  if (sc.load.arrival == ArrivalKind::Poisson && !(sc.load.rate_per_s > 0))
    diags.error("rate", "must be positive", fmt(sc.load.rate_per_s, 3));
  if (sc.draft_len < 0) diags.error("draft_len", "must be >= 0", std::to_string(sc.draft_len));
  if (sc.acceptance < 0 || sc.acceptance >= 1) diags.error("acceptance", "must be in [0, 1)", fmt(sc.acceptance, 3));
  diags.throw_if_any();

  // Scheduler: the framework's defaults, then the user's overrides.
  SimSpec spec;
  auto& s = spec.scheduler;
  s.kind = sc.scheduler.value_or(prof.scheduler);
  s.kv_policy = sc.kv_policy.value_or(prof.kv_policy);
  s.chunked_prefill = sc.chunked_prefill.value_or(prof.chunked_prefill);
  s.max_num_seqs = sc.max_num_seqs > 0 ? sc.max_num_seqs : prof.max_num_seqs;
  s.max_batched_tokens = sc.max_batched_tokens > 0 ? sc.max_batched_tokens : prof.max_batched_tokens;
  s.static_batch = sc.static_batch;
  s.block_size = sc.block_size > 0 ? sc.block_size : prof.block_size;

  ReplicaPlan plan;
  plan.plan.tp = sc.tp;
  plan.plan.pp = sc.pp;
  plan.plan.ep = sc.ep;
  plan.plan.weight_dtype = wdt;
  plan.plan.math_dtype = math;
  plan.plan.kv_dtype = kvdt;
  plan.attention_dp = sc.attention_dp;
  std::unique_ptr<net::Topology> topo;
  if (plan.group_chips() > 1)
    topo = std::make_unique<net::Topology>(net::Topology::build(sys, topo_chips(sys, plan.group_chips()), topo_opts));
  StepCostModel cost(sys, model, plan, prof, topo.get());
  const auto& mem = cost.memory();
  rep.memory = mem;
  auto breakdown = [&]() {
    return "per chip: weights " + fmt(core::to_gib(mem.weights)) + " GiB + workspace " +
           fmt(core::to_gib(mem.workspace)) + " GiB vs HBM " + fmt(core::to_gib(mem.hbm)) +
           " GiB (tp=" + std::to_string(sc.tp) + ", pp=" + std::to_string(sc.pp) + ", ep=" +
           std::to_string(sc.ep) + ", weights " + core::dtype_name(wdt) + ")";
  };
  if (mem.kv_tokens <= 0)
    return core::make_error("model does not fit: " + breakdown() + "; no room for a KV cache");
  // The longest request must fit in one engine's KV cache.
  long long longest = sc.load.in_len + sc.load.out_len;
  for (const auto& r : sc.load.trace) longest = std::max(longest, r.in_len + r.out_len);
  if (sc.load.lengths == LengthDist::OpenOrcaLike) longest = std::min<long long>(longest, 2048);
  if (mem.kv_tokens < longest)
    return core::make_error("model does not fit: KV cache holds " + std::to_string(mem.kv_tokens) +
                            " tokens per engine, a request needs " + std::to_string(longest) + "; " + breakdown());

  // Speculative decoding: draft engine on the same chips.
  std::unique_ptr<workload::ModelSpec> draft_model;
  std::unique_ptr<StepCostModel> draft;
  spec.spec.draft_len = sc.draft_len;
  spec.spec.acceptance = sc.acceptance;
  if (sc.draft_len > 0 && !sc.draft_model.empty()) {
    draft_model = std::make_unique<workload::ModelSpec>(workload::load_model(sc.draft_model, env.models_dir));
    ReplicaPlan dp = plan;
    dp.plan.tp = std::min(sc.tp, draft_model->heads);
    while (dp.plan.tp > 1 && draft_model->heads % dp.plan.tp != 0) dp.plan.tp /= 2;
    draft = std::make_unique<StepCostModel>(sys, *draft_model, dp, prof, topo.get());
    spec.spec.draft = draft.get();
  }

  // Pools.
  const long long engines = sc.attention_dp ? pool_chips : pool_chips / engine_chips;
  spec.pool = PoolSpec{&cost, static_cast<int>(engines)};
  std::unique_ptr<net::Topology> whole;
  if (sc.prefill_chips > 0) {
    spec.disaggregated = true;
    const long long dec = (sc.chips - sc.prefill_chips) / engine_chips;
    spec.decode_pool = PoolSpec{&cost, static_cast<int>(dec)};
    rep.decode_engines = static_cast<int>(dec);
    // KV transfer: each prefill chip sends its shard of the cache to its decode counterpart.
    const long long n = topo_chips(sys, sc.chips);
    whole = std::make_unique<net::Topology>(net::Topology::build(sys, n, topo_opts));
    const double tokens = 1024;
    auto c = net::collective_cost(*whole, net::CollectiveKind::SendRecv, mem.kv_per_token * tokens,
                                  net::Group{2, sc.prefill_chips});
    spec.kv_transfer_latency = c.latency;
    spec.kv_transfer_per_token = (c.time - c.latency) / tokens;
  }
  spec.load = sc.load;
  spec.timeout = sc.timeout;
  if (sc.load.arrival == ArrivalKind::Trace) spec.load.requests = static_cast<long long>(sc.load.trace.size());

  rep.sim = simulate(spec);
  rep.scenario = sc;
  rep.framework = framework_name(fw);
  rep.engines = static_cast<int>(engines);
  rep.chips_used = sc.chips;
  const double dur = rep.sim.duration.base();
  if (dur > 0) {
    rep.output_tokens_per_s_per_chip = rep.sim.output_tokens_per_s / static_cast<double>(sc.chips);
    rep.goodput_requests_per_s = goodput(rep.sim, sc.ttft_slo, sc.tpot_slo);
    const double chip_busy = rep.sim.busy_time.base() * static_cast<double>(engine_chips);
    const double busy_frac = chip_busy / (dur * static_cast<double>(sc.chips));
    const auto e = cost::busy_energy_cost(sys, rep.sim.duration, busy_frac);
    const double chips = static_cast<double>(sc.chips);
    rep.power_per_chip_w = core::to_watts(e.average_power);
    if (rep.sim.output_tokens > 0) {
      const double tokens = static_cast<double>(rep.sim.output_tokens);
      rep.joules_per_output_token = core::to_joules(e.total_energy) * chips / tokens;
      rep.dollars_per_million_output_tokens = core::to_dollars(e.dollars) * chips * 1e6 / tokens;
    }
    rep.energy_estimated = true;
    rep.price_estimated = e.price_estimated;
  }
  StepWork w;
  w.decode_seqs = std::max<long long>(1, std::llround(rep.sim.mean_batch));
  w.decode_context = static_cast<double>(w.decode_seqs) * static_cast<double>(sc.load.in_len + sc.load.out_len / 2);
  rep.sample_decode_step = cost.cost(w);
  StepWork pw;
  pw.prefill_tokens = sc.load.in_len;
  pw.prefill_pairs = static_cast<double>(sc.load.in_len) * static_cast<double>(sc.load.in_len) / 2.0;
  pw.prefill_seqs = pw.sampled_prefills = 1;
  rep.sample_prefill_step = cost.cost(pw);
  return rep;
}

}  // namespace xpusim::serve
