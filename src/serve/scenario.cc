#include "xpusim/core/check.h"
#include "xpusim/serve/scenario.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>

#include "xpusim/compute/chip_model.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/limits.h"
#include "xpusim/core/suggest.h"
#include "xpusim/net/collective.h"
#include "xpusim/net/topology.h"
#include "xpusim/cost/energy.h"
#include "xpusim/mapping/memory.h"
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
               long long chips, bool attention_dp, double max_weight_share) {
  if (attention_dp) return 1;
  const double w = workload::weight_bytes(m, weights).base();
  const double hbm = sys.chip.hbm_capacity.value.base();
  const long long cap = std::max<long long>(1, chips > 0 ? chips : sys.chips_per_domain);
  int best = 1;
  for (int t = 1; t <= 64 && t <= cap; t *= 2) {
    if (!workload::tp_divides(m, t)) break;
    if (chips > 0 && chips % t != 0) break;
    best = t;
    // Weights at most max_weight_share of HBM leave room for a useful KV cache.
    if (w / t <= max_weight_share * hbm) return t;
  }
  return best;
}

namespace {

struct Precisions {
  Dtype math = Dtype::Bf16, weights = Dtype::Bf16, kv = Dtype::Bf16, state = Dtype::Bf16;
};

// Math, weight and KV dtypes; an unset KV precision is fp8 for low-precision math, else bf16.
Precisions resolve_precisions(ServeScenario& sc) {
  Precisions p;
  p.math = precision_dtype(sc.precision, "precision");
  p.weights = sc.weight_precision.empty() ? p.math : precision_dtype(sc.weight_precision, "weight_precision");
  if (!sc.kv_precision.empty()) p.kv = precision_dtype(sc.kv_precision, "kv_precision");
  else if (is_low(p.math)) p.kv = Dtype::Fp8;
  if (sc.kv_precision.empty()) sc.kv_precision = core::dtype_name(p.kv);
  const std::vector<std::string> states = {"bf16", "fp16", "fp32"};
  if (std::find(states.begin(), states.end(), sc.state_precision) == states.end())
    core::fail("state_precision", "not a Mamba state dtype the engines offer", sc.state_precision,
               core::join(states), core::did_you_mean(sc.state_precision, states));
  p.state = precision_dtype(sc.state_precision, "state_precision");
  return p;
}

// The software the run models: the framework, the version stated (or the default range when
// none is), and whether measurements stand behind that range.
void state_software(const FrameworkProfile& prof, ServeReport& rep) {
  rep.framework_version = prof.version;
  rep.framework_version_range = prof.version_range;
  rep.framework_version_validated = prof.version_validated;
  if (prof.version_range.empty()) return;
  const std::string name = framework_name(prof.framework);
  const std::string validated = prof.version_validated ? "validated" : "no measurements behind this range";
  if (prof.version.empty())
    rep.assumptions.push_back("software: " + name + ", version not stated: its default range " + prof.version_range +
                              " (" + validated + ")");
  else
    rep.assumptions.push_back("software: " + name + " " + prof.version + " (range " + prof.version_range + ", " +
                              validated + ")");
}

// The framework (default for the chip) and its profile with the version and overlap applied.
// A matmul precision the chip has no peak for is bad input unless the scenario allows the
// fallback: its weights are then stored in that format and its matmuls run in the nearest
// precision the chip has (weight-only quantisation, as W8A16 on Ampere or W4A8 on Hopper).
void check_math_precision(const ServeScenario& sc, const hw::ChipSpec& chip, Dtype math, ServeReport& rep) {
  if (chip.supports(math)) return;
  const std::string want = core::dtype_name(math);
  const std::string runs = core::dtype_name(compute::executed_dtype(chip, math));
  if (!sc.allow_fallback)
    core::fail("precision", chip.name + " has no " + want + " peak", want,
               "one of the chip's precisions: " + core::join(compute::precision_names(chip)),
               "--allow-fallback stores the weights as " + want + " and runs the matmuls as " + runs);
  rep.assumptions.push_back("precision " + want + ": " + chip.name + " has no " + want + " peak; weights stored " +
                            want + ", matmuls run as " + runs + " (fallback allowed)");
}

FrameworkProfile resolve_framework(ServeScenario& sc, const hw::SystemSpec& sys, const calib::Params& params,
                                   ServeReport& rep) {
  const Framework fw = sc.framework.value_or(default_framework(sys.chip));
  if (!sc.framework) rep.assumptions.push_back("framework: " + framework_name(fw) + " (default for " + sys.chip.id + ")");
  sc.framework = fw;
  FrameworkProfile prof = framework_profile(fw, sc.framework_version, sys.chip, params);
  state_software(prof, rep);
  if (!prof.gqa_kv_sharing)
    rep.assumptions.push_back(framework_name(fw) + " " + prof.version_range +
                              ": decode attention reads the KV cache once per query head (pre-XQA)");
  if (sc.overlap_ep_comm) prof.overlap_ep_comm = true;
  return prof;
}

// Degrees that must hold before tp can be chosen.
void check_degrees(const ServeScenario& sc) {
  core::Diagnostics diags;
  if (sc.attention_dp && sc.tp > 1) diags.error("tp", "DP attention needs tp = 1", std::to_string(sc.tp));
  if (sc.pp < 1) diags.error("pp", "must be at least 1", std::to_string(sc.pp));
  if (sc.ep < 1) diags.error("ep", "must be at least 1", std::to_string(sc.ep));
  diags.throw_if_any();
}

// tp (when unset) and chips (when unset: one engine, or ep chips with DP attention).
void fill_layout(ServeScenario& sc, const hw::SystemSpec& sys, const workload::ModelSpec& model,
                 Dtype weights, const calib::Params& params, ServeReport& rep) {
  if (sc.tp <= 0) {
    const double share = params.number("serving.defaults.max_weight_share_of_hbm");
    const long long per_engine_chips = sc.chips > 0 ? sc.chips / std::max(1, sc.pp) : 0;
    sc.tp = default_tp(sys, model, weights, per_engine_chips, sc.attention_dp, share);
    rep.assumptions.push_back("tp = " + std::to_string(sc.tp) + " (smallest power of two with weights <= " +
                              fmt(share * 100, 0) + "% of HBM per chip)");
  }
  const long long engine_chips = sc.attention_dp ? 1 : static_cast<long long>(sc.tp) * sc.pp;
  if (sc.chips <= 0) sc.chips = sc.attention_dp ? sc.ep : engine_chips;
}

// The model's split over the layout: heads, KV heads, layers, experts.
void check_model_split(const ServeScenario& sc, const workload::ModelSpec& model, bool pads_heads,
                       core::Diagnostics& diags) {
  if (model.heads % sc.tp != 0 && !pads_heads)
    diags.error("tp", "tp must divide the attention heads (" + std::to_string(model.heads) + ")",
                std::to_string(sc.tp));
  if (model.has_recurrent() && !workload::tp_divides(model, sc.tp) && (model.heads % sc.tp == 0 || pads_heads))
    diags.error("tp", "tp must divide the " + workload::tp_divisors_text(model), std::to_string(sc.tp));
  if (const int kv = workload::kv_heads_mismatching_tp(model, sc.tp); kv > 0 && !pads_heads)
    diags.error("tp", "tp and the KV heads (" + std::to_string(kv) + ") must divide one another",
                std::to_string(sc.tp));
  if (sc.pp > model.layers) diags.error("pp", "more pipeline stages than layers", std::to_string(sc.pp));
  mapping::check_moe_load_imbalance(diags, "moe_load_imbalance", sc.moe_load_imbalance, model, sc.ep);
  if (sc.ep > 1 && (!model.is_moe() || model.moe.num_experts % sc.ep != 0))
    diags.error("ep", model.is_moe() ? "ep must divide the experts (" + std::to_string(model.moe.num_experts) + ")"
                                     : "ep > 1 needs a mixture-of-experts model",
                std::to_string(sc.ep));
}

// Chips against the engines, the pools and the system.
void check_chips(const ServeScenario& sc, const hw::SystemSpec& sys, long long engine_chips,
                 core::Diagnostics& diags) {
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
}

// The load and speculative decoding.
void check_load(const ServeScenario& sc, core::Diagnostics& diags) {
  if (sc.load.requests < 1 && sc.load.arrival != ArrivalKind::Trace)
    diags.error("requests", "must be at least 1", std::to_string(sc.load.requests));
  if (sc.load.arrival == ArrivalKind::Poisson && !(sc.load.rate_per_s > 0))
    diags.error("rate", "must be positive", fmt(sc.load.rate_per_s, 3));
  else if (sc.load.arrival == ArrivalKind::Poisson &&
           static_cast<double>(sc.load.requests) / sc.load.rate_per_s > core::limits::kArrivalSpanSeconds)
    diags.error("rate", "requests / rate (the span of the arrivals) exceeds the limit",
                core::fmt_num(static_cast<double>(sc.load.requests) / sc.load.rate_per_s) + " s",
                "at most 2,592,000 s (30 days) of arrivals");
  if (sc.draft_len < 0) diags.error("draft_len", "must be >= 0", std::to_string(sc.draft_len));
  if (sc.acceptance < 0 || sc.acceptance >= 1) diags.error("acceptance", "must be in [0, 1)", fmt(sc.acceptance, 3));
}

// Every layout rule at once (InputError); heads padding is stated as an assumption.
void check_layout(const ServeScenario& sc, const hw::SystemSpec& sys, const workload::ModelSpec& model,
                  ServeReport& rep) {
  const bool pads_heads = sc.framework && is_neuron(*sc.framework);
  if (model.heads % sc.tp != 0 && pads_heads)
    rep.assumptions.push_back("heads padded to a multiple of tp (" + std::to_string(sc.tp) + "), as Neuron does");
  core::Diagnostics diags;
  const long long engine_chips = sc.attention_dp ? 1 : static_cast<long long>(sc.tp) * sc.pp;
  check_model_split(sc, model, pads_heads, diags);
  check_chips(sc, sys, engine_chips, diags);
  check_load(sc, diags);
  diags.throw_if_any();
}

// The framework's scheduler defaults, then the user's overrides.
SchedulerSpec scheduler_of(const ServeScenario& sc, const FrameworkProfile& prof) {
  SchedulerSpec s;
  s.kind = sc.scheduler.value_or(prof.scheduler);
  s.kv_policy = sc.kv_policy.value_or(prof.kv_policy);
  s.chunked_prefill = sc.chunked_prefill.value_or(prof.chunked_prefill);
  s.max_num_seqs = sc.max_num_seqs > 0 ? sc.max_num_seqs : prof.max_num_seqs;
  s.max_batched_tokens = sc.max_batched_tokens > 0 ? sc.max_batched_tokens : prof.max_batched_tokens;
  s.static_batch = sc.static_batch;
  s.block_size = sc.block_size > 0 ? sc.block_size : prof.block_size;
  s.schedule_ahead = prof.schedule_ahead;
  s.new_token_ratio = prof.new_token_ratio;
  s.max_prefill_seqs = prof.max_prefill_seqs;
  s.prefix_caching = sc.prefix_caching.value_or(prof.prefix_caching);
  s.layerwise_kv_load = prof.kv_load_layerwise;
  s.prefix_cache_tokens = sc.prefix_cache_tokens;
  s.static_shapes = StaticShapes{prof.static_shape_min_bucket, sc.compiled_seq_len};
  return s;
}

// Static shapes compile the decode batch: what --static-batch (static scheduler) or
// --max-num-seqs states, else the batch a closed-loop load puts on each engine (a deployment
// compiles the batch it serves), else the framework's default. Stated in the report.
void compile_decode_batch(const ServeScenario& sc, long long engines, SchedulerSpec& s, ServeReport& rep) {
  if (!s.static_shapes.on()) return;
  std::string why = "the framework default";
  if (s.batch_size() != s.max_num_seqs) {
    why = "static_batch";
  } else if (sc.max_num_seqs > 0) {
    why = "max_num_seqs";
  } else if (sc.load.arrival == ArrivalKind::ClosedLoop && sc.load.concurrency > 0 && engines > 0) {
    s.max_num_seqs = std::min(s.max_num_seqs, (sc.load.concurrency + engines - 1) / engines);
    why = "the closed-loop concurrency per engine";
  }
  rep.assumptions.push_back("static shapes: decode compiled for a batch of " + std::to_string(s.batch_size()) + " (" +
                            why + "), sequence buckets up to " +
                            (s.static_shapes.max_len > 0 ? std::to_string(s.static_shapes.max_len)
                                                         : std::string("the next power of two")));
}

// A stated MoE load imbalance, said where the run reports its assumptions.
void state_moe_load(const ServeScenario& sc, ServeReport& rep) {
  if (!sc.moe_load_imbalance) return;
  rep.assumptions.push_back("MoE load imbalance " + core::fmt_num(*sc.moe_load_imbalance) + " (input): the busiest of the " +
                            std::to_string(sc.ep) + " expert-parallel ranks receives that many times the mean tokens; "
                            "its expert GEMMs and all-to-all set each MoE layer's time");
}

ReplicaPlan replica_plan(const ServeScenario& sc, const Precisions& p) {
  ReplicaPlan plan;
  plan.plan.tp = sc.tp;
  plan.plan.pp = sc.pp;
  plan.plan.ep = sc.ep;
  plan.plan.weight_dtype = p.weights;
  plan.plan.math_dtype = p.math;
  plan.plan.kv_dtype = p.kv;
  plan.plan.state_dtype = p.state;
  plan.plan.moe_load_imbalance = sc.moe_load_imbalance.value_or(1.0);
  plan.attention_dp = sc.attention_dp;
  return plan;
}

// Expected infeasibility: no room for a KV cache, or the longest request (by the requested
// lengths; drawn lengths spread around them) does not fit one engine's cache.
std::optional<std::string> memory_refusal(const ServeScenario& sc, const ReplicaMemory& mem, Dtype weights) {
  const std::string breakdown =
      "per chip: weights " + fmt(core::to_gib(mem.weights)) + " GiB + workspace " + fmt(core::to_gib(mem.workspace)) +
      " GiB vs HBM " + fmt(core::to_gib(mem.hbm)) + " GiB (tp=" + std::to_string(sc.tp) + ", pp=" +
      std::to_string(sc.pp) + ", ep=" + std::to_string(sc.ep) + ", weights " + core::dtype_name(weights) + ")";
  if (mem.kv_tokens <= 0 && mem.kv_capacity.base() <= 0 && mem.weights + mem.draft_weights + mem.workspace < mem.hbm)
    return "no KV cache: " + breakdown + " leaves room, but the framework gives the KV cache none of it "
           "(its kv_memory_fraction, the share of the HBM left after the weights, is 0)";
  if (mem.kv_tokens <= 0) return "model does not fit: " + breakdown + "; no room for a KV cache";
  // A request needs its tokens' KV (none without attention) and its recurrent state, with a state
  // per verified token besides under speculative decoding.
  long long longest = sc.load.in_len + sc.load.out_len;
  for (const auto& r : sc.load.trace) longest = std::max(longest, r.in_len + r.out_len);
  SpecDecodeSpec spec;
  spec.draft_len = sc.draft_len;
  const long long need = mem.token_units * longest + mem.state_tokens * spec.states_per_sequence();
  if (mem.kv_tokens < need)
    return "model does not fit: " + std::string(mem.token_units ? "KV" : "state") + " cache holds " +
           std::to_string(mem.kv_tokens) + (mem.token_units ? " tokens" : " sequence states") +
           " per engine, a request needs " + std::to_string(need) + "; " + breakdown;
  return std::nullopt;
}

/// What a run builds and the simulation points to: topologies and step-cost models.
struct Build {
  std::unique_ptr<net::Topology> topo, whole;
  std::unique_ptr<StepCostModel> cost, draft;
  std::unique_ptr<workload::ModelSpec> draft_model;
  SimSpec spec;
};

// Self-speculative decoding with the target's own MTP module (`draft_model: mtp`): a one-layer
// draft sharded as the target, whose embedding and LM head are the target's, so it adds only the
// module's share of the target's weights per chip.
void add_mtp_draft(const ServeEnv& env, const hw::SystemSpec& sys, const workload::ModelSpec& target,
                   const ReplicaPlan& plan, const FrameworkProfile& prof, Build& b, ServeReport& rep) {
  if (target.mtp_modules < 1)
    core::fail("draft_model", "the model ships no multi-token-prediction module", "mtp",
               "a model whose config has num_nextn_predict_layers >= 1 (DeepSeek-V3), or a draft model id");
  b.draft_model = std::make_unique<workload::ModelSpec>(workload::mtp_draft_model(target));
  b.draft = std::make_unique<StepCostModel>(sys, *b.draft_model, plan, prof, mapping::memory_params(*env.calibration),
                                            b.topo.get());
  const double share = workload::mtp_module_params(target) / workload::count_params(target).total;
  b.cost->hold_draft_weights(b.cost->memory().weights * share);
  rep.assumptions.push_back("draft: the model's own MTP module (its norms, eh_proj 2h x h and one layer like the "
                            "target's last) with the shared LM head, sharded as the target");
}

// Speculative decoding: a draft model on the same chips (tp at most its heads), or the target's
// own MTP module.
void add_draft(const ServeScenario& sc, const ServeEnv& env, const hw::SystemSpec& sys, const workload::ModelSpec& target,
               const ReplicaPlan& plan, const FrameworkProfile& prof, Build& b, ServeReport& rep) {
  b.spec.spec.draft_len = sc.draft_len;
  b.spec.spec.acceptance = sc.acceptance;
  if (sc.draft_len <= 0) return;
  rep.assumptions.push_back("speculative decoding: draft " + std::to_string(sc.draft_len) + ", acceptance " +
                            core::strformat("%.2f", sc.acceptance) + " per token; " +
                            (sc.draft_model.empty()   ? std::string("draft cost folded into the fused step")
                             : sc.draft_model == "mtp" ? std::string("drafted by the model's MTP module")
                                                       : "drafted by " + sc.draft_model));
  if (sc.draft_model.empty()) return;
  if (sc.draft_model == "mtp") {
    add_mtp_draft(env, sys, target, plan, prof, b, rep);
  } else {
    b.draft_model = std::make_unique<workload::ModelSpec>(workload::load_model(sc.draft_model, env.models_dir));
    ReplicaPlan dp = plan;
    const int heads = b.draft_model->heads;
    dp.plan.tp = heads > 0 ? std::min(sc.tp, heads) : sc.tp;
    while (dp.plan.tp > 1 && !workload::tp_divides(*b.draft_model, dp.plan.tp)) dp.plan.tp /= 2;
    b.draft = std::make_unique<StepCostModel>(sys, *b.draft_model, dp, prof, mapping::memory_params(*env.calibration),
                                              b.topo.get());
    // The draft's weights sit on the same chips: the target's KV cache gets what they leave.
    b.cost->hold_draft_weights(b.draft->memory().weights);
  }
  b.spec.spec.draft = b.draft.get();
}

// Disaggregated serving: a decode pool, and the KV hand-off timed on the whole system.
void add_decode_pool(const ServeScenario& sc, const hw::SystemSpec& sys, const net::TopologyOptions& opts,
                     long long engine_chips, Build& b) {
  b.spec.disaggregated = true;
  const long long dec = (sc.chips - sc.prefill_chips) / engine_chips;
  b.spec.decode_pool = PoolSpec{b.cost.get(), static_cast<int>(dec)};
  // KV transfer: each prefill chip sends its shard of the cache to its decode counterpart.
  b.whole = std::make_unique<net::Topology>(net::Topology::build(sys, topo_chips(sys, sc.chips), opts));
  const auto send = [&](core::Bytes bytes) {
    return net::collective_cost(*b.whole, net::CollectiveKind::SendRecv, bytes, net::Group{2, sc.prefill_chips});
  };
  const auto& mem = b.cost->memory();
  const double tokens = 1024;
  const auto c = send(mem.kv_per_token * tokens);
  b.spec.kv_transfer_latency = c.latency;
  b.spec.kv_transfer_per_token = (c.time - c.latency) / tokens;
  b.spec.kv_transfer_scale_up_per_token = c.scale_up_bytes / tokens;
  b.spec.kv_transfer_scale_out_per_token = c.scale_out_bytes / tokens;
  if (mem.state_per_sequence.base() <= 0) return;
  const auto st = send(mem.state_per_sequence);
  b.spec.kv_transfer_per_sequence = st.time - st.latency;
  b.spec.kv_transfer_scale_up_per_sequence = st.scale_up_bytes;
  b.spec.kv_transfer_scale_out_per_sequence = st.scale_out_bytes;
}

// The capacity run's unit: the fewest engines that repeat to make the deployment (one colocated
// engine; the prefill and decode engines in their lowest ratio) and how often it repeats. Offline,
// the queue is dealt round-robin, so every unit holds the same share of it and runs as the others
// do: the deployment completes `repeats` times what one unit completes.
struct CapacityUnit {
  int prefill_engines = 1, decode_engines = 0;
  long long repeats = 1;
};

CapacityUnit capacity_unit(const SimSpec& spec) {
  if (!spec.disaggregated) return {1, 0, std::max(1, spec.pool.engines)};
  const int g = std::max(1, std::gcd(spec.pool.engines, spec.decode_pool.engines));
  return {spec.pool.engines / g, spec.decode_pool.engines / g, g};
}

// Requests one unit's capacity run needs: its share of serving.capacity.requests, and at least
// serving.capacity.batches_per_engine full batches on each of its engines (a batch:
// max_num_seqs, or what the KV cache holds of the mean request).
long long capacity_requests(const SimSpec& unit, long long repeats, const calib::Params& params) {
  const long long engines = unit.disaggregated ? unit.decode_pool.engines : unit.pool.engines;
  const StepCostModel* cost = unit.disaggregated ? unit.decode_pool.cost : unit.pool.cost;
  const long long mean_tokens = std::max<long long>(1, unit.load.in_len + unit.load.out_len);
  long long batch = std::max<long long>(1, unit.scheduler.batch_size());
  if (cost->memory().token_units > 0) batch = std::min(batch, std::max<long long>(1, cost->memory().kv_tokens / mean_tokens));
  const long long full = std::llround(params.number("serving.capacity.batches_per_engine")) * engines * batch;
  const long long share = (std::llround(params.number("serving.capacity.requests")) + repeats - 1) / repeats;
  return std::max(share, full);
}

// The completions per second between the 10th- and 90th-percentile completion of an offline run
// (all requests arrive at 0, so each e2e is its completion time): the ramp-up and the drain left
// out; the whole run's rate when the run is too short to have a window.
double steady_offline_rate(const SimResult& r) {
  std::vector<double> done(r.e2e_each_s);
  std::sort(done.begin(), done.end());
  const size_t n = done.size();
  const size_t lo = n / 10, hi = n - 1 - n / 10;
  if (n < 10 || done[hi] <= done[lo]) return r.requests_per_s;
  return static_cast<double>(hi - lo) / (done[hi] - done[lo]);
}

// An open-loop run's capacity: one unit of the same engines and scheduler offline (every request
// queued at once) on capacity_requests requests of the same length mix (a trace's own first
// requests, all arriving at 0), in requests/s over its steady state, times the units; 0 for
// closed loops and offline runs.
double offline_capacity(const SimSpec& spec, const calib::Params& params) {
  if (spec.load.arrival != ArrivalKind::Poisson && spec.load.arrival != ArrivalKind::Trace) return 0;
  const CapacityUnit unit = capacity_unit(spec);
  SimSpec c = spec;
  c.trace.enabled = false;
  c.pool.engines = unit.prefill_engines;
  if (c.disaggregated) c.decode_pool.engines = unit.decode_engines;
  const long long n = capacity_requests(c, unit.repeats, params);
  if (spec.load.arrival == ArrivalKind::Trace) {
    std::vector<Request> offline(spec.load.trace.begin(),
                                 spec.load.trace.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(spec.load.trace.size(), n)));
    for (auto& r : offline) r.arrival = 0;
    c.load.trace = std::move(offline);
    c.load.requests = static_cast<long long>(c.load.trace.size());
  } else {
    c.load.arrival = ArrivalKind::Offline;
    c.load.requests = n;
  }
  return static_cast<double>(unit.repeats) * steady_offline_rate(simulate(c));
}

