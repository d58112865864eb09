// Train rows: build a scenario from the row (framework defaults for empty cells, stated in the
// assumptions), run the event-driven executor, and report the row's metric.

#include <algorithm>
#include <cmath>
#include <regex>

#include "xpusim/core/format.h"
#include "xpusim/engine/sizing.h"
#include "xpusim/engine/train.h"
#include "xpusim/workload/hf_config.h"
#include "xpusim/validation/row.h"

namespace xpusim::validation {

namespace {

/// The training-framework preset (engine::framework_params) of a row, from its source:
/// frameworks differ in their defaults (optimizer sharding, recompute, overlap, kernels).
std::string preset_of(const Row& r) {
  const std::string& s = r.source_url;
  auto has = [&](const char* k) { return s.find(k) != std::string::npos; };
  if (has("torchtitan")) return "torchtitan";
  if (has("llm-foundry") || has("mosaicml")) return "llm-foundry";
  if (has("aws-neuron") || has("neuron")) return "neuronx-distributed";
  if (has("2104.04473") || has("2205.05198")) return "megatron-lm-2021";  // the papers' Megatron-LM
  if (has("2412.19437")) return "deepseek";                               // DeepSeek-V3: DualPipe
  return "megatron";  // NeMo, Megatron-Bridge, MLPerf, and Megatron-style stacks
}

/// PyTorch-native stacks: FSDP by default and no gradient accumulation unless configured.
bool pytorch_native(const std::string& preset) { return preset == "torchtitan" || preset == "llm-foundry"; }

/// Numbers written with thousands separators in a text, after a given phrase.
std::vector<double> numbers_after(const std::string& text, const std::string& pattern) {
  std::vector<double> out;
  std::regex re(pattern + R"(\s*~?\s*([0-9][0-9,]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    std::string d = (*it)[1];
    d.erase(std::remove(d.begin(), d.end(), ','), d.end());
    if (!d.empty()) out.push_back(std::stod(d));
  }
  return out;
}

mapping::Zero zero_of(const std::string& s, const std::string& preset) {
  if (s == "zero1") return mapping::Zero::Zero1;
  if (s == "zero2") return mapping::Zero::Zero2;
  if (s == "zero3") return mapping::Zero::Zero3;
  if (s == "fsdp") return mapping::Zero::Fsdp;
  if (s == "none") return mapping::Zero::None;
  // Defaults: FSDP for the PyTorch-native stacks, the distributed optimizer (ZeRO-1) for
  // Megatron/NeMo and NeuronX Distributed.
  return pytorch_native(preset) ? mapping::Zero::Fsdp
                                                                     : mapping::Zero::Zero1;
}

}  // namespace

Prediction predict_train(const Row& row, const Context& ctx) {
  Prediction p;
  const std::string fw = preset_of(row);
  p.assumptions.push_back("framework preset " + fw);
  const hw::SystemSpec& sys = ctx.catalog->system(row.system, "system");
  const workload::ModelSpec model = workload::load_model(row.model, ctx.models_dir);

  engine::TrainScenario s;
  s.framework = engine::framework_params(fw, *ctx.calibration);
  s.calibration = ctx.calibration;
  s.system = &sys;
  s.model = model;
  auto& plan = s.plan;
  const auto prec = core::parse_dtype(row.precision.empty() ? "bf16" : row.precision);
  if (!prec) {
    p.status = Status::Unsupported;
    p.reason = "unknown precision '" + row.precision + "'";
    return p;
  }
  plan.precision = *prec;
  if (row.precision.empty()) p.assumptions.push_back("precision bf16");
  plan.seq_len = row.seq_len.value_or(std::min<long long>(model.max_position, 4096));
  // Micro-batch: Megatron/NeMo recipes default to 1; the PyTorch-native stacks (torchtitan,
  // llm-foundry) accumulate no gradients by default, so a micro-batch is the whole local batch.
  plan.micro_batch = row.micro_batch.value_or(1);
  const bool no_accumulation = pytorch_native(fw);
  if (!row.micro_batch && no_accumulation && row.global_batch_seqs && row.dp && *row.dp > 0 &&
      *row.global_batch_seqs % (*row.dp * row.cp.value_or(1) > 0 ? *row.dp : 1) == 0)
    plan.micro_batch = std::max<long long>(1, *row.global_batch_seqs / *row.dp);
  // torchtitan splits the local batch into as many micro-batches as pipeline stages.
  if (!row.micro_batch && fw == "torchtitan" && row.pp && *row.pp > 1 &&
      plan.micro_batch % *row.pp == 0)
    plan.micro_batch /= *row.pp;
  if (!row.micro_batch) p.assumptions.push_back("micro-batch " + std::to_string(plan.micro_batch));
  plan.zero = zero_of(row.fsdp_or_zero, fw);
  if (row.fsdp_or_zero.empty()) p.assumptions.push_back("optimizer sharding " + mapping::zero_name(plan.zero));
  plan.cp = static_cast<int>(row.cp.value_or(1));
  plan.ep = static_cast<int>(row.ep.value_or(1));
  plan.vpp = static_cast<int>(row.vpp.value_or(1));
  // An interleaved schedule whose virtual stages are not stated gets two per rank (torchtitan's
  // default for its interleaved schedules; the smallest interleaving Megatron accepts).
  if (!row.vpp && row.pp && *row.pp > 1 && row.notes.find("interleaved") != std::string::npos) {
    plan.vpp = 2;
    p.assumptions.push_back("interleaved schedule with 2 virtual stages per rank");
  }
  // DeepSeek-V3 trained with DualPipe (report §3.2.1): its rows run that schedule.
  if (fw == "deepseek" && plan.vpp == 1) {
    plan.schedule = "dualpipe";
    p.assumptions.push_back("DualPipe pipeline schedule");
  }
  plan.sequence_parallel = true;

  const bool has_layout = row.tp && row.pp && row.dp;
  if (has_layout) {
    plan.tp = static_cast<int>(*row.tp);
    plan.pp = static_cast<int>(*row.pp);
    plan.dp = static_cast<int>(*row.dp);
  }

  // Global batch: the row's, else one stated in the notes that divides dp × micro-batch, else
  // one micro-batch per data-parallel rank.
  if (row.global_batch_seqs) {
    plan.global_batch = *row.global_batch_seqs;
  } else {
    plan.global_batch = 0;
    const long long unit = has_layout ? plan.dp * plan.micro_batch : 0;
    for (double g : numbers_after(row.notes, "GBS")) {
      const long long gi = static_cast<long long>(g);
      if (gi > 0 && (unit == 0 || gi % unit == 0)) {
        plan.global_batch = gi;
        break;
      }
    }
    if (plan.global_batch == 0) plan.global_batch = has_layout ? unit : row.chips;
    p.assumptions.push_back("global batch " + std::to_string(plan.global_batch) + " sequences");
  }

  // Recompute: the row's, else the least recomputation that fits (what a user would do).
  std::vector<mapping::Recompute> rcs;
  if (row.recompute == "none") rcs = {mapping::Recompute::None};
  else if (row.recompute == "selective") rcs = {mapping::Recompute::Selective};
  else if (row.recompute == "full") rcs = {mapping::Recompute::Full};
  else rcs = {mapping::Recompute::None, mapping::Recompute::Selective, mapping::Recompute::Full};

  engine::TrainResult r;
  if (!has_layout) {
    engine::SearchSpace space;
    space.recompute = rcs;
    space.zero = {plan.zero};
    // The batch is a target in tokens: each candidate rounds it to whole micro-batches per rank.
    space.batch_tokens = plan.global_batch * plan.seq_len;
    auto best = engine::search_plan(s, row.chips, space);
    if (!best.found) {
      p.status = Status::Unsupported;
      p.reason = "no feasible plan found for " + std::to_string(row.chips) + " chips";
      return p;
    }
    s = best.best;
    p.assumptions.push_back("layout not given: best plan found tp=" + std::to_string(s.plan.tp) +
                            " pp=" + std::to_string(s.plan.pp) + " dp=" + std::to_string(s.plan.dp) +
                            " recompute " + mapping::recompute_name(s.plan.recompute));
    r = engine::simulate_event(s);
  } else {
    plan.recompute = engine::least_recompute_that_fits(s, rcs);
    r = engine::simulate_event(s);
    if (row.recompute.empty()) p.assumptions.push_back("recompute " + mapping::recompute_name(plan.recompute));
  }
  if (!r.feasible) {
    p.status = Status::Unsupported;
    p.reason = "plan infeasible: " + r.reason;
    return p;
  }
  if (!r.fits) p.assumptions.push_back("note: " + r.reason);

  const std::string& m = row.metric;
  if (m == "tokens_per_s_per_chip") p.predicted = r.tokens_per_s_per_chip;
  else if (m == "step_time_s") p.predicted = core::to_seconds(r.step_time);
  else if (m == "model_tflops_per_chip") p.predicted = r.model_tflops_per_chip;
  else if (m == "hw_tflops_per_chip") p.predicted = r.hw_tflops_per_chip;
  else if (m == "mfu_pct") p.predicted = r.mfu * 100.0;
  else if (m == "time_to_train_min") {
    auto toks = numbers_after(row.notes, "needed");
    if (toks.empty()) {
      p.status = Status::Unsupported;
      p.reason = "time_to_train_min needs the tokens to target; the row's notes do not state them";
      return p;
    }
    p.predicted = toks[0] / r.tokens_per_s / 60.0;
    p.assumptions.push_back("tokens to target " + core::fmt_int(static_cast<long long>(toks[0])) +
                            " (from the row's notes); evaluation and start-up time not modelled");
  } else {
    p.status = Status::Unsupported;
    p.reason = "metric '" + m + "' is not a training metric";
    return p;
  }
  return p;
}

}  // namespace xpusim::validation
