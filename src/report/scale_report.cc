#include "xpusim/report/scale_report.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <sstream>

#include "xpusim/core/format.h"
#include "xpusim/report/train_report.h"

namespace xpusim::report {

using core::fmt_num;

namespace {

double days(core::Seconds s) { return core::to_seconds(s) / core::kSecondsPerDay; }

Json monte_carlo_json(const engine::TimeDistribution& d) {
  return Json{{"runs", d.runs},
              {"seed", d.seed},
              {"time_to_train_mean_s", core::to_seconds(d.mean)},
              {"time_to_train_p10_s", core::to_seconds(d.p10)},
              {"time_to_train_p50_s", core::to_seconds(d.p50)},
              {"time_to_train_p90_s", core::to_seconds(d.p90)},
              {"failures_mean", d.mean_failures}};
}

Json recovery_json(const engine::Goodput& g) {
  Json out = Json::array();
  for (const auto& c : g.recovery)
    out.push_back({{"class", c.name}, {"probability", c.probability}, {"time_s", core::to_seconds(c.time)}});
  return out;
}

Json straggler_json(const scenario::TrainRun& run) {
  const auto& st = run.built.scenario.straggler;
  const double nominal = core::to_seconds(*run.nominal_step_time), slowed = core::to_seconds(run.result.step_time);
  return Json{{"chip_slowdown_ratio", st.slowdown},
              {"stage", run.result.straggler_stage},
              {"nominal_step_time_s", nominal},
              {"step_time_s", slowed},
              {"step_slowdown_ratio", slowed / nominal}};
}

}  // namespace

Json goodput_json(const scenario::TrainRun& run) {
  const engine::Goodput& g = run.goodput;
  Json by = Json::object();
  for (const auto& c : g.failures_per_day) by[c.component] = c.per_chip_hour;
  Json j{{"failures_per_day", g.total_failures_per_day},
         {"failures_per_day_by_component", by},
         {"mtbf_s", core::to_seconds(g.mtbf)},
         {"checkpoint_tier", run.checkpoint_tier},
         {"checkpoint_size_gib", core::to_gib(g.checkpoint_size)},
         {"checkpoint_write_s", core::to_seconds(g.checkpoint_write)},
         {"checkpoint_read_s", core::to_seconds(g.checkpoint_read)},
         {"checkpoint_blocking_s", core::to_seconds(g.checkpoint_blocking)},
         {"young_daly_interval_s", core::to_seconds(g.young_daly_interval)},
         {"checkpoint_interval_s", core::to_seconds(g.checkpoint_interval)},
         {"spares", run.spares},
         {"spare_available_fraction", g.spare_available},
         {"recovery", recovery_json(g)},
         {"mean_recovery_s", core::to_seconds(g.mean_recovery)},
         {"straggler_slowdown_ratio", g.straggler_slowdown},
         {"failure_goodput_fraction", g.failure_goodput},
         {"goodput_fraction", g.goodput_fraction},
         {"effective_tokens_per_s", g.effective_tokens_per_s}};
  if (run.time_to_train_with_failures) j["time_to_train_s"] = core::to_seconds(*run.time_to_train_with_failures);
  if (run.monte_carlo) j["monte_carlo"] = monte_carlo_json(*run.monte_carlo);
  if (run.nominal_step_time) j["straggling_replica"] = straggler_json(run);
  return j;
}

Json facility_json(const scenario::TrainRun& run) {
  return Json{{"pue", run.pue},
              {"it_power_mw", core::to_watts(run.site_power) / run.pue / 1e6},
              {"facility_power_mw", core::to_watts(run.site_power) / 1e6},
              {"energy_at_site_j_per_token", core::to_joules(run.site_energy_per_token)}};
}

std::string goodput_text(const scenario::TrainRun& run) {
  const engine::Goodput& g = run.goodput;
  std::ostringstream o;
  o << "  failures             " << fmt_num(g.total_failures_per_day, 4) << " per day (MTBF "
    << fmt_num(core::to_seconds(g.mtbf) / 60.0, 4) << " min; by component:";
  for (const auto& c : g.failures_per_day) o << " " << c.component << " " << fmt_num(c.per_chip_hour, 3);
  o << ")\n  checkpoint           " << fmt_num(core::to_gib(g.checkpoint_size), 4) << " GiB to " << run.checkpoint_tier
    << ": write " << fmt_num(core::to_seconds(g.checkpoint_write), 3) << " s, read "
    << fmt_num(core::to_seconds(g.checkpoint_read), 3) << " s, step blocked "
    << fmt_num(core::to_seconds(g.checkpoint_blocking), 3) << " s; every "
    << fmt_num(core::to_seconds(g.checkpoint_interval), 4) << " s (Young-Daly "
    << fmt_num(core::to_seconds(g.young_daly_interval), 4) << " s)\n";
  o << "  recovery             " << fmt_num(core::to_seconds(g.mean_recovery), 4) << " s mean;";
  for (const auto& c : g.recovery)
    o << " " << c.name << " " << fmt_num(c.probability * 100.0, 3) << "% " << fmt_num(core::to_seconds(c.time), 4) << " s;";
  o << " " << run.spares << " hot spare nodes\n";
  o << "  goodput              " << fmt_num(g.goodput_fraction * 100.0, 4) << "% (failures and checkpoints "
    << fmt_num(g.failure_goodput * 100.0, 4) << "%, stragglers x" << fmt_num(g.straggler_slowdown, 4)
    << "): " << fmt_num(g.effective_tokens_per_s, 4) << " effective tokens/s\n";
  if (run.time_to_train_with_failures)
    o << "  time to train with failures: " << fmt_num(days(*run.time_to_train_with_failures), 4) << " days\n";
  if (run.monte_carlo) {
    const auto& d = *run.monte_carlo;
    o << "  Monte Carlo (" << d.runs << " runs, seed " << d.seed << "): p10 " << fmt_num(days(d.p10), 4) << ", p50 "
      << fmt_num(days(d.p50), 4) << ", p90 " << fmt_num(days(d.p90), 4) << " days; mean "
      << fmt_num(days(d.mean), 4) << " days, " << fmt_num(d.mean_failures, 4) << " failures\n";
  }
  if (run.nominal_step_time) {
    const auto& st = run.built.scenario.straggler;
    o << "  straggling chip      x" << fmt_num(st.slowdown, 4) << " compute on stage "
      << run.result.straggler_stage << " of one replica: step "
      << fmt_num(core::to_seconds(run.result.step_time), 4) << " s against " << fmt_num(core::to_seconds(*run.nominal_step_time), 4)
      << " s (x" << fmt_num(run.result.step_time / *run.nominal_step_time, 4) << "); every replica waits for it\n";
  }
  o << "  site                 " << fmt_num(core::to_watts(run.site_power) / 1e6, 4) << " MW at PUE "
    << fmt_num(run.pue, 3) << ", " << fmt_num(core::to_joules(run.site_energy_per_token), 4) << " J per token\n";
  return o.str();
}

namespace {

Json point_json(const scenario::ScalingPoint& p) {
  if (!p.found) return Json{{"chips", p.chips}, {"found", false}, {"reason", p.note}};
  const auto& r = p.run.result;
  Json j{{"chips", p.chips},
         {"found", true},
         {"plan", plan_json(p.run.built.scenario.plan)},
         {"step_time_s", core::to_seconds(r.step_time)},
         {"tokens_per_s", r.tokens_per_s},
         {"tokens_per_s_per_chip", r.tokens_per_s_per_chip},
         {"mfu_pct", r.mfu * 100.0},
         {"goodput_fraction", p.run.goodput.goodput_fraction},
         {"effective_tokens_per_s", p.run.goodput.effective_tokens_per_s},
         {"failures_per_day", p.run.goodput.total_failures_per_day},
         {"gain_ratio", p.gain}};
  // With --train-tokens: the time to train at this count, failures included.
  if (p.run.time_to_train_with_failures) j["time_to_train_s"] = core::to_seconds(*p.run.time_to_train_with_failures);
  return j;
}

}  // namespace

Json scaling_document(const Provenance& provenance, const scenario::TrainInputs& in, const scenario::ScalingCurve& c) {
  Json points = Json::array();
  for (const auto& p : c.points) points.push_back(point_json(p));
  Json body{{"system", c.system},
            {"model", c.model},
            {"scaling", points},
            {"largest_useful_chips", c.largest_useful_chips},
            {"curve_flattened", c.flattened}};
  return document("train", provenance, inputs_json(in), body);
}

std::string scaling_text(const scenario::ScalingCurve& c) {
  std::ostringstream o;
  o << "xpusim train --scaling: " << c.model << " on " << c.system << "\n";
  // With --train-tokens every found point has its time to train (days, failures included).
  const bool days = std::any_of(c.points.begin(), c.points.end(),
                                [](const auto& p) { return p.found && p.run.time_to_train_with_failures; });
  o << core::strformat("%10s  %-34s %10s %12s %10s %7s %9s %13s %6s", "chips", "plan (tp pp cp dp vpp mb gbs)",
                       "step s", "tokens/s", "tok/s/chip", "MFU %", "goodput %", "effective t/s", "gain")
    << (days ? core::strformat(" %10s", "days") : std::string()) << "\n";
  for (const auto& p : c.points) {
    if (!p.found) {
      o << core::strformat("%10s  %s\n", core::fmt_int(p.chips).c_str(), p.note.c_str());
      continue;
    }
    const auto& pl = p.run.built.scenario.plan;
    const auto& r = p.run.result;
    const std::string plan = core::strformat("%d %d %d %d %d %lld %lld", pl.tp, pl.pp, pl.cp, pl.dp, pl.vpp,
                                             pl.micro_batch, pl.global_batch);
    o << core::strformat("%10s  %-34s %10s %12s %10s %7s %9s %13s %6s", core::fmt_int(p.chips).c_str(),
                         plan.c_str(), fmt_num(core::to_seconds(r.step_time), 4).c_str(),
                         fmt_num(r.tokens_per_s, 4).c_str(), fmt_num(r.tokens_per_s_per_chip, 4).c_str(),
                         fmt_num(r.mfu * 100.0, 3).c_str(), fmt_num(p.run.goodput.goodput_fraction * 100.0, 3).c_str(),
                         fmt_num(p.run.goodput.effective_tokens_per_s, 4).c_str(),
                         p.gain > 0 ? fmt_num(p.gain, 3).c_str() : "-");
    if (days && p.run.time_to_train_with_failures)
      o << core::strformat(" %10s", fmt_num(core::to_seconds(*p.run.time_to_train_with_failures) / core::kSecondsPerDay, 4).c_str());
    o << "\n";
  }
  if (!c.any_found()) {
    o << "no chip count of the range fits: each count's reason is above (a fixed global batch must split into whole "
         "micro-batches on every data-parallel rank; try a batch the counts divide, or another range)\n";
    return o.str();
  }
  o << "largest useful chip count: " << core::fmt_int(c.largest_useful_chips)
    << " (the largest count at which one more doubling still adds x1.5 effective throughput"
    << (c.flattened ? ")\n" : "; the curve has not flattened by the last count: try a larger TO)\n");
  return o.str();
}

namespace {

const char* kind_name(scenario::SolverKind k) { return k == scenario::SolverKind::Deadline ? "deadline" : "budget"; }

const char* outcome(const scenario::SolverProbe& p, scenario::SolverKind k) {
  if (!p.found) return "no plan";
  if (k == scenario::SolverKind::Deadline) return p.meets ? "meets deadline" : "misses deadline";
  return p.meets ? "within budget" : "over budget";
}

}  // namespace

Json solver_json(const scenario::SolverResult& r) {
  Json tried = Json::array();
  for (const auto& p : r.choice.tried) {
    Json t{{"chips", p.chips}, {"outcome", outcome(p, r.kind)}};
    if (p.found) {
      t["time_to_train_s"] = p.time_to_train_s;
      t["cost_usd"] = p.cost_usd;
    } else {
      t["reason"] = p.note;
    }
    tried.push_back(t);
  }
  const bool deadline = r.kind == scenario::SolverKind::Deadline;
  return Json{{"kind", kind_name(r.kind)},
              {"target", r.target_text},
              {deadline ? "deadline_s" : "budget_usd", r.target},
              {"met", r.choice.met},
              {"chips", r.choice.chips},
              {"plan", plan_json(r.run.built.scenario.plan)},
              {"time_to_train_s", core::to_seconds(*r.run.time_to_train_with_failures)},
              {"goodput_fraction", r.run.goodput.goodput_fraction},
              {"cost_usd", r.cost_usd},
              {"tried", tried}};
}

std::string solver_text(const scenario::SolverResult& r) {
  std::ostringstream o;
  const bool deadline = r.kind == scenario::SolverKind::Deadline;
  o << "xpusim train --" << kind_name(r.kind) << " " << r.target_text << ": " << r.model << " on " << r.system
    << (deadline ? " (fewest chips that train in time, failures included)\n"
                 : " (fastest run within the money, failures included)\n");
  o << core::strformat("%10s  %-16s %18s %14s\n", "chips", "outcome", "days w/ failures", "cost $M");
  for (const auto& p : r.choice.tried)
    o << core::strformat("%10s  %-16s %18s %14s\n", core::fmt_int(p.chips).c_str(), outcome(p, r.kind),
                         p.found ? fmt_num(p.time_to_train_s / core::kSecondsPerDay, 4).c_str() : "-",
                         p.found ? fmt_num(p.cost_usd / 1e6, 4).c_str() : "-");
  const auto& pl = r.run.built.scenario.plan;
  o << (r.choice.met ? "answer: " : "infeasible: no count meets the " + std::string(kind_name(r.kind)) +
                                        "; best achievable: ")
    << core::fmt_int(r.choice.chips) << " chips (tp " << pl.tp << " pp " << pl.pp << " dp " << pl.dp << " cp "
    << pl.cp << " ep " << pl.ep << " vpp " << pl.vpp << ", global batch " << pl.global_batch << "): "
    << fmt_num(days(*r.run.time_to_train_with_failures), 4) << " days with failures (goodput "
    << fmt_num(r.run.goodput.goodput_fraction * 100.0, 3) << "%), $" << fmt_num(r.cost_usd / 1e6, 4) << "M\n\n";
  return o.str();
}

}  // namespace xpusim::report