// The rate an open-loop run offered: a Poisson run's drawn arrivals over its steady-state window
// (a run too short for one: over its first to last arrival), a trace's requests over its span
// (first to last arrival), else the nominal rate.
double offered_rate(const LoadSpec& load, const SimResult& s) {
  if (s.offered_requests_per_s > 0) return s.offered_requests_per_s;
  if (load.arrival == ArrivalKind::Trace && trace_rate_per_s(load.trace) > 0) return trace_rate_per_s(load.trace);
  return load.rate_per_s;
}

// Capacity, overload and its figures: an overloaded run's throughput is the whole run's.
void assess_overload(const SimSpec& spec, const calib::Params& params, ServeReport& rep) {
  rep.capacity_requests_per_s = offline_capacity(spec, params);
  if (rep.capacity_requests_per_s <= 0) return;
  SimResult& s = rep.sim;
  const double offered = offered_rate(spec.load, s);
  rep.offered_requests_per_s = offered;
  rep.overloaded = offered > rep.capacity_requests_per_s;
  const double dur = s.duration.base();
  if (!rep.overloaded || dur <= 0) return;
  s.requests_per_s = static_cast<double>(s.requests) / dur;
  s.output_tokens_per_s = static_cast<double>(s.output_tokens) / dur;
  s.input_tokens_per_s = static_cast<double>(s.input_tokens) / dur;
}

