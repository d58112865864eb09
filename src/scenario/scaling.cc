// train --scaling FROM..TO: one plan search per chip count at a fixed global batch.

#include "xpusim/scenario/scale.h"

namespace xpusim::scenario {

namespace {

void mark_gains(ScalingCurve& c) {
  const ScalingPoint* prev = nullptr;
  for (auto& p : c.points) {
    if (!p.found) continue;
    if (prev) p.gain = p.run.goodput.effective_tokens_per_s / prev->run.goodput.effective_tokens_per_s;
    prev = &p;
  }
}

}  // namespace

TrainInputs inputs_at_count(const TrainInputs& in, long long chips) {
  TrainInputs p = in;
  p.chips = chips;
  p.scaling.reset();
  p.deadline.reset();
  p.budget.reset();
  p.runs.reset();
  p.seed.reset();
  if (!p.executor) p.executor = p.straggler ? "event" : "analytical";
  return p;
}

ScalingCurve run_scaling(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                         const calib::Params& params) {
  ScalingCurve curve;
  const ScalingRange range = parse_scaling(in.scaling.value_or(""));
  if (in.chips)
    core::fail("--chips", "the scaling range chooses the chip counts (--scaling)", std::to_string(*in.chips),
               "no --chips with --scaling");
  const hw::SystemSpec& sys = cat.system(in.system.value_or(""), "--system");
  curve.system = sys.id;
  for (long long chips : scaling_counts(range, sys)) {
    ScalingPoint pt;
    pt.chips = chips;
    try {
      pt.run = run_train(inputs_at_count(in, chips), cat, models_dir, params, false);
      pt.found = true;
      curve.model = pt.run.built.scenario.model.id;
    } catch (const core::InputError& e) {
      pt.note = e.diagnostics().empty() ? "no plan" : e.diagnostics().front().message;
    }
    curve.points.push_back(std::move(pt));
  }
  std::vector<long long> chips;
  std::vector<double> throughput;
  for (const auto& p : curve.points)
    if (p.found) {
      chips.push_back(p.chips);
      throughput.push_back(p.run.goodput.effective_tokens_per_s);
    }
  // No count fits: the curve still says why at each count (the caller reports it as infeasible).
  if (chips.empty()) {
    if (curve.model.empty()) curve.model = in.model.value_or("");
    return curve;
  }
  mark_gains(curve);
  curve.largest_useful_chips = largest_useful_count(chips, throughput, curve.flattened);
  return curve;
}

}  // namespace xpusim::scenario
