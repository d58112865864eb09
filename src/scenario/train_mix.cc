#include "xpusim/scenario/train_mix.h"

#include <algorithm>
#include <cctype>

#include "xpusim/core/diagnostics.h"
#include "xpusim/cost/energy.h"
#include "xpusim/engine/mix.h"

namespace xpusim::scenario {

namespace {

constexpr const char* kMixShape = "two parts SYSTEM:CHIPS,SYSTEM:CHIPS, e.g. trn4-fusion-mixed-rack:16,gb300-fusion-mixed-rack:16";

MixPart parse_part(const std::string& part, const std::string& whole) {
  const size_t colon = part.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == part.size())
    core::fail("--mix", "bad part '" + part + "'", whole, kMixShape);
  const std::string count = part.substr(colon + 1);
  if (!std::all_of(count.begin(), count.end(), [](unsigned char c) { return std::isdigit(c); }) || count.size() > 9 ||
      std::stoll(count) <= 0)
    core::fail("--mix", "chips must be a positive whole number in '" + part + "'", whole, kMixShape);
  return MixPart{part.substr(0, colon), std::stoll(count)};
}

// The homogeneous run of one kind: its system and chips, pp = its stages.
TrainRun run_kind(const TrainInputs& base, const MixPart& part, int stages, const hw::Catalog& cat,
                  const std::string& models_dir, const calib::Params& params) {
  TrainInputs in = base;
  in.system = part.system;
  in.chips = part.chips;
  in.pp = stages;
  in.executor = "analytical";
  return run_train(in, cat, models_dir, params, false);
}

// Forward + backward time of one layer for one micro-batch, from the homogeneous run's
// critical-path compute and exposed TP/CP/EP collectives over its largest stage.
double layer_time(const TrainRun& run) {
  const auto& b = run.result.breakdown;
  const double per_mb = (b.compute + b.tp_comm + b.cp_comm + b.ep_comm).base() /
                        static_cast<double>(run.built.scenario.plan.micro_batches());
  const int most = *std::max_element(run.result.stage_layers.begin(), run.result.stage_layers.end());
  return per_mb / std::max(1, most);
}

MixKindResult kind_result(const TrainRun& run, const MixPart& part, int stages) {
  MixKindResult k;
  k.system = part.system;
  k.chip = run.built.scenario.system->chip.id;
  k.projected = run.built.scenario.system->projected;
  k.chips = part.chips;
  k.stages = stages;
  k.layer_time_s = layer_time(run);
  const auto& b = run.result.breakdown;
  k.rest_s = (b.dp_comm + b.optimizer + b.other).base();
  k.pp_comm_s = b.pp_comm.base();
  return k;
}

// Stages per kind: chips / (tp x dp x cp); a diagnostic when they do not divide.
std::vector<int> stages_of(const std::vector<MixPart>& parts, long long group) {
  core::Diagnostics d;
  std::vector<int> stages;
  for (const auto& p : parts) {
    if (p.chips % group != 0)
      d.error("--mix", "chips of " + p.system + " must be a multiple of tp x dp x cp (" + std::to_string(group) + ")",
              std::to_string(p.chips));
    stages.push_back(static_cast<int>(p.chips / group));
  }
  d.throw_if_any();
  return stages;
}

// Virtual stages per stage from --vpp and --schedule: 1f1b (vpp 1) or interleaved (vpp > 1);
// the pipeline spans both kinds, so DualPipe's two-direction schedule is not offered.
int mix_vpp(const TrainInputs& in, long long stages, int layers) {
  const long long vpp = in.vpp.value_or(1);
  if (in.schedule && *in.schedule != "1f1b" && *in.schedule != "interleaved")
    core::fail("--schedule", "not available with --mix", *in.schedule, "1f1b, or interleaved with --vpp N");
  if (in.schedule && *in.schedule == "interleaved" && vpp < 2)
    core::fail("--vpp", "the interleaved schedule with --mix needs at least 2 virtual stages per stage",
               std::to_string(vpp), "--vpp 2 or more");
  if (in.schedule && *in.schedule == "1f1b" && vpp > 1)
    core::fail("--schedule", "1f1b has one chunk per stage", "1f1b with --vpp " + std::to_string(vpp),
               "interleaved (or no --schedule) with --vpp > 1");
  if (vpp * stages > layers)
    core::fail("--vpp", "more virtual stages than layers", std::to_string(vpp),
               "at most " + std::to_string(layers / stages) + " (" + std::to_string(layers) + " layers over " +
                   std::to_string(stages) + " stages)");
  return static_cast<int>(vpp);
}

// Megatron's interleaved schedule runs micro-batches in groups of pp.
void check_interleaved_batch(const MixResult& r, long long stages) {
  if (r.vpp > 1 && r.micro_batches % stages != 0)
    core::fail("--global-batch", "the interleaved schedule needs the micro-batches per step to be a multiple of the stages",
               std::to_string(r.global_batch) + " sequences = " + std::to_string(r.micro_batches) + " micro-batches",
               "a multiple of " + std::to_string(stages) + " micro-batches (" + std::to_string(stages) + " stages)");
}

// Every chunk holds a layer: the split may give a fast kind's stages fewer layers than vpp.
void check_chunks(const MixResult& r) {
  for (size_t i = 0; i < r.stage_layers.size(); ++i)
    if (r.stage_layers[i] < r.vpp)
      core::fail("--vpp", "stage " + std::to_string(i) + " holds " + std::to_string(r.stage_layers[i]) +
                              " layer(s) in the balanced split, fewer than its chunks", std::to_string(r.vpp),
                 "at most " + std::to_string(*std::min_element(r.stage_layers.begin(), r.stage_layers.end())));
}

// A stage's layers over its vpp chunks, as evenly as whole layers allow (the first chunks
// take the remainder).
std::vector<int> chunks_of(int layers, int vpp) {
  std::vector<int> c(static_cast<size_t>(vpp), layers / vpp);
  for (int i = 0; i < layers % vpp; ++i) ++c[static_cast<size_t>(i)];
  return c;
}

// Stage and chunk times of the split, the beat, and each kind's idle share.
void apply_split(MixResult& r) {
  size_t stage = 0;
  for (auto& k : r.kinds) {
    for (int s = 0; s < k.stages; ++s, ++stage) {
      const int layers = r.stage_layers[stage];
      r.chunk_layers.push_back(chunks_of(layers, r.vpp));
      k.stage_time_s = std::max(k.stage_time_s, layers * k.layer_time_s);
      r.chunk_s = std::max(r.chunk_s, r.chunk_layers.back().front() * k.layer_time_s);
    }
    r.beat_s = std::max(r.beat_s, k.stage_time_s);
  }
  for (auto& k : r.kinds) k.idle_fraction = 1.0 - k.stage_time_s / r.beat_s;
}

// Activations cross the kinds' boundary 2 vpp - 1 times per micro-batch each way (vpp times
// from the first kind to the second, vpp - 1 times back as the chunks wrap round); the crossings
// of the fill (forward) and the drain (backward) are on the critical path.
void cross_traffic(MixResult& r, const workload::ModelSpec& model, int cp) {
  r.crossings = 2 * r.vpp - 1;
  r.activation_bytes_per_chip = static_cast<double>(r.micro_batch) * static_cast<double>(r.seq_len) *
                                static_cast<double>(model.hidden) * 2.0 / (static_cast<double>(r.tp) * cp);
  r.cross_transfer_s = net::cross_link_time(r.link, core::Bytes::from_base(r.activation_bytes_per_chip)).base();
  r.cross_bytes_per_step = 2.0 * r.crossings * static_cast<double>(r.micro_batches) * r.activation_bytes_per_chip *
                           static_cast<double>(r.tp) * cp * r.dp;
}

// Energy and cost of each kind over the mixed step: its chips do the work of their share of the
// layers (the homogeneous run's activity per chip scaled by layers held / all layers, since the
// homogeneous run spread every layer over the kind's stages), and draw static and overhead
// power for the whole step; each kind is paid at its own price for the step.
void add_energy(MixResult& r, const TrainRun* const runs[2], const calib::Params& params) {
  size_t stage = 0;
  for (size_t i = 0; i < r.kinds.size(); ++i) {
    auto& k = r.kinds[i];
    for (int s = 0; s < k.stages; ++s, ++stage) k.layers += r.stage_layers[stage];
    const auto& sys = *runs[i]->built.scenario.system;
    const double share = static_cast<double>(k.layers) / std::max(1, r.layers);
    const auto e = cost::energy_cost(sys, params, runs[i]->result.activity.scaled(share), core::seconds(r.step_s));
    const double chips = static_cast<double>(k.chips);
    k.energy_per_step_j = e.total_energy.base() * chips;
    k.average_power_w = e.average_power.base();
    k.cost_per_step_usd = e.dollars.base() * chips;
    k.energy_estimated = true;  // per-action energies are estimates for every system (docs/energy.md)
    k.price_estimated = e.price_estimated;
    r.energy_per_step_j += k.energy_per_step_j;
    r.cost_per_step_usd += k.cost_per_step_usd;
  }
  const double tokens = static_cast<double>(r.global_batch) * static_cast<double>(r.seq_len);
  r.joules_per_token = r.energy_per_step_j / tokens;
  r.usd_per_million_tokens = r.cost_per_step_usd / tokens * 1e6;
}

// The slowest stage sets the beat; the bubble is (stages - 1) of the slowest chunk (the
// interleaved bubble, (p - 1)/v of a stage at vpp v); the kinds' own P2P on the critical path
// grows with the chunks a micro-batch passes through (vpp times their homogeneous figure).
void combine(MixResult& r) {
  const int stages = static_cast<int>(r.stage_layers.size());
  r.compute_s = static_cast<double>(r.micro_batches) * r.beat_s;
  r.bubble_s = (stages - 1) * r.chunk_s;
  const double crossing = 2.0 * r.crossings * r.cross_transfer_s;
  r.pp_comm_s = crossing;
  for (const auto& k : r.kinds) {
    r.rest_s = std::max(r.rest_s, k.rest_s);
    r.pp_comm_s = std::max(r.pp_comm_s, crossing + r.vpp * k.pp_comm_s);
  }
  r.step_s = r.compute_s + r.bubble_s + r.pp_comm_s + r.rest_s;
  r.bubble_fraction = r.bubble_s / r.step_s;
  r.tokens_per_s = static_cast<double>(r.global_batch) * static_cast<double>(r.seq_len) / r.step_s;
}

}  // namespace

