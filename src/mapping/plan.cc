#include "xpusim/mapping/plan.h"

#include <algorithm>
#include <string>
#include <vector>

#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/mapping/schedule.h"
#include "xpusim/workload/model.h"

namespace xpusim::mapping {

std::string zero_name(Zero z) {
  switch (z) {
    case Zero::None: return "none";
    case Zero::Zero1: return "1";
    case Zero::Zero2: return "2";
    case Zero::Zero3: return "3";
    case Zero::Fsdp: return "fsdp";
  }
  return "?";
}

std::string recompute_name(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

const std::vector<std::string>& recompute_names() {
  static const std::vector<std::string> names = {recompute_name(Recompute::None),
                                                 recompute_name(Recompute::Selective),
                                                 recompute_name(Recompute::Full)};
  return names;
}

std::optional<Recompute> recompute_from_name(const std::string& name) {
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    if (recompute_name(r) == name) return r;
  return std::nullopt;
}

namespace {
constexpr Zero kZeroStages[] = {Zero::None, Zero::Zero1, Zero::Zero2, Zero::Zero3, Zero::Fsdp};

std::vector<std::string> names_of(std::string (*name)(Zero)) {
  std::vector<std::string> out;
  for (Zero z : kZeroStages) out.push_back(name(z));
  return out;
}

std::optional<Zero> stage_named(std::string (*name)(Zero), const std::string& wanted) {
  for (Zero z : kZeroStages)
    if (name(z) == wanted) return z;
  return std::nullopt;
}
}  // namespace

std::optional<Zero> zero_from_name(const std::string& name) { return stage_named(zero_name, name); }

const std::vector<std::string>& zero_names() {
  static const std::vector<std::string> names = names_of(zero_name);
  return names;
}

std::string zero_csv_name(Zero z) {
  const std::string n = zero_name(z);
  return z == Zero::Zero1 || z == Zero::Zero2 || z == Zero::Zero3 ? "zero" + n : n;
}

std::optional<Zero> zero_from_csv_name(const std::string& name) { return stage_named(zero_csv_name, name); }

const std::vector<std::string>& zero_csv_names() {
  static const std::vector<std::string> names = names_of(zero_csv_name);
  return names;
}

bool recomputes_layer(const TrainPlan& plan) {
  return plan.recompute == Recompute::Full ||
         (plan.recompute == Recompute::Selective && plan.selective == SelectiveScope::AllButProjections);
}

workload::RecomputeKind recompute_kind(const TrainPlan& plan) {
  switch (plan.recompute) {
    case Recompute::None: return workload::RecomputeKind::None;
    case Recompute::Full: return workload::RecomputeKind::Full;
    case Recompute::Selective:
      return plan.selective == SelectiveScope::AllButProjections ? workload::RecomputeKind::SelectiveAllButProjections
                                                                 : workload::RecomputeKind::Selective;
  }
  return workload::RecomputeKind::None;
}

int position_in_chunk(const TrainPlan& plan, int layers, int layer) {
  if (plan.vpp > 1 && layers % (plan.pp * plan.vpp) == 0) return layer % (layers / (plan.pp * plan.vpp));
  const std::vector<int> per = layers_per_stage(layers, plan.pp);
  int first = 0;
  for (int n : per) {
    if (layer < first + n) return layer - first;
    first += n;
  }
  return layer - first;
}

int most_layers_per_chunk(const TrainPlan& plan, int layers) {
  if (plan.vpp > 1 && layers % (plan.pp * plan.vpp) == 0) return layers / (plan.pp * plan.vpp);
  const std::vector<int> per = layers_per_stage(layers, plan.pp);
  return *std::max_element(per.begin(), per.end());
}

bool recomputes_layer(const TrainPlan& plan, int layers, int layer) {
  if (!recomputes_layer(plan)) return false;
  if (plan.recompute != Recompute::Full || plan.recompute_layers <= 0) return true;
  return position_in_chunk(plan, layers, layer) < plan.recompute_layers;
}

workload::RecomputeKind recompute_kind(const TrainPlan& plan, int layers, int layer) {
  if (plan.recompute == Recompute::Full && !recomputes_layer(plan, layers, layer)) return workload::RecomputeKind::None;
  return recompute_kind(plan);
}

double recomputed_layer_share(const TrainPlan& plan, int layers) {
  if (plan.recompute != Recompute::Full || plan.recompute_layers <= 0 || layers <= 0) return 1.0;
  int n = 0;
  for (int l = 0; l < layers; ++l) n += recomputes_layer(plan, layers, l) ? 1 : 0;
  return static_cast<double>(n) / layers;
}

core::Result<bool> check_train_plan(const TrainPlan& plan, const workload::ModelSpec& model,
                                    int chips) {
  std::vector<std::string> why;
  auto s = [](long long v) { return std::to_string(v); };
  struct Degree { const char* name; long long v; };
  bool positive = true;
  for (const Degree d : {Degree{"tp", plan.tp}, Degree{"pp", plan.pp}, Degree{"dp", plan.dp},
                         Degree{"cp", plan.cp}, Degree{"ep", plan.ep}, Degree{"vpp", plan.vpp},
                         Degree{"micro_batch", plan.micro_batch},
                         Degree{"global_batch", plan.global_batch},
                         Degree{"seq_len", plan.seq_len}}) {
    if (d.v < 1) {
      why.push_back(std::string(d.name) + " = " + s(d.v) + " must be at least 1");
      positive = false;
    }
  }
  if (plan.mtp_layers < 0) {
    why.push_back("mtp_layers = " + s(plan.mtp_layers) + " must be 0 (no multi-token prediction) or positive");
    positive = false;
  }
  if (plan.expert_tp < 0) {
    why.push_back("expert_tp = " + s(plan.expert_tp) + " must be 0 (same as tp) or positive");
    positive = false;
  }
  if (plan.recompute_layers < 0 || (plan.recompute_layers > 0 && plan.recompute != Recompute::Full)) {
    why.push_back("recompute_layers = " + s(plan.recompute_layers) +
                  " must be 0 (every layer) or, with full recomputation, positive");
    positive = false;
  }
  if (!positive) return core::Error{core::join(why, "; ")};

  if (plan.chips() != chips) {
    why.push_back("tp·pp·cp·dp = " + s(plan.tp) + "·" + s(plan.pp) + "·" + s(plan.cp) + "·" +
                  s(plan.dp) + " = " + s(plan.chips()) + " but the system has " + s(chips) +
                  " chips");
  }
  if (model.heads % plan.tp != 0) {
    why.push_back("tp = " + s(plan.tp) + " does not divide the " + s(model.heads) +
                  " attention heads");
  }
  if (const int kv = workload::kv_heads_mismatching_tp(model, plan.tp)) {
    why.push_back("tp = " + s(plan.tp) + " and the " + s(kv) + " key/value heads: neither divides the other");
  }
  const bool mamba = model.has_block(workload::LayerBlock::Mamba) || model.has_block(workload::LayerBlock::MambaMlp);
  if (mamba && model.mamba.version == 1 && model.mamba.inner() % plan.tp != 0) {
    why.push_back("tp = " + s(plan.tp) + " does not divide the " + s(model.mamba.inner()) + " Mamba channels");
  } else if (mamba && model.mamba.version == 2 &&
             (model.mamba.heads % plan.tp != 0 || model.mamba.groups % plan.tp != 0)) {
    why.push_back("tp = " + s(plan.tp) + " does not divide the " + s(model.mamba.heads) + " Mamba heads and " +
                  s(model.mamba.groups) + " groups");
  }
  if (model.has_block(workload::LayerBlock::LinearAttentionMlp) &&
      (model.linear.key_heads % plan.tp != 0 || model.linear.value_heads % plan.tp != 0)) {
    why.push_back("tp = " + s(plan.tp) + " does not divide the " + s(model.linear.key_heads) +
                  " linear-attention key heads and " + s(model.linear.value_heads) + " value heads");
  }
  if (plan.pp > model.layers) {
    why.push_back("pp = " + s(plan.pp) + " exceeds the " + s(model.layers) + " layers");
  } else if (plan.vpp > 1 && model.layers < plan.pp * plan.vpp) {
    // Uneven splits are allowed (Megatron-Bridge balances the embedding and LM head into the
    // first and last stages), but every virtual stage needs at least one layer.
    why.push_back("interleaving needs at least pp·vpp = " + s(plan.pp * plan.vpp) +
                  " layers (the model has " + s(model.layers) + ")");
  }
  if (plan.vpp > 1 && plan.pp == 1) why.push_back("vpp = " + s(plan.vpp) + " needs pp > 1");
  if (plan.ep > 1) {
    if (!model.is_moe()) {
      why.push_back("ep = " + s(plan.ep) + " but the model has no experts");
    } else if (model.moe.num_experts % plan.ep != 0) {
      why.push_back("ep = " + s(plan.ep) + " does not divide the " + s(model.moe.num_experts) +
                    " experts");
    }
    // Experts at the attention's tp (no expert_tp) take their ep ranks from data parallelism;
    // with expert_tp (MoE parallel folding) the grid rule below applies instead.
    if (plan.expert_tp == 0 && (static_cast<long long>(plan.dp) * plan.cp) % plan.ep != 0) {
      why.push_back("ep = " + s(plan.ep) + " does not divide dp·cp = " +
                    s(static_cast<long long>(plan.dp) * plan.cp) +
                    " (with --expert-tp, the experts on their own grid, ep·expert_tp must divide tp·cp·dp instead)");
    }
  }
  if (plan.expert_tp > 0) {
    const long long grid = static_cast<long long>(plan.tp) * plan.cp * plan.dp;
    if (grid % (static_cast<long long>(plan.ep) * plan.expert_tp) != 0) {
      why.push_back("ep·expert_tp = " + s(static_cast<long long>(plan.ep) * plan.expert_tp) +
                    " does not divide tp·cp·dp = " + s(grid));
    }
  }
  const long long dpmb = static_cast<long long>(plan.dp) * plan.micro_batch;
  if (plan.global_batch % dpmb != 0) {
    why.push_back("global batch " + s(plan.global_batch) + " is not divisible by dp·micro_batch = " +
                  s(dpmb));
  }
  if (plan.cp > 1 && plan.seq_len % (2LL * plan.cp) != 0) {
    why.push_back("seq_len " + s(plan.seq_len) + " is not divisible by 2·cp = " + s(2LL * plan.cp) +
                  " (context parallelism splits each sequence into 2·cp causal-balanced chunks)");
  }
  if (why.empty() && plan.micro_batches() >= 1) {
    if (auto refused = schedule_of(plan).refusal(pipeline_shape(plan))) why.push_back(*refused);
  }
  if (!why.empty()) return core::Error{core::join(why, "; ")};
  return true;
}

void check_moe_load_imbalance(core::Diagnostics& d, const std::string& path, const std::optional<double>& imbalance,
                              const workload::ModelSpec& model, long long ep) {
  if (!imbalance) return;
  const std::string got = core::fmt_num(*imbalance);
  if (!model.is_moe()) {
    d.error(path, "a load imbalance over expert-parallel ranks needs a mixture of experts", got,
            "no MoE load imbalance for " + model.id);
  } else if (ep <= 1) {
    d.error(path, "the imbalance is over the expert-parallel ranks: state ep > 1", got, "--ep N with N > 1");
  } else if (!(*imbalance >= 1.0) || *imbalance > static_cast<double>(ep)) {
    d.error(path, "out of range: the busiest rank receives at least the mean and at most every token", got,
            "from 1 to ep = " + std::to_string(ep));
  }
}

}  // namespace xpusim::mapping