// The warnings of a finished run: more than 1 % of its requests past the endpoint timeout, an
// open-loop rate beyond the engines' capacity (its latencies then grow with the run's length).
void add_load_warnings(const ServeScenario& sc, ServeReport& rep) {
  const SimResult& s = rep.sim;
  if (s.requests > 0 && static_cast<double>(s.timed_out) > kTimedOutWarningShare * static_cast<double>(s.requests))
    rep.warnings.push_back(core::strformat("%lld of %lld requests (%.0f%%) exceeded the %.4g s endpoint timeout",
                                           s.timed_out, s.requests, 100 * static_cast<double>(s.timed_out) /
                                                                        static_cast<double>(s.requests),
                                           core::to_seconds(sc.timeout)));
  if (!rep.overloaded) return;
  const double offered = offered_rate(sc.load, s);
  const char* length = sc.load.arrival == ArrivalKind::Trace ? "the trace's span" : "--requests";
  rep.warnings.push_back(core::strformat("overloaded: the offered %.6g req/s is %.3gx the %.4g req/s these engines "
                                         "sustain (their offline throughput on this length mix): the queue grows, "
                                         "the latencies depend on the run's length (%s), and the throughput "
                                         "is the whole run's, drain included",
                                         offered, offered / rep.capacity_requests_per_s, rep.capacity_requests_per_s,
                                         length));
}