std::vector<MixPart> parse_mix(const std::string& text) {
  std::vector<MixPart> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    parts.push_back(parse_part(part, text));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parts.size() != 2) core::fail("--mix", "needs exactly two kinds of chip", text, kMixShape);
  if (parts[0].system == parts[1].system)
    core::fail("--mix", "both parts name the same system '" + parts[0].system + "'", text, "two different systems");
  return parts;
}

namespace {

MixResult run_mix_at(const TrainInputs& in, const std::vector<MixPart>& parts, const hw::Catalog& cat,
                     const std::string& models_dir, const calib::Params& params);

// No --tp and no --dp: every power-of-two tp (within both systems' scale-up domains) and dp whose
// group divides both parts' chips is tried, the pipeline spanning at most one stage per layer;
// the plan that fits with the most tokens per second wins (ties: the first, smaller groups).
MixResult search_mix(const TrainInputs& in, const std::vector<MixPart>& parts, const hw::Catalog& cat,
                     const std::string& models_dir, const calib::Params& params) {
  std::optional<MixResult> best;
  std::optional<core::InputError> first_error;
  const long long domain =
      std::min(cat.system(parts[0].system).chips_per_domain, cat.system(parts[1].system).chips_per_domain);
  for (long long tp = 1; tp <= domain; tp *= 2)
    for (long long dp = 1; tp * dp <= std::min(parts[0].chips, parts[1].chips); dp *= 2) {
      if (parts[0].chips % (tp * dp) != 0 || parts[1].chips % (tp * dp) != 0) continue;
      TrainInputs at = in;
      at.tp = tp;
      at.dp = dp;
      try {
        MixResult r = run_mix_at(at, parts, cat, models_dir, params);
        if (r.fits && (!best || r.tokens_per_s > best->tokens_per_s)) best = std::move(r);
      } catch (const core::InputError& e) {
        if (!first_error) first_error = e;
      }
    }
  if (!best) {
    if (first_error) throw *first_error;
    core::fail("--mix", "no tp x dp group divides both parts' chips", parts[0].system + ":" +
               std::to_string(parts[0].chips) + "," + parts[1].system + ":" + std::to_string(parts[1].chips),
               "chip counts with a common power-of-two factor, or --tp/--dp");
  }
  best->assumptions.push_back("plan searched (no --tp/--dp): tp " + std::to_string(best->tp) + ", dp " +
                              std::to_string(best->dp) + ", the most tokens per second of the groups that fit");
  return *best;
}

}  // namespace

