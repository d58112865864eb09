// xpusim train: one training step of a model on a system with a parallel plan.

#include <fstream>
#include <iostream>

#include "cli_util.h"
#include "xpusim/core/format.h"
#include "train_options.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/cost/energy.h"
#include "xpusim/report/train_report.h"
#include "xpusim/mapping/schedule.h"

namespace xpusim::cli {

int run_train(const Args& args) {
  CLI::App app{"Simulate one training step: step time, tokens/s, MFU, breakdown, memory per chip", "xpusim train"};
  TrainOptions o;
  bool json = false;
  std::string trace;
  double train_tokens = 0;
  app.add_option("--system", o.system, "system id (xpusim catalog list)");
  app.add_option("--model", o.model, "model id (xpusim model list) or path to a config.json");
  app.add_option("--chips", o.chips, "total chips; more than one UltraServer/rack means a cluster of them");
  app.add_option("--scenario", o.scenario, "YAML scenario file (flags given on the command line win)");
  app.add_option("--tp", o.tp, "tensor parallel degree");
  app.add_option("--pp", o.pp, "pipeline stages");
  app.add_option("--dp", o.dp, "data parallel degree");
  app.add_option("--cp", o.cp, "context parallel degree");
  app.add_option("--ep", o.ep, "expert parallel degree");
  app.add_option("--vpp", o.vpp, "virtual pipeline stages per rank (interleaved 1F1B)");
  app.add_option("--schedule", o.schedule,
                 "pipeline schedule: 1f1b, interleaved, dualpipe (default: 1f1b for vpp 1, interleaved for vpp > 1)");
  app.add_option("--micro-batch", o.micro_batch, "sequences per micro-batch");
  app.add_option("--global-batch", o.global_batch, "sequences per step (default: ~4M tokens)");
  app.add_option("--seq-len", o.seq_len, "sequence length (default: min(max positions, 8192))");
  app.add_option("--precision", o.precision, "matmul precision: bf16, fp16, fp8, mxfp8, mxfp4, nvfp4 ...");
  app.add_option("--zero", o.zero, "optimizer sharding: none, 1, 2, 3, fsdp (default 1)");
  app.add_option("--recompute", o.recompute, "none, selective, full (default: the least that fits)");
  app.add_option("--framework", o.framework,
                 "training framework preset: megatron (default), megatron-lm-2021, deepseek, torchtitan, "
                 "llm-foundry, neuronx-distributed");
  app.add_option("--executor", o.executor, "event (default) or analytical")->check(CLI::IsMember({"event", "analytical"}));
  app.add_option("--trace", trace, "write the event-driven timeline as Chrome trace JSON (Perfetto)");
  app.add_option("--train-tokens", train_tokens,
                 "also report the time, energy and cost to train on this many tokens (e.g. 1e12)");
  app.add_flag("--json", json, "print one JSON document");
  std::string calibration_file;
  add_calibration_option(app, calibration_file);
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (train_tokens < 0)
    core::fail("--train-tokens", "must be positive", core::fmt_num(train_tokens), "a token count such as 1e12");
  apply_scenario_file(o);
  const hw::Catalog cat = hw::Catalog::load(data_dir() + "/catalog");
  const calib::Params params = load_calibration(calibration_file);
  BuiltTrain b = build_train(o, cat, data_dir() + "/models", params);
  const engine::TrainScenario& s = b.scenario;
  const bool want_trace = !trace.empty();
  engine::TrainResult r = (o.executor == "analytical" && !want_trace) ? engine::simulate_analytical(s)
                                                                       : engine::simulate_event(s, want_trace);
  if (!r.feasible) {
    // An invalid plan (degrees that do not fit the model or the chips) is bad input: exit 2.
    const auto& p = s.plan;
    core::fail("plan", "not a valid parallel plan: " + r.reason,
               "tp=" + std::to_string(p.tp) + " pp=" + std::to_string(p.pp) + " dp=" + std::to_string(p.dp) +
                   " cp=" + std::to_string(p.cp) + " ep=" + std::to_string(p.ep) + " vpp=" + std::to_string(p.vpp) + " schedule=" + mapping::schedule_name(p) +
                   " micro_batch=" + std::to_string(p.micro_batch) + " global_batch=" +
                   std::to_string(p.global_batch) + " seq_len=" + std::to_string(p.seq_len),
               "degrees that divide the model and the chips (see --help)");
  }
  const cost::EnergyCost e = cost::energy_cost(*s.system, r.activity, r.step_time);
  if (want_trace) {
    std::ofstream out(trace);
    if (!out) core::fail("--trace", "cannot write file", trace, "a writable path");
    out << engine::chrome_trace_json(r);
  }
  // Time to train: steps of the simulated step time until the token budget is consumed.
  const double steps = train_tokens > 0 ? train_tokens / r.tokens_per_step : 0.0;
  const double chips = static_cast<double>(s.plan.chips());
  if (json) {
    auto j = report::train_json(s, r, e);
    j["plan_searched"] = b.searched;
    if (train_tokens > 0) {
      j["train_tokens"] = train_tokens;
      j["time_to_train_s"] = core::to_seconds(r.step_time) * steps;
      j["energy_to_train_j"] = core::to_joules(e.total_energy) * chips * steps;
      j["cost_to_train_usd"] = core::to_dollars(e.dollars) * chips * steps;
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << report::train_text(s, r, e);
    if (train_tokens > 0)
      std::cout << "  time to train " << core::strformat("%.4g", train_tokens) << " tokens: "
                << core::fmt_num(core::to_seconds(r.step_time) * steps / 86400.0, 4) << " days, "
                << core::fmt_num(core::to_joules(e.total_energy) * chips * steps / 3.6e9, 4) << " MWh, $"
                << core::fmt_num(core::to_dollars(e.dollars) * chips * steps / 1e6, 4)
                << "M (energy and price estimated)\n";
    if (b.searched)
      std::cout << "  (plan chosen by search over " << b.evaluated << " candidates; fix any of --tp/--pp/--dp/--recompute to override)\n";
  }
  if (!r.fits) {
    if (!json) std::cerr << "infeasible: " << r.reason << "\n";
    return 1;
  }
  return 0;
}

}  // namespace xpusim::cli