// Throughput per chip, goodput, and cost/'s energy of the run's activity (per chip: the
// activity of one chip per engine, times the engine's chips, over all chips).
void fill_rates_and_energy(const ServeScenario& sc, const hw::SystemSpec& sys, const calib::Params& params,
                           long long engine_chips, ServeReport& rep) {
  if (rep.sim.duration.base() <= 0) return;
  const double chips = static_cast<double>(sc.chips);
  rep.output_tokens_per_s_per_chip = rep.sim.output_tokens_per_s / chips;
  rep.goodput_requests_per_s = goodput(rep.sim);
  add_load_warnings(sc, rep);
  const cost::Activity per_chip = rep.sim.activity.scaled(static_cast<double>(engine_chips) / chips);
  const auto e = cost::energy_cost(sys, params, per_chip, rep.sim.duration);
  rep.power_per_chip_w = core::to_watts(e.average_power);
  if (rep.sim.output_tokens > 0) {
    const double tokens = static_cast<double>(rep.sim.output_tokens);
    rep.joules_per_output_token = core::to_joules(e.total_energy) * chips / tokens;
    rep.pue = sc.pue.value_or(params.number("reliability.facility.pue"));
    rep.site_joules_per_output_token = rep.joules_per_output_token * rep.pue;
    rep.dollars_per_million_output_tokens = core::to_dollars(e.dollars) * chips * 1e6 / tokens;
  }
  rep.energy_estimated = true;
  rep.price_estimated = e.price_estimated;
}

// One decode step at the run's mean batch and one whole prompt alone, for the breakdown.
void fill_sample_steps(const ServeScenario& sc, const SchedulerSpec& sched, const StepCostModel& cost,
                       ServeReport& rep) {
  StepWork w;
  w.decode_seqs = std::max<long long>(1, std::llround(rep.sim.mean_batch));
  w.decode_context = static_cast<double>(w.decode_seqs) * static_cast<double>(sc.load.in_len + sc.load.out_len / 2);
  rep.sample_decode_step = cost.cost(compiled_decode(sched.static_shapes, sched.batch_size(), w));
  StepWork pw;
  add_whole_prompt(sched.static_shapes, sc.load.in_len, cost.model().dsa.topk, pw);
  pw.prefill_seqs = pw.sampled_prefills = 1;
  rep.sample_prefill_step = cost.cost(pw);
}

// Lengths drawn from the calibration's spreads within the model's context.
void prepare_load(ServeScenario& sc, const workload::ModelSpec& model, const calib::Params& params) {
  sc.load.spread.input_sigma = params.number("serving.lengths.openorca_input_sigma");
  sc.load.spread.output_sigma =
      sc.load.stated_output_sigma.value_or(params.number("serving.lengths.openorca_output_sigma"));
  sc.load.max_context = model.max_position;
  sc.load.start_spread = params.number("serving.closed_loop.start_spread");
  sc.load.warmup_per_client = std::llround(params.number("serving.closed_loop.warmup_requests_per_client"));
  if (sc.load.output_stop_hazard < 0) sc.load.output_stop_hazard = params.number("serving.closed_loop.output_stop_hazard");
  const long long asked = sc.load.in_len + sc.load.out_len;
  if (sc.load.lengths_stated && model.max_position_stated && asked > model.max_position) {
    core::fail("in_len", "prompt plus output exceeds the model's context window",
               std::to_string(sc.load.in_len) + " + " + std::to_string(sc.load.out_len) + " = " + std::to_string(asked) +
                   " tokens",
               "at most " + std::to_string(model.max_position) + " tokens (max_position_embeddings of " + model.id + ")");
  }
}