MixResult run_train_mix(const TrainInputs& in, const std::string& mix, const hw::Catalog& cat,
                        const std::string& models_dir, const calib::Params& params) {
  const std::vector<MixPart> parts = parse_mix(mix);
  for (const auto& p : parts) cat.system(p.system, "--mix");
  if (in.system || in.chips || in.pp)
    core::fail(in.system ? "--system" : in.chips ? "--chips" : "--pp", "not with --mix (it names the systems, chips and stages)",
               "", "--mix A:N,B:M with --tp/--dp");
  if (!in.tp && !in.dp) return search_mix(in, parts, cat, models_dir, params);
  return run_mix_at(in, parts, cat, models_dir, params);
}

namespace {

MixResult run_mix_at(const TrainInputs& in, const std::vector<MixPart>& parts, const hw::Catalog& cat,
                     const std::string& models_dir, const calib::Params& params) {
  MixResult r;
  r.tp = static_cast<int>(in.tp.value_or(1));
  r.dp = static_cast<int>(in.dp.value_or(1));
  const int cp = static_cast<int>(in.cp.value_or(1));
  const std::vector<int> stages = stages_of(parts, static_cast<long long>(r.tp) * r.dp * cp);
  TrainInputs base = in;
  base.tp = r.tp;
  base.dp = r.dp;
  base.vpp.reset();  // each kind alone runs 1F1B: its time per layer does not depend on the chunks
  base.schedule.reset();
  const TrainRun first = run_kind(base, parts[0], stages[0], cat, models_dir, params);
  const auto& plan = first.built.scenario.plan;
  base.micro_batch = plan.micro_batch;  // the second kind runs the first's batch
  base.global_batch = plan.global_batch;
  base.seq_len = plan.seq_len;
  const TrainRun second = run_kind(base, parts[1], stages[1], cat, models_dir, params);
  r.model = first.built.scenario.model.id;
  r.layers = first.built.scenario.model.layers;
  r.micro_batch = plan.micro_batch;
  r.global_batch = plan.global_batch;
  r.micro_batches = plan.micro_batches();
  r.seq_len = plan.seq_len;
  r.vpp = mix_vpp(in, stages[0] + stages[1], r.layers);
  check_interleaved_batch(r, stages[0] + stages[1]);
  r.kinds = {kind_result(first, parts[0], stages[0]), kind_result(second, parts[1], stages[1])};
  r.stage_layers = engine::mixed_layer_split(r.layers, stages, {r.kinds[0].layer_time_s, r.kinds[1].layer_time_s});
  check_chunks(r);
  apply_split(r);
  r.link = net::cross_link(*first.built.scenario.system, parts[0].chips, *second.built.scenario.system, parts[1].chips,
                           net::network_params(params));
  if (!r.link.fusion) r.assumptions.push_back("activations cross over the scale-out network: " + r.link.why_not_fusion);
  cross_traffic(r, first.built.scenario.model, cp);
  for (const TrainRun* run : {&first, &second})
    if (!run->result.fits) {
      r.fits = false;
      r.reason += (r.reason.empty() ? "" : "; ") + run->built.scenario.system->id + ": " + run->result.reason;
    }
  combine(r);
  const TrainRun* const runs[2] = {&first, &second};
  add_energy(r, runs, params);
  return r;
}

}  // namespace

}  // namespace xpusim::scenario
