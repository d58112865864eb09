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

/// Plan fields the row states, and the framework's defaults for those it leaves empty
/// (stated in the assumptions). False (and p.reason) when the precision is unknown.
bool plan_from_row(const Row& row, const std::string& fw, const workload::ModelSpec& model, mapping::TrainPlan& plan,
                   Prediction& p) {
  const auto prec = core::parse_dtype(row.precision.empty() ? "bf16" : row.precision);
  if (!prec) {
    p.status = Status::Unsupported;
    p.reason = "unknown precision '" + row.precision + "'";
    return false;
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
  if (!row.micro_batch && fw == "torchtitan" && row.pp && *row.pp > 1 && plan.micro_batch % *row.pp == 0)
    plan.micro_batch /= *row.pp;
  if (!row.micro_batch) p.assumptions.push_back("micro-batch " + std::to_string(plan.micro_batch));
  plan.zero = zero_of(row.fsdp_or_zero, fw);
  if (row.fsdp_or_zero.empty()) p.assumptions.push_back("optimizer sharding " + mapping::zero_name(plan.zero));
  plan.cp = static_cast<int>(row.cp.value_or(1));
  plan.ep = static_cast<int>(row.ep.value_or(1));
  plan.sequence_parallel = true;
  if (row.tp && row.pp && row.dp) {
    plan.tp = static_cast<int>(*row.tp);
    plan.pp = static_cast<int>(*row.pp);
    plan.dp = static_cast<int>(*row.dp);
  }
  return true;
}

/// The pipeline schedule: the row's vpp, two virtual stages for an "interleaved" note that
/// states none (torchtitan's default; the smallest Megatron accepts), DualPipe for DeepSeek-V3
/// (report §3.2.1).
void schedule_from_row(const Row& row, const std::string& fw, mapping::TrainPlan& plan, Prediction& p) {
  plan.vpp = static_cast<int>(row.vpp.value_or(1));
  if (!row.vpp && row.pp && *row.pp > 1 && row.notes.find("interleaved") != std::string::npos) {
    plan.vpp = 2;
    p.assumptions.push_back("interleaved schedule with 2 virtual stages per rank");
  }
  if (fw == "deepseek" && plan.vpp == 1) {
    plan.schedule = "dualpipe";
    p.assumptions.push_back("DualPipe pipeline schedule");
  }
}

/// Global batch: the row's, else one stated in the notes that divides dp × micro-batch, else
/// one micro-batch per data-parallel rank.
void global_batch_from_row(const Row& row, mapping::TrainPlan& plan, Prediction& p) {
  if (row.global_batch_seqs) {
    plan.global_batch = *row.global_batch_seqs;
    return;
  }
  const bool has_layout = row.tp && row.pp && row.dp;
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

/// Recompute choices: the row's, else every level (the least that fits is taken).
std::vector<mapping::Recompute> recompute_choices(const std::string& recompute) {
  if (recompute == "none") return {mapping::Recompute::None};
  if (recompute == "selective") return {mapping::Recompute::Selective};
  if (recompute == "full") return {mapping::Recompute::Full};
  return {mapping::Recompute::None, mapping::Recompute::Selective, mapping::Recompute::Full};
}

engine::TrainResult simulate(const engine::TrainScenario& s, const Context& ctx) {
  return ctx.analytical_train ? engine::simulate_analytical(s) : engine::simulate_event(s);
}

/// Runs the step: the stated layout with the least recompute that fits, or the best plan the
/// search finds when the row states no layout. False (and p.reason) when no plan runs.
bool run_step(const Row& row, const Context& ctx, engine::TrainScenario& s, engine::TrainResult& r, Prediction& p) {
  const auto rcs = recompute_choices(row.recompute);
  if (row.tp && row.pp && row.dp) {
    s.plan.recompute = engine::least_recompute_that_fits(s, rcs);
    r = simulate(s, ctx);
    if (row.recompute.empty()) p.assumptions.push_back("recompute " + mapping::recompute_name(s.plan.recompute));
  } else {
    engine::SearchSpace space;
    space.recompute = rcs;
    space.zero = {s.plan.zero};
    // The batch is a target in tokens: each candidate rounds it to whole micro-batches per rank.
    space.batch_tokens = s.plan.global_batch * s.plan.seq_len;
    auto best = engine::search_plan(s, row.chips, space);
    if (!best.found) {
      p.status = Status::Unsupported;
      p.reason = "no feasible plan found for " + std::to_string(row.chips) + " chips";
      return false;
    }
    s = best.best;
    p.assumptions.push_back("layout not given: best plan found tp=" + std::to_string(s.plan.tp) +
                            " pp=" + std::to_string(s.plan.pp) + " dp=" + std::to_string(s.plan.dp) + " recompute " +
                            mapping::recompute_name(s.plan.recompute));
    r = simulate(s, ctx);
  }
  if (!r.feasible) {
    p.status = Status::Unsupported;
    p.reason = "plan infeasible: " + r.reason;
    return false;
  }
  if (!r.fits) p.assumptions.push_back("note: " + r.reason);
  return true;
}

/// The figure the row's metric names, from the step's result.
void read_metric(const Row& row, const engine::TrainResult& r, Prediction& p) {
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
      return;
    }
    p.predicted = toks[0] / r.tokens_per_s / 60.0;
    p.assumptions.push_back("tokens to target " + core::fmt_int(static_cast<long long>(toks[0])) +
                            " (from the row's notes); evaluation and start-up time not modelled");
  } else {
    p.status = Status::Unsupported;
    p.reason = "metric '" + m + "' is not a training metric";
  }
}

}  // namespace

Prediction predict_train(const Row& row, const Context& ctx) {
  Prediction p;
  const std::string fw = preset_of(row);
  p.framework = fw;
  p.assumptions.push_back("framework preset " + fw);
  engine::TrainScenario s;
  s.framework = engine::framework_params(fw, *ctx.calibration);
  s.calibration = ctx.calibration;
  s.system = &ctx.catalog->system(row.system, "system");
  s.model = workload::load_model(row.model, ctx.models_dir);
  if (!plan_from_row(row, fw, s.model, s.plan, p)) return p;
  schedule_from_row(row, fw, s.plan, p);
  global_batch_from_row(row, s.plan, p);
  engine::TrainResult r;
  if (!run_step(row, ctx, s, r, p)) return p;
  read_metric(row, r, p);
  return p;
}

}  // namespace xpusim::validation