// A closed loop's steady state as the run assumed it: the clients' start spread and warm-up.
void add_closed_loop_note(const LoadSpec& load, const calib::Params& params, ServeReport& rep) {
  if (load.arrival != ArrivalKind::ClosedLoop) return;
  auto stated = [&](const char* name) { return calib::as_stated(params.get(std::string("serving.closed_loop.") + name)); };
  const double span = rep.sim.client_start_span.base();
  rep.assumptions.push_back(
      "closed loop: " + std::to_string(load.concurrency) + " clients " +
      (span > 0 ? "started spread over " + core::fmt_num(span, 3) + " s (" + core::fmt_num(load.start_spread, 3) +
                      " x one request's estimated end-to-end time; " + stated("start_spread") + ")"
                : std::string("started together, in lock-step (serving.closed_loop.start_spread 0)")) +
      "; " + std::to_string(rep.sim.warmup_requests) + " warm-up requests (the first " +
      std::to_string(load.warmup_per_client) + " of each client; " + stated("warmup_requests_per_client") +
      ") left out of the latency figures" +
      (load.output_stop_hazard > 0
           ? "; outputs end early with probability " + core::fmt_num(load.output_stop_hazard, 3) + " per token (EOS; " +
                 stated("output_stop_hazard") + "), capped at out_len"
           : std::string()));
}

// An arrivals file whose rows carry prefix hashes: the cache that reads them, or that none does.
void add_prefix_cache_note(const ServeScenario& sc, const SimSpec& spec, ServeReport& rep) {
  const LoadSpec& load = spec.load;
  const long long hashed = load.arrival == ArrivalKind::Trace ? rows_with_prefix_blocks(load.trace) : 0;
  if (hashed == 0) return;
  const std::string rows = std::to_string(hashed) + " rows carry prefix_hashes (" +
                           std::to_string(load.trace_block_tokens) + "-token blocks, --arrivals-block-tokens)";
  const std::string why = sc.prefix_caching ? "stated" : "the framework's default";
  if (!spec.scheduler.prefix_caching) {
    rep.assumptions.push_back("arrivals: " + rows + "; prefix caching off (" + why +
                              "), so every prompt is prefilled whole");
    return;
  }
  rep.prefix_caching = true;
  rep.prefix_block_tokens = load.trace_block_tokens;
  rep.prefix_cache_tokens_per_engine = spec.scheduler.prefix_cache_tokens > 0 ? spec.scheduler.prefix_cache_tokens
                                                                                : spec.pool.cost->memory().kv_tokens;
  const std::string capacity = spec.scheduler.prefix_cache_tokens > 0
                                   ? core::fmt_int(spec.scheduler.prefix_cache_tokens) + " tokens per engine (stated)"
                                   : "each engine's KV cache (cached blocks live in what its running sequences leave free)";
  rep.assumptions.push_back("prefix caching on (" + why + "): " + rows + "; a prompt's leading whole blocks that an "
                            "earlier prompt on the same engine prefilled are not prefilled again (its last token always "
                            "is); the cache holds " + capacity + ", least recently used evicted first");
}

}  // namespace

// ---------------------------------------------------------------- heterogeneous disaggregation

