// The million-chip story of `xpusim demo` (docs/scale.md): one train run per system and chip
// count through the same path as `xpusim train` (plan search within the critical batch, the
// analytical executor, failures, checkpoints and goodput), and the count where no plan keeps
// the batch, with the most chips a plan employs there.

#include "demo_scale.h"

#include <nlohmann/json.hpp>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/units.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::cli {

namespace {

using Json = nlohmann::ordered_json;
using core::fmt_int;
using core::fmt_num;
using core::strformat;

constexpr double kTrainTokens = 15e12;  // Llama 3 405B's pre-training corpus (arXiv 2407.21783)

struct Point {
  const char* system;
  const char* precision;
  long long chips;
};

scenario::TrainInputs inputs(const Point& p) {
  scenario::TrainInputs in;
  in.system = p.system;
  in.model = "llama3.1-405b";
  in.chips = p.chips;
  in.precision = p.precision;
  in.seq_len = 8192;
  in.executor = "analytical";
  in.train_tokens = kTrainTokens;
  return in;
}

Json run_point(const Point& p, const hw::Catalog& cat, const std::string& models_dir, const calib::Params& params,
               std::ostream& o) {
  Json j{{"system", p.system}, {"precision", p.precision}, {"chips", p.chips}};
  try {
    const auto run = scenario::run_train(inputs(p), cat, models_dir, params, false);
    const auto& pl = run.built.scenario.plan;
    const auto& g = run.goodput;
    const double days = run.time_to_train_with_failures ? core::to_seconds(*run.time_to_train_with_failures) /
                                                              core::kSecondsPerDay
                                                        : 0.0;
    const std::string plan = strformat("%d/%d/%d/%d", pl.tp, pl.pp, pl.cp, pl.dp);
    o << strformat("%-22s %10s %-16s %7s %8s %6s%% %8s%% %9s %8s\n", p.system, fmt_int(p.chips).c_str(),
                   plan.c_str(), fmt_int(pl.global_batch).c_str(), fmt_num(core::to_seconds(run.result.step_time), 3).c_str(),
                   fmt_num(run.result.mfu * 100, 3).c_str(), fmt_num(g.goodput_fraction * 100, 3).c_str(),
                   fmt_num(g.total_failures_per_day, 3).c_str(), fmt_num(days, 3).c_str());
    j["found"] = true;
    j["plan"] = {{"tp", pl.tp}, {"pp", pl.pp}, {"cp", pl.cp}, {"dp", pl.dp}, {"global_batch", pl.global_batch}};
    j["step_time_s"] = core::to_seconds(run.result.step_time);
    j["mfu_pct"] = run.result.mfu * 100;
    j["goodput_fraction"] = g.goodput_fraction;
    j["failures_per_day"] = g.total_failures_per_day;
    j["time_to_train_days"] = days;
  } catch (const core::InputError& e) {
    const std::string why = e.diagnostics().empty() ? e.what() : e.diagnostics().front().message;
    o << strformat("%-22s %10s  %s\n", p.system, fmt_int(p.chips).c_str(), why.c_str());
    j["found"] = false;
    j["reason"] = why;
  }
  return j;
}

}  // namespace

Json demo_scale(const hw::Catalog& cat, const std::string& models_dir, const calib::Params& params, std::ostream& o) {
  o << "== A million chips: llama3.1-405b on 15T tokens (MXFP8 on Trn3, FP8 on GB300; seq 8192; the global\n"
       "   batch at most 16M tokens; plan search over tp, pp, cp, vpp, micro-batch; failures, checkpoints and\n"
       "   goodput as `xpusim train`, docs/scale.md)\n\n";
  o << strformat("%-22s %10s %-16s %7s %8s %7s %9s %9s %8s\n", "system", "chips", "tp/pp/cp/dp", "batch", "step s",
                 "MFU", "goodput", "fail/day", "days");
  // GB300 up to its largest catalog cluster (100,000); Trn3 on to a million: 261,504 is the most
  // chips a plan employs at a 16M-token batch (docs/scale.md).
  const std::vector<Point> points = {
      {"trn3-ultraserver-gen2", "mxfp8", 1152},    {"gb300-nvl72", "fp8", 1152},
      {"trn3-ultraserver-gen2", "mxfp8", 18432},   {"gb300-nvl72", "fp8", 18432},
      {"trn3-ultraserver-gen2", "mxfp8", 73728},   {"gb300-nvl72", "fp8", 73728},
      {"trn3-ultraserver-gen2", "mxfp8", 261504},  {"trn3-ultraserver-gen2", "mxfp8", 1048464},
  };
  Json j = Json::array();
  for (const auto& p : points) j.push_back(run_point(p, cat, models_dir, params, o));
  o << "  (days include failures; a count past what a 16M-token batch employs has no plan, and the message\n"
       "   names the most chips one does; energy and prices are estimates)\n\n";
  return j;
}

}  // namespace xpusim::cli
