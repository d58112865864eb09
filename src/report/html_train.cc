// `train --html`: the step's timeline, breakdown, memory and roofline (docs/html.md).

#include <algorithm>
#include <map>

#include "xpusim/core/format.h"
#include "xpusim/report/html.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/svg.h"

namespace xpusim::report {

namespace {

using core::fmt_num;

/// Spans drawn at most: a long pipeline's trace is cut (stated under the chart).
constexpr size_t kMaxSpans = 4000;

std::vector<std::pair<std::string, double>> breakdown_parts(const engine::Breakdown& b) {
  return {{"compute", core::to_seconds(b.compute)},   {"TP comm", core::to_seconds(b.tp_comm)},
          {"CP comm", core::to_seconds(b.cp_comm)},   {"EP comm", core::to_seconds(b.ep_comm)},
          {"PP comm", core::to_seconds(b.pp_comm)},   {"DP comm", core::to_seconds(b.dp_comm)},
          {"bubble", core::to_seconds(b.bubble)},     {"optimizer", core::to_seconds(b.optimizer)},
          {"other", core::to_seconds(b.other)}};
}

int category_colour(const std::string& category) {
  if (category == "forward") return 0;
  if (category == "backward") return 1;
  if (category == "comm") return 2;
  return 3;
}

std::string trace_timeline(const engine::TrainResult& r, std::string& note) {
  std::vector<engine::TraceEvent> ev;
  for (const auto& e : r.trace)  // whole spans only: the operator detail is for --trace (Perfetto)
    if (!e.detail) ev.push_back(e);
  std::stable_sort(ev.begin(), ev.end(), [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
  if (ev.size() > kMaxSpans) {
    note = "The first " + core::fmt_int(static_cast<long long>(kMaxSpans)) + " of " +
           core::fmt_int(static_cast<long long>(ev.size())) + " events are drawn (xpusim train --trace writes them all).";
    ev.resize(kMaxSpans);
  }
  std::map<std::pair<int, int>, int> lane_of;
  for (const auto& e : ev) lane_of.emplace(std::make_pair(e.stage, e.stream), 0);
  svg::Timeline t{"step-timeline", "One training step (event-driven executor)", "time (ms)", {}, {}, {}};
  for (auto& [key, lane] : lane_of) {
    lane = static_cast<int>(t.lanes.size());
    t.lanes.push_back("stage " + std::to_string(key.first) + (key.second == engine::kTraceCompute ? " compute" : key.second == engine::kTraceDp ? " DP comm" : " PP send"));
  }
  for (const auto& e : ev) {
    const double s = static_cast<double>(e.start_ps) * 1e-9, d = static_cast<double>(e.duration_ps) * 1e-9;
    t.spans.push_back({lane_of[{e.stage, e.stream}], s, s + d, category_colour(e.category),
                       e.name + " (" + e.category + "): " + fmt_num(s, 4) + " ms + " + fmt_num(d, 4) + " ms"});
  }
  t.legend = {{"forward", 0, false}, {"backward", 1, false}, {"communication", 2, false}, {"optimizer", 3, false}};
  return svg::render(t);
}

std::string breakdown_timeline(const engine::TrainResult& r) {
  svg::Timeline t{"step-timeline", "One training step: the breakdown laid end to end", "time (ms)", {"step"}, {}, {}};
  double at = 0;
  int k = 0;
  for (const auto& [name, s] : breakdown_parts(r.breakdown)) {
    if (s > 0) t.spans.push_back({0, at * 1e3, (at + s) * 1e3, k, name + ": " + fmt_num(s * 1e3, 4) + " ms"});
    if (s > 0) t.legend.push_back({name, k, false});
    at += s, ++k;
  }
  return svg::render(t);
}

std::string breakdown_chart(const engine::TrainResult& r) {
  svg::StackedBars c{"step-breakdown", "Step time breakdown (critical path)", "seconds", {"step"}, {}, 0, ""};
  for (const auto& [name, s] : breakdown_parts(r.breakdown)) c.segments.push_back({name, {s}});
  return svg::render(c);
}

std::string memory_chart(const engine::TrainResult& r, const std::vector<mapping::TrainMemory>& stages) {
  const double hbm = core::to_gib(r.hbm_capacity);
  svg::StackedBars c{"memory", "Memory per chip of each pipeline stage against HBM capacity", "GiB", {}, {}, hbm,
                     "HBM " + fmt_num(hbm, 4) + " GiB"};
  c.segments = {{"weights", {}}, {"gradients", {}}, {"optimizer", {}}, {"activations", {}}, {"workspace", {}}};
  for (const auto& m : stages.empty() ? std::vector<mapping::TrainMemory>{r.memory} : stages) {
    c.labels.push_back("stage " + std::to_string(m.stage) + (m.stage == r.memory.stage ? " (most)" : ""));
    const core::Bytes parts[] = {m.weights, m.gradients, m.optimizer, m.activations, m.workspace};
    for (size_t k = 0; k < c.segments.size(); ++k) c.segments[k].values.push_back(core::to_gib(parts[k]));
  }
  return svg::render(c);
}

/// One layer's forward ops as roofline points (those with FLOP, bytes and time).
std::vector<svg::Point> op_points(const std::vector<engine::OpProfile>& ops) {
  std::vector<svg::Point> pts;
  for (const auto& op : ops) {
    const double f = core::to_flops(op.flops), b = core::to_bytes(op.hbm_bytes), t = core::to_seconds(op.time);
    if (!(f > 0 && b > 0 && t > 0)) continue;
    pts.push_back({f / b, f / t / 1e12, 0, 0,
                   op.name + ": " + fmt_num(f / b, 4) + " FLOP/byte, " + fmt_num(f / t / 1e12, 4) + " TFLOP/s, " +
                       fmt_num(t * 1e6, 4) + " µs" + (op.compute_bound ? " (compute-bound)" : " (memory-bound)")});
  }
  return pts;
}

/// Roofline of the chip at the executed precision: min(peak, HBM bandwidth × intensity), the
/// step's achieved point (hardware FLOP/s per chip at the step's FLOP per HBM byte) and one
/// layer's forward ops.
std::string roofline_chart(const engine::TrainScenario& s, const engine::TrainResult& r,
                           const std::vector<engine::OpProfile>& ops) {
  const hw::ChipSpec& chip = s.system->chip;
  const double peak = core::to_tflops(chip.peak_for(r.executed_precision));
  const double bw = core::to_tbps(chip.hbm_bandwidth.value);  // TB/s: TFLOP/s per FLOP/byte
  const double bytes = core::to_bytes(r.activity.hbm_bytes);
  const double intensity = bytes > 0 ? core::to_flops(r.activity.total_flops()) / bytes : peak / bw;
  const double ridge = peak / bw;
  const std::vector<svg::Point> op_pts = op_points(ops);
  double x_lo = std::min(ridge, intensity), x_hi = std::max(ridge, intensity), y_lo = std::max(r.hw_tflops_per_chip, 1e-3);
  for (const auto& p : op_pts) x_lo = std::min(x_lo, p.x), x_hi = std::max(x_hi, p.x), y_lo = std::min(y_lo, p.y);
  x_lo /= 30, x_hi *= 30;
  svg::Chart c("roofline", "Roofline of " + chip.name + " (" + core::dtype_name(r.executed_precision) + ")",
               {"arithmetic intensity (FLOP per HBM byte)", x_lo, x_hi, true},
               {"TFLOP/s per chip", std::min(bw * x_lo, y_lo), peak * 1.5, true}, 640, 400);
  c.line({{x_lo, bw * x_lo}, {ridge, peak}, {x_hi, peak}}, 0,
         "ceiling: " + fmt_num(peak, 4) + " TFLOP/s, " + fmt_num(bw, 3) + " TB/s");
  c.scatter(op_pts, 2, "ops of one layer (forward)");
  c.scatter({{intensity, r.hw_tflops_per_chip, 0, 0,
              "step: " + fmt_num(intensity, 4) + " FLOP/byte, " + fmt_num(r.hw_tflops_per_chip, 4) + " TFLOP/s"}},
            3, "this step (hardware FLOP/s)");
  return c.render();
}

std::string train_summary(const scenario::TrainRun& run) {
  const auto& s = run.built.scenario;
  const auto& r = run.result;
  const double chips = static_cast<double>(s.plan.chips());
  return html::summary({
      {"step time", fmt_num(core::to_seconds(r.step_time), 4) + " s (" + r.executor + " executor)"},
      {"tokens/s", fmt_num(r.tokens_per_s, 4) + " (" + fmt_num(r.tokens_per_s_per_chip, 4) + " per chip)"},
      {"MFU", fmt_num(r.mfu * 100.0, 3) + " %"},
      {"model / hardware TFLOP/s per chip", fmt_num(r.model_tflops_per_chip, 4) + " / " + fmt_num(r.hw_tflops_per_chip, 4)},
      {"memory per chip", fmt_num(core::to_gib(r.memory.total()), 4) + " of " + fmt_num(core::to_gib(r.hbm_capacity), 4) +
                              " GiB" + (r.fits ? " (fits)" : " (DOES NOT FIT)")},
      {"schedule", r.schedule + "; " + r.stage_placement},
      {"energy per step", fmt_num(core::to_joules(run.energy.total_energy) * chips / 3.6e6, 4) + " kWh (estimated)"},
      {"cost per step", "$" + fmt_num(core::to_dollars(run.energy.dollars) * chips, 4) +
                            (run.energy.price_estimated ? " (price estimated)" : "")},
  });
}

}  // namespace

std::string train_html(const Provenance& provenance, const scenario::TrainRun& run,
                       const scenario::TrainPageData& page) {
  const auto& s = run.built.scenario;
  const auto& r = run.result;
  const auto& p = s.plan;
  std::string note;
  const std::string timeline = r.trace.empty() ? breakdown_timeline(r) : trace_timeline(r, note);
  std::string body = html::section("summary", "Summary", train_summary(run));
  body += html::section("timeline", "Step timeline", timeline,
                        note.empty() ? (r.trace.empty() ? "The analytical executor has no trace: the breakdown is laid "
                                                          "end to end." : "One representative rank per pipeline stage.")
                                     : note);
  body += html::section("breakdown", "Breakdown and memory", html::row({breakdown_chart(r), memory_chart(r, page.stage_memory)}));
  body += html::section("roofline", "Roofline", roofline_chart(s, r, page.layer_ops),
                        "The step's point: its per-chip totals (hardware FLOP, recompute included) over the step time. "
                        "The ops: the forward operators of the middle layer for one micro-batch, as the chip model "
                        "times them (hover for names).");
  const std::string title = "xpusim train: " + s.model.id + " on " + core::fmt_int(p.chips()) + " × " + s.system->chip.name;
  const std::string sub = s.system->id + "; tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) +
                          " dp=" + std::to_string(p.dp) + " cp=" + std::to_string(p.cp) + " ep=" + std::to_string(p.ep) +
                          " vpp=" + std::to_string(p.vpp) + " micro-batch=" + std::to_string(p.micro_batch) +
                          " global-batch=" + std::to_string(p.global_batch) + " seq=" + std::to_string(p.seq_len) +
                          " precision=" + core::dtype_name(p.precision);
  return html::page("train", title, sub, provenance, body);
}

}  // namespace xpusim::report