namespace {

// Both systems, both pool sizes, and no colocated-only flag.
void check_hetero_inputs(const ServeScenario& sc) {
  core::Diagnostics d;
  if (sc.prefill_system.empty() != sc.decode_system.empty())
    d.error(sc.prefill_system.empty() ? "prefill_system" : "decode_system", "heterogeneous serving needs both systems",
            "", "--prefill-system A --decode-system B");
  if (sc.prefill_chips <= 0) d.error("prefill_chips", "required with --prefill-system/--decode-system",
                                     std::to_string(sc.prefill_chips), "a positive count");
  if (sc.decode_chips <= 0) d.error("decode_chips", "required with --prefill-system/--decode-system",
                                    std::to_string(sc.decode_chips), "a positive count");
  if (sc.chips > 0) d.error("chips", "not used with heterogeneous pools (chips = prefill_chips + decode_chips)",
                           std::to_string(sc.chips), "--prefill-chips and --decode-chips");
  if (sc.attention_dp) d.error("attention_dp", "not available with heterogeneous pools", "true", "tp x pp engines");
  if (sc.draft_len > 0) d.error("draft_len", "not available with heterogeneous pools", std::to_string(sc.draft_len), "0");
  d.throw_if_any();
}

// Each pool's chips against its engines and its system.
void check_pool_chips(const std::string& field, long long chips, long long engine_chips, const hw::SystemSpec& sys,
                      core::Diagnostics& d) {
  if (chips % engine_chips != 0)
    d.error(field, "must be a multiple of tp x pp (" + std::to_string(engine_chips) + ")", std::to_string(chips));
  if (sys.max_chips.value > 0 && chips > sys.max_chips.value)
    d.error(field, "more chips than " + sys.id + "'s largest cluster (" + std::to_string(sys.max_chips.value) + ")",
            std::to_string(chips));
}

// One pool: its framework (the chip's default unless given), topology and step-cost model.
struct Pool {
  const hw::SystemSpec* sys = nullptr;
  std::string framework;
  FrameworkProfile prof;
  std::unique_ptr<net::Topology> topo;
  std::unique_ptr<StepCostModel> cost;
};

Pool make_pool(const ServeScenario& sc, const hw::SystemSpec& sys, const workload::ModelSpec& model,
               const Precisions& p, const calib::Params& params, ServeReport& rep) {
  Pool pool;
  pool.sys = &sys;
  ServeScenario own = sc;
  pool.prof = resolve_framework(own, sys, params, rep);
  pool.framework = framework_name(*own.framework);
  const ReplicaPlan plan = replica_plan(sc, p);
  const net::TopologyOptions opts{net::network_params(params), std::nullopt};
  if (plan.group_chips() > 1)
    pool.topo = std::make_unique<net::Topology>(net::Topology::build(sys, topo_chips(sys, plan.group_chips()), opts));
  pool.cost = std::make_unique<StepCostModel>(sys, model, plan, pool.prof, mapping::memory_params(params),
                                              pool.topo.get());
  return pool;
}

// tp when unset: the larger of the two systems' defaults, so that the weights fit both.
void fill_hetero_tp(ServeScenario& sc, const hw::SystemSpec& a, const hw::SystemSpec& b,
                    const workload::ModelSpec& model, Dtype weights, const calib::Params& params, ServeReport& rep) {
  if (sc.tp > 0) return;
  const double share = params.number("serving.defaults.max_weight_share_of_hbm");
  const long long pool = std::min(sc.prefill_chips, sc.decode_chips) / std::max(1, sc.pp);
  sc.tp = std::max(default_tp(a, model, weights, pool, false, share), default_tp(b, model, weights, pool, false, share));
  rep.assumptions.push_back("tp = " + std::to_string(sc.tp) + " in both pools (the larger of the two systems' "
                            "smallest power of two with weights <= " + fmt(share * 100, 0) + "% of HBM per chip)");
}

// The KV hand-off: each prefill chip sends its shard to its decode counterpart over the link.
void set_kv_link(const ServeScenario& sc, const Pool& pre, const Pool& dec, const calib::Params& params,
                 SimSpec& spec, ServeReport& rep) {
  rep.kv_link = net::cross_link(*pre.sys, sc.prefill_chips, *dec.sys, sc.decode_chips, net::network_params(params));
  const core::Bytes per_token = pre.cost->memory().kv_per_token;
  rep.kv_bytes_per_token_per_chip = per_token.base();
  spec.kv_transfer_latency = rep.kv_link.latency;
  spec.kv_transfer_per_token = per_token / rep.kv_link.rate_per_direction;
  (rep.kv_link.fusion ? spec.kv_transfer_scale_up_per_token : spec.kv_transfer_scale_out_per_token) = per_token;
  const core::Bytes state = pre.cost->memory().state_per_sequence;
  spec.kv_transfer_per_sequence = state / rep.kv_link.rate_per_direction;
  (rep.kv_link.fusion ? spec.kv_transfer_scale_up_per_sequence : spec.kv_transfer_scale_out_per_sequence) = state;
  if (!rep.kv_link.fusion) rep.assumptions.push_back("KV cache over the scale-out network: " + rep.kv_link.why_not_fusion);
}

// A pool's utilisation, energy and cost from its own chips' activity.
PoolReport pool_report(const std::string& role, const Pool& pool, long long chips, int engines, int index,
                       const calib::Params& params, const ServeReport& rep) {
  PoolReport p;
  p.role = role;
  p.system = pool.sys->id;
  p.framework = pool.framework;
  p.chips = chips;
  p.engines = engines;
  const double dur = rep.sim.duration.base();
  p.memory = pool.cost->memory();
  if (dur <= 0) return p;
  p.utilisation = rep.sim.pool_busy_time[index].base() / (dur * engines);
  const double engine_chips = static_cast<double>(chips) / engines;
  const cost::Activity per_chip = rep.sim.pool_activity[index].scaled(engine_chips / static_cast<double>(chips));
  const auto e = cost::energy_cost(*pool.sys, params, per_chip, rep.sim.duration);
  p.energy_j = core::to_joules(e.total_energy) * static_cast<double>(chips);
  p.dollars = core::to_dollars(e.dollars) * static_cast<double>(chips);
  p.power_per_chip_w = core::to_watts(e.average_power);
  return p;
}

// Throughput per chip, goodput, and energy and cost summed over both pools.
void fill_hetero_rates(const ServeScenario& sc, ServeReport& rep) {
  const double chips = static_cast<double>(sc.chips);
  if (rep.sim.duration.base() <= 0) return;
  rep.output_tokens_per_s_per_chip = rep.sim.output_tokens_per_s / chips;
  rep.goodput_requests_per_s = goodput(rep.sim);
  add_load_warnings(sc, rep);
  double joules = 0, dollars = 0;
  for (const auto& p : rep.pools) joules += p.energy_j, dollars += p.dollars;
  rep.power_per_chip_w = joules / rep.sim.duration.base() / chips;
  if (rep.sim.output_tokens > 0) {
    const double tokens = static_cast<double>(rep.sim.output_tokens);
    rep.joules_per_output_token = joules / tokens;
    rep.site_joules_per_output_token = rep.joules_per_output_token * rep.pue;
    rep.dollars_per_million_output_tokens = dollars * 1e6 / tokens;
  }
  rep.kv_bytes_total = rep.kv_bytes_per_token_per_chip * rep.sim.kv_transfer_tokens *
                       static_cast<double>(rep.scenario.tp * rep.scenario.pp);
  if (rep.sim.kv_transfers > 0)
    rep.kv_transfer_mean_ms = core::to_ms(rep.sim.kv_transfer_time) / static_cast<double>(rep.sim.kv_transfers);
}

// Layout checks of a heterogeneous run (InputError).
void check_hetero_layout(const ServeScenario& sc, const hw::SystemSpec& pre, const hw::SystemSpec& dec,
                         const workload::ModelSpec& model) {
  core::Diagnostics d;
  const long long engine_chips = static_cast<long long>(sc.tp) * sc.pp;
  check_model_split(sc, model, false, d);
  check_pool_chips("prefill_chips", sc.prefill_chips, engine_chips, pre, d);
  check_pool_chips("decode_chips", sc.decode_chips, engine_chips, dec, d);
  check_load(sc, d);
  d.throw_if_any();
}

// The two pools' engines, the scheduler, the KV link and the load.
SimSpec hetero_spec(const ServeScenario& sc, const Pool& pre, const Pool& dec, const calib::Params& params,
                    ServeReport& rep) {
  const long long engine_chips = static_cast<long long>(sc.tp) * sc.pp;
  SimSpec spec;
  spec.scheduler = scheduler_of(sc, pre.prof);
  rep.assumptions.push_back("scheduler: " + pre.framework + "'s (the prefill pool's framework) in both pools");
  spec.pool = PoolSpec{pre.cost.get(), static_cast<int>(sc.prefill_chips / engine_chips)};
  spec.disaggregated = true;
  spec.decode_pool = PoolSpec{dec.cost.get(), static_cast<int>(sc.decode_chips / engine_chips)};
  set_kv_link(sc, pre, dec, params, spec, rep);
  spec.load = sc.load;
  spec.timeout = sc.timeout;
  spec.ttft_slo = sc.ttft_slo;
  spec.tpot_slo = sc.tpot_slo;
  spec.trace.enabled = sc.trace;
  if (sc.load.arrival == ArrivalKind::Trace) spec.load.requests = static_cast<long long>(sc.load.trace.size());
  return spec;
}

// Layout, pools, rates, energy and cost, and the sample steps of a finished run.
void fill_hetero_report(const ServeScenario& sc, const SimSpec& spec, const Pool& pre, const Pool& dec,
                        const calib::Params& params, ServeReport& rep) {
  rep.scenario = sc;
  rep.framework = pre.framework + " + " + dec.framework;
  rep.engines = spec.pool.engines;
  rep.decode_engines = spec.decode_pool.engines;
  rep.chips_used = sc.chips;
  rep.memory = pre.cost->memory();
  rep.pue = sc.pue.value_or(params.number("reliability.facility.pue"));
  rep.pools.push_back(pool_report("prefill", pre, sc.prefill_chips, rep.engines, 0, params, rep));
  rep.pools.push_back(pool_report("decode", dec, sc.decode_chips, rep.decode_engines, 1, params, rep));
  fill_hetero_rates(sc, rep);
  rep.price_estimated = true;
  fill_sample_steps(sc, spec.scheduler, *dec.cost, rep);
  const StepCost decode_step = rep.sample_decode_step;
  fill_sample_steps(sc, spec.scheduler, *pre.cost, rep);
  rep.sample_decode_step = decode_step;
}

core::Result<ServeReport> run_hetero(const ServeScenario& in, const ServeEnv& env) {
  const calib::Params& params = *env.calibration;
  ServeReport rep;
  ServeScenario sc = in;
  check_hetero_inputs(sc);
  const hw::SystemSpec& sys_p = env.catalog->system(sc.prefill_system, "prefill_system");
  const hw::SystemSpec& sys_d = env.catalog->system(sc.decode_system, "decode_system");
  sc.system = sys_p.id;
  sc.chips = sc.prefill_chips + sc.decode_chips;
  const workload::ModelSpec model = workload::load_model(sc.model, env.models_dir);
  const Precisions precisions = resolve_precisions(sc);
  for (const hw::SystemSpec* sys : {&sys_p, &sys_d}) check_math_precision(sc, sys->chip, precisions.math, rep);
  for (const auto& note : model.approximations) rep.assumptions.push_back("model: " + note);
  state_moe_load(sc, rep);
  check_degrees(sc);
  fill_hetero_tp(sc, sys_p, sys_d, model, precisions.weights, params, rep);
  check_hetero_layout(sc, sys_p, sys_d, model);
  prepare_load(sc, model, params);
  const Pool pre = make_pool(sc, sys_p, model, precisions, params, rep);
  const Pool dec = make_pool(sc, sys_d, model, precisions, params, rep);
  for (const Pool* p : {&pre, &dec})
    if (auto refusal = memory_refusal(sc, p->cost->memory(), precisions.weights))
      return core::make_error(p->sys->id + ": " + *refusal);
  const SimSpec spec = hetero_spec(sc, pre, dec, params, rep);
  rep.sim = simulate(spec);
  assess_overload(spec, params, rep);
  add_closed_loop_note(sc.load, params, rep);
  add_prefix_cache_note(sc, spec, rep);
  fill_hetero_report(sc, spec, pre, dec, params, rep);
  return rep;
}

// A recurrent model's per-sequence state and what of the cache it takes: KV tokens' worth beside
// attention, else the whole cache is states.
void add_recurrent_state_note(const ServeScenario& sc, ServeReport& rep) {
  const auto& mem = rep.memory;
  const std::string size = "recurrent (Mamba / DeltaNet) state in " + sc.state_precision + ": " +
                           fmt(mem.state_per_sequence.base() / core::mib(1).base()) + " MiB per sequence per chip";
  std::string note = mem.token_units == 0 ? size + "; no attention layer, so no KV cache: the cache holds " +
                                                 std::to_string(mem.state_sequences()) +
                                                 " sequences' states per engine, whatever their length"
                                           : size + ", held in the KV cache as " + std::to_string(mem.state_tokens) +
                                                 " tokens' worth";
  if (sc.draft_len > 0)
    note += "; with speculative decoding each running sequence also keeps the states after its " +
            std::to_string(sc.draft_len + 1) + " verified tokens, to roll back to the last accepted one";
  rep.assumptions.push_back(note);
}

// The engines of a homogeneous run (one per replica, or one per chip with DP attention), their
// scheduler and compiled batch, the decode pool of a disaggregated run, and the load and SLOs;
// returns the engine count of the (prefill) pool.
long long configure_engines(ServeScenario& sc, const hw::SystemSpec& sys, const FrameworkProfile& prof,
                            const net::TopologyOptions& topo_opts, long long engine_chips, Build& b,
                            ServeReport& rep) {
  const long long pool_chips = sc.prefill_chips > 0 ? sc.prefill_chips : sc.chips;
  const long long engines = sc.attention_dp ? pool_chips : pool_chips / engine_chips;
  b.spec.scheduler = scheduler_of(sc, prof);
  if (sc.prefill_chips == 0) compile_decode_batch(sc, engines, b.spec.scheduler, rep);
  b.spec.pool = PoolSpec{b.cost.get(), static_cast<int>(engines)};
  if (sc.prefill_chips > 0) add_decode_pool(sc, sys, topo_opts, engine_chips, b);
  if (b.spec.disaggregated) rep.decode_engines = b.spec.decode_pool.engines;
  b.spec.load = sc.load;
  b.spec.timeout = sc.timeout;
  b.spec.ttft_slo = sc.ttft_slo;
  b.spec.tpot_slo = sc.tpot_slo;
  b.spec.trace.enabled = sc.trace;
  if (sc.load.arrival == ArrivalKind::Trace) b.spec.load.requests = static_cast<long long>(sc.load.trace.size());
  return engines;
}

// An offload tier's tokens per engine: its size over the engine's KV bytes per token (every
// chip's shard).
long long tier_tokens(core::Bytes size, double per_chip, long long engine_chips) {
  return static_cast<long long>(size.base() / (per_chip * static_cast<double>(std::max<long long>(1, engine_chips))));
}

// KV offload to host memory (--kv-tier host:SIZE): the host tier's tokens per engine and the time
// to load one token back (each chip its shard, over its own host link at
// serving.kv_tiers.host_load_efficiency).
void configure_host_tier(const ServeScenario& sc, const hw::SystemSpec& sys, const calib::Params& params,
                         double per_chip, long long engine_chips, SimSpec& spec, ServeReport& rep) {
  const bool stated = sys.host_link_bandwidth_per_chip.value.base() > 0;
  const core::ByteRate link =
      stated ? sys.host_link_bandwidth_per_chip.value : params.byte_rate("serving.kv_tiers.host_link_bandwidth");
  const double rate = link.base() * params.number("serving.kv_tiers.host_load_efficiency");
  spec.scheduler.host_cache_tokens = tier_tokens(sc.kv_host, per_chip, engine_chips);
  spec.scheduler.host_load_seconds_per_token = per_chip / rate;
  rep.kv_host_tokens_per_engine = spec.scheduler.host_cache_tokens;
  rep.assumptions.push_back(
      "KV offload: a host-memory tier of " + core::fmt_num(core::to_gib(sc.kv_host), 3) + " GiB per engine (" +
      core::fmt_int(spec.scheduler.host_cache_tokens) + " tokens) takes the blocks the prefix cache evicts; a hit there "
      "loads back at " + core::fmt_num(core::to_gbps(link), 3) + " GB/s per chip (" +
      (stated ? "the catalog's host_link_bandwidth_per_chip" : "serving.kv_tiers.host_link_bandwidth, assumed: the system states none") +
      ") x " + core::fmt_num(params.number("serving.kv_tiers.host_load_efficiency"), 2) +
      " (serving.kv_tiers.host_load_efficiency, assumed), before the request's first prompt step (not overlapped)");
}

// The deployment's chips on one node: a node's host memory and drives serve them (a deployment
// smaller than a node has the node to itself).
long long chips_on_node(const ServeScenario& sc, const hw::SystemSpec& sys) {
  return std::max<long long>(1, std::min<long long>(sys.chips_per_node, sc.chips));
}

// The local-SSD tier: its capacity in tokens and its load time per token, the node's NVMe read
// bandwidth shared by the deployment's chips on the node.
void configure_ssd_tier(const ServeScenario& sc, const hw::SystemSpec& sys, const calib::Params& params,
                        double per_chip, long long engine_chips, SimSpec& spec, ServeReport& rep) {
  const bool stated = sys.local_nvme_read_bandwidth_per_node.value.base() > 0;
  const core::ByteRate node = stated ? sys.local_nvme_read_bandwidth_per_node.value
                                     : params.byte_rate("serving.kv_tiers.ssd_read_bandwidth_per_node");
  const double efficiency = params.number("serving.kv_tiers.ssd_load_efficiency");
  const long long sharing = chips_on_node(sc, sys);
  const double rate = node.base() * efficiency / static_cast<double>(sharing);
  spec.scheduler.ssd_cache_tokens = tier_tokens(sc.kv_ssd, per_chip, engine_chips);
  spec.scheduler.ssd_load_seconds_per_token = per_chip / rate;
  rep.kv_ssd_tokens_per_engine = spec.scheduler.ssd_cache_tokens;
  rep.assumptions.push_back(
      "KV offload: a local-SSD tier of " + core::fmt_num(core::to_gib(sc.kv_ssd), 3) + " GiB per engine (" +
      core::fmt_int(spec.scheduler.ssd_cache_tokens) + " tokens) takes the blocks " +
      (sc.kv_host.base() > 0 ? "the host tier" : "the prefix cache") + " evicts; a hit there loads back at " +
      core::fmt_num(core::to_gbps(node), 3) + " GB/s per node (" +
      (stated ? "the catalog's local_nvme_read_bandwidth_per_node, " +
                    std::string(hw::confidence_name(sys.local_nvme_read_bandwidth_per_node.confidence))
              : "serving.kv_tiers.ssd_read_bandwidth_per_node, assumed: the system states none") +
      ") x " +
      core::fmt_num(efficiency, 2) + " (serving.kv_tiers.ssd_load_efficiency, assumed), shared by the deployment's " +
      std::to_string(sharing) + (sharing == 1 ? " chip" : " chips") + " on the node, before the request's first prompt step (not overlapped)");
}

// The remote pool: its capacity in tokens (engine-layout KV, every chip's shard) and its load time
// per token, each chip its shard over its own scale-out link, one direction.
void configure_remote_pool(const ServeScenario& sc, const hw::SystemSpec& sys, const calib::Params& params,
                           double per_chip, long long engine_chips, SimSpec& spec, ServeReport& rep) {
  const core::ByteRate one_way = sys.scale_out.one_direction();
  const double efficiency = params.number("serving.kv_tiers.remote_load_efficiency");
  spec.scheduler.remote_cache_tokens = tier_tokens(sc.kv_remote, per_chip, engine_chips);
  spec.scheduler.remote_load_seconds_per_token = per_chip / (one_way.base() * efficiency);
  spec.scheduler.remote_load_latency_s = sys.scale_out.latency.value.base();
  rep.kv_remote_tokens = spec.scheduler.remote_cache_tokens;
  rep.assumptions.push_back(
      "KV offload: a remote pool of " + core::fmt_num(core::to_gib(sc.kv_remote), 3) + " GiB shared by every engine (" +
      core::fmt_int(spec.scheduler.remote_cache_tokens) + " tokens) holds every prefilled prompt's blocks; a hit there "
      "loads over the scale-out network (" + sys.scale_out.name + ") at " + core::fmt_num(core::to_gbps(one_way), 3) +
      " GB/s per chip each way x " + core::fmt_num(efficiency, 2) +
      " (serving.kv_tiers.remote_load_efficiency, assumed) after its " +
      core::fmt_num(sys.scale_out.latency.value.base() * 1e6, 3) +
      " us start-up, before the request's first prompt step (not overlapped)");
}

// A per-engine offload tier the node cannot hold: the engines of this deployment on one node
// (or the nodes one engine spans) need `size` each, beyond the node's host memory or NVMe.
std::optional<std::string> tier_refusal(const char* tier, core::Bytes size, const hw::Sourced<core::Bytes>& node,
                                        const char* field, const ServeScenario& sc, const hw::SystemSpec& sys,
                                        long long engine_chips) {
  if (size.base() <= 0 || node.value.base() <= 0) return std::nullopt;
  const long long on_node = chips_on_node(sc, sys);
  // Engines on the node per engine's share of it: a share above 1 (an engine spanning nodes) gives it more.
  const double engines_per_node = static_cast<double>(on_node) / static_cast<double>(std::max<long long>(1, engine_chips));
  const double need = size.base() * engines_per_node;
  if (need <= node.value.base()) return std::nullopt;
  const double most = node.value.base() / engines_per_node;
  return std::string("--kv-tier: the ") + tier + " tier of " + fmt(core::to_gib(size)) + " GiB per engine (engines of " +
         std::to_string(engine_chips) + (engine_chips == 1 ? " chip, " : " chips, ") + std::to_string(on_node) +
         (on_node == 1 ? " chip on a " : " chips on a ") + sys.node_name +
         ") needs " + fmt(need / core::gib(1).base()) + " GiB per node, and the node has " +
         fmt(core::to_gib(node.value)) + " GiB (catalog " + field + ", " + hw::confidence_name(node.confidence) +
         "); expected at most " + fmt(most / core::gib(1).base()) +
         " GiB per engine, or a node of your own through --catalog-dir";
}

std::optional<std::string> kv_tier_refusal(const ServeScenario& sc, const hw::SystemSpec& sys, long long engine_chips) {
  if (auto r = tier_refusal("host", sc.kv_host, sys.host_memory_per_node, "host_memory_per_node", sc, sys, engine_chips))
    return r;
  return tier_refusal("ssd", sc.kv_ssd, sys.local_nvme_per_node, "local_nvme_per_node", sc, sys, engine_chips);
}

// KV offload tiers below the prefix cache (host memory, local SSD, a remote pool): they hold what
// the cache evicts or what every engine wrote, so they need prefix caching of a trace with
// prefix_hashes.
void configure_kv_tiers(const ServeScenario& sc, const hw::SystemSpec& sys, const calib::Params& params,
                        long long engine_chips, SimSpec& spec, ServeReport& rep) {
  if (sc.kv_host.base() <= 0 && sc.kv_ssd.base() <= 0 && sc.kv_remote.base() <= 0) return;
  const bool hashed = spec.load.arrival == ArrivalKind::Trace && rows_with_prefix_blocks(spec.load.trace) > 0;
  if (!spec.scheduler.prefix_caching || !hashed) {
    rep.assumptions.push_back("KV offload: the offload tiers have no effect here: they keep the blocks the prefix cache "
                              "evicts, and this run caches none (prefix caching needs an arrivals file with "
                              "prefix_hashes and the cache on)");
    return;
  }
  const double per_chip = core::to_bytes(spec.pool.cost->memory().kv_per_token);
  if (per_chip <= 0) return;
  if (sc.kv_host.base() > 0) configure_host_tier(sc, sys, params, per_chip, engine_chips, spec, rep);
  if (sc.kv_ssd.base() > 0) configure_ssd_tier(sc, sys, params, per_chip, engine_chips, spec, rep);
  if (sc.kv_remote.base() > 0) configure_remote_pool(sc, sys, params, per_chip, engine_chips, spec, rep);
  rep.assumptions.push_back(
      spec.scheduler.layerwise_kv_load
          ? "KV offload: loads run layer by layer beside the step's compute (the framework's kv_load_layerwise): "
            "a step takes max(compute, load) + min(compute, load) / layers"
          : "KV offload: a step's loads finish before its compute starts (the framework's kv_load_layerwise 0)");
}

// What the simulation approximated: histogram percentiles, clipped request lengths.
void add_sim_notes(const workload::ModelSpec& model, ServeReport& rep) {
  if (rep.sim.requests > LatencyStats::kExactValues)
    rep.assumptions.push_back("latency percentiles over " + std::to_string(rep.sim.requests) +
                              " requests from a histogram of 1% buckets (within 0.5% of exact; exact up to " +
                              std::to_string(LatencyStats::kExactValues) + " requests)");
  if (rep.sim.clipped_requests > 0)
    rep.assumptions.push_back(std::to_string(rep.sim.clipped_requests) + " drawn request lengths exceeded the model's context (" +
                              std::to_string(model.max_position) + " tokens) and were clipped to it");
}

}  // namespace

core::Result<ServeReport> run_scenario(const ServeScenario& in, const ServeEnv& env) {
  XS_CHECK(env.catalog != nullptr, "run_scenario: no catalog");
  XS_CHECK(env.calibration != nullptr, "ServeEnv::calibration not set");
  if (!in.prefill_system.empty() || !in.decode_system.empty()) return run_hetero(in, env);
  const calib::Params& params = *env.calibration;
  ServeReport rep;
  ServeScenario sc = in;
  const hw::SystemSpec& sys = env.catalog->system(sc.system, "system");
  const workload::ModelSpec model = workload::load_model(sc.model, env.models_dir);
  const Precisions precisions = resolve_precisions(sc);
  check_math_precision(sc, sys.chip, precisions.math, rep);
  for (const auto& note : model.approximations) rep.assumptions.push_back("model: " + note);
  state_moe_load(sc, rep);
  const FrameworkProfile prof = resolve_framework(sc, sys, params, rep);
  check_degrees(sc);
  fill_layout(sc, sys, model, precisions.weights, params, rep);
  check_layout(sc, sys, model, rep);
  prepare_load(sc, model, params);

  Build b;
  const ReplicaPlan plan = replica_plan(sc, precisions);
  const net::TopologyOptions topo_opts{net::network_params(params), std::nullopt};
  if (plan.group_chips() > 1)
    b.topo = std::make_unique<net::Topology>(net::Topology::build(sys, topo_chips(sys, plan.group_chips()), topo_opts));
  b.cost = std::make_unique<StepCostModel>(sys, model, plan, prof, mapping::memory_params(params), b.topo.get());
  add_draft(sc, env, sys, model, plan, prof, b, rep);
  rep.memory = b.cost->memory();
  if (auto refusal = memory_refusal(sc, rep.memory, precisions.weights)) return core::make_error(*refusal);
  if (model.has_recurrent()) add_recurrent_state_note(sc, rep);

  const long long engine_chips = plan.engine_chips();
  if (auto refusal = kv_tier_refusal(sc, sys, engine_chips)) return core::make_error(*refusal);
  const long long engines = configure_engines(sc, sys, prof, topo_opts, engine_chips, b, rep);
  configure_kv_tiers(sc, sys, params, engine_chips, b.spec, rep);
  rep.sim = simulate(b.spec);
  assess_overload(b.spec, params, rep);
  add_sim_notes(model, rep);
  add_closed_loop_note(sc.load, params, rep);
  add_prefix_cache_note(sc, b.spec, rep);
  rep.scenario = sc;
  rep.model_context = model.max_position;
  rep.framework = framework_name(*sc.framework);
  rep.engines = static_cast<int>(engines);
  rep.chips_used = sc.chips;
  fill_rates_and_energy(sc, sys, params, engine_chips, rep);
  fill_sample_steps(sc, b.spec.scheduler, *b.cost, rep);
  return rep;
}

}  // namespace xpusim::serve
