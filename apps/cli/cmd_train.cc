// xpusim train: one training step of a model on a system with a parallel plan. Parses flags
// and calls the library (scenario/ loads and resolves, report/ renders).

#include <chrono>
#include <fstream>
#include <iostream>

#include "cli_util.h"
#include "flags.h"
#include "xpusim/api/api.h"
#include "xpusim/report/html_report.h"
#include "xpusim/report/mix_report.h"
#include "xpusim/report/scale_report.h"
#include "xpusim/report/train_report.h"
#include "xpusim/report/trust_report.h"
#include "xpusim/scenario/train_page.h"

namespace xpusim::cli {

namespace {

void add_train_flags(CLI::App& app, scenario::TrainInputs& in) {
  add_optional(app, "--system", in.system, "system id (xpusim catalog list)");
  add_optional(app, "--model", in.model, "model id (xpusim model list) or path to a config.json");
  add_optional(app, "--chips", in.chips, "total chips; more than one UltraServer/rack means a cluster of them");
  add_optional(app, "--tp", in.tp, "tensor parallel degree");
  add_optional(app, "--pp", in.pp, "pipeline stages");
  add_optional(app, "--dp", in.dp, "data parallel degree");
  add_optional(app, "--cp", in.cp, "context parallel degree");
  add_optional(app, "--ep", in.ep, "expert parallel degree");
  add_optional(app, "--vpp", in.vpp, "virtual pipeline stages per rank (interleaved 1F1B)");
  add_optional(app, "--schedule", in.schedule,
               "pipeline schedule: 1f1b, interleaved, dualpipe (default: 1f1b for vpp 1, interleaved for vpp > 1)");
  add_optional_flag(app, "--async-tp", in.async_tp,
                    "async tensor parallelism: TP collectives split into tp chunks pipelined with their GEMMs "
                    "(torchtitan AsyncTP); default: the framework's exposed share");
  add_optional(app, "--micro-batch", in.micro_batch, "sequences per micro-batch");
  add_optional(app, "--lora-rank", in.lora_rank,
               "LoRA fine-tuning: base weights frozen, adapters of this rank (default: every weight trains)");
  add_optional(app, "--mtp-layers", in.mtp_layers,
               "multi-token prediction depth: MTP modules (a copy of the last layer, eh_proj and a second LM-head "
               "loss each) on the last pipeline stage, as DeepSeek-V3 trains with 1 (default 0)");
  add_optional(app, "--moe-load-imbalance", in.moe_load_imbalance,
               "mixture of experts: tokens the busiest expert-parallel rank receives over the mean (needs --ep > 1; "
               "default 1, balanced routing as MoE benchmarks force)");
  add_optional(app, "--expert-tp", in.expert_tp,
               "mixture of experts: expert tensor parallelism, the experts on their own grid (Megatron-Core MoE "
               "parallel folding: ep x expert-tp must divide tp x cp x dp; default: the attention's tp, ep dividing dp x cp)");
  add_optional(app, "--recompute-layers", in.recompute_layers,
               "with --recompute full: recompute only the first N layers of each model chunk (pipeline stage, or "
               "virtual stage with --vpp) and keep the others' activations (Megatron --recompute-method block "
               "--recompute-num-layers N; default: every layer)");
  add_optional(app, "--moe-capacity-factor", in.moe_capacity_factor,
               "mixture of experts: an expert takes at most this many times its mean share of the routed tokens and "
               "drops the rest (Megatron --moe-expert-capacity-factor; default: dropless)");
  add_optional_flag(app, "--moe-pad-to-capacity", in.moe_pad_to_capacity,
                    "with --moe-capacity-factor: every expert runs exactly its capacity (Megatron "
                    "--moe-pad-expert-input-to-capacity)");
  add_optional(app, "--lora-targets", in.lora_targets,
               "the weights the LoRA adapters sit beside: attention (qkv and output projections) or all-linear "
               "(and the MLP's; default, Megatron-Bridge's)");
  add_optional(app, "--global-batch", in.global_batch, "sequences per step (default: the framework recipe, else the critical batch: ~4M tokens below 100B parameters, ~16M from 100B; at least the micro-batches the pipeline needs)");
  add_optional(app, "--max-global-batch-tokens", in.max_global_batch_tokens,
               "upper bound on the global batch (tokens) the plan search may use (default: the critical batch, "
               "~4M tokens below 100B parameters, ~16M from 100B)");
  add_optional(app, "--seq-len", in.seq_len, "sequence length (default: min(max positions, 8192))");
  add_optional(app, "--precision", in.precision, "matmul precision: bf16, fp16, fp8, mxfp8, mxfp4, nvfp4 ...");
  add_optional_flag(app, "--allow-fallback", in.allow_fallback,
                    "run a precision the chip lacks as the nearest it has (stated; MFU against that peak)");
  add_optional(app, "--zero", in.zero, "optimizer sharding: none, 1, 2, 3, fsdp (default 1)");
  add_optional(app, "--recompute", in.recompute, "none, selective, full (default: the least that fits)");
  add_optional(app, "--framework", in.framework,
               "training framework preset: megatron (default), megatron-lm-2021, deepseek, torchtitan, "
               "llm-foundry, neuronx-distributed");
  add_optional(app, "--executor", in.executor, "event (default) or analytical");
  add_optional(app, "--train-tokens", in.train_tokens,
               "also report the time, energy and cost to train on this many tokens (e.g. 1e12)");
  add_estimate_flags(app, in.overrides);
  add_optional(app, "--checkpoint-tier", in.checkpoint_tier,
               "checkpoint storage: local-nvme, parallel-fs (default), object-storage");
  add_optional(app, "--spares", in.spares, "hot spare nodes (default 0: a failed node is replaced from the pool)");
  add_optional(app, "--checkpoint-interval", in.checkpoint_interval,
               "seconds of training between checkpoints (default: Young-Daly, in whole steps)");
  add_optional(app, "--runs", in.runs, "Monte Carlo runs of the whole training run (needs --train-tokens)");
  add_optional(app, "--top", in.top,
               "with the plan search: list the N next-best plans that fit and by how much each lost");
  add_optional(app, "--seed", in.seed, "seed of the Monte Carlo (default 1)");
  add_optional(app, "--straggler", in.straggler,
               "one chip's compute F times slower (1.3 = 30%): the step waits for its replica (event executor)");
  add_optional(app, "--straggler-stage", in.straggler_stage, "pipeline stage of the straggling chip (default: the busiest)");
  add_optional(app, "--pue", in.pue, "site power usage effectiveness, > 1 and < 3 (default: the calibration's)");
  add_optional(app, "--scaling", in.scaling,
               "FROM..TO: the efficiency curve over chip counts (whole UltraServers/racks, doubling) at a fixed "
               "global batch, and the largest useful chip count");
  add_optional(app, "--deadline", in.deadline,
               "with --train-tokens: the fewest chips (and plan) that train in this time with failures included, "
               "e.g. 30d, 720h, 2.5e6 s");
  add_optional(app, "--budget", in.budget,
               "with --train-tokens: the fastest run whose cost (USD, failures included) is within this");
}

int run_scaling(const scenario::TrainInputs& in, const hw::Catalog& cat, const calib::Params& params, bool json,
                const std::string& calibration_file) {
  const scenario::ScalingCurve curve = scenario::run_scaling(in, cat, data_dir() + "/models", params);
  if (json) std::cout << report::scaling_document(provenance(true, true, calibration_file), in, curve).dump(2) << "\n";
  else std::cout << report::scaling_text(curve);
  return curve.any_found() ? 0 : 1;  // no count fits: infeasible, every count's reason printed
}

int run_solver(const scenario::TrainInputs& in, const hw::Catalog& cat, const calib::Params& params, bool json,
               const std::string& calibration_file) {
  const auto started = std::chrono::steady_clock::now();
  const scenario::SolverResult result = scenario::run_solver(in, cat, data_dir() + "/models", params);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  std::cerr << "xpusim train: solver tried " << result.choice.tried.size() << " chip counts in " << took.count()
            << " s\n";
  if (json) {
    std::cout << api::train_solver_document(provenance(true, true, calibration_file), load_trust_data(), in, result)
                     .dump(2)
              << "\n";
  } else {
    std::cout << report::solver_text(result) << report::train_run_text(result.run);
  }
  if (result.choice.met) return 0;
  std::cerr << "infeasible: no chip count of " << result.system << " meets the "
            << (result.kind == scenario::SolverKind::Deadline ? "deadline" : "budget") << "\n";
  return 1;
}

// --mix A:N,B:M: one pipeline over two kinds of chip (docs/fusion.md).
int run_mix(const scenario::TrainInputs& in, const std::string& mix, const hw::Catalog& cat, const calib::Params& params,
            bool json, const std::string& calibration_file) {
  const scenario::MixResult r = scenario::run_train_mix(in, mix, cat, data_dir() + "/models", params);
  if (json) std::cout << report::mix_document(provenance(true, true, calibration_file), in, mix, r).dump(2) << "\n";
  else std::cout << report::mix_text(r);
  if (r.fits) return 0;
  if (!json) std::cerr << "infeasible: " << r.reason << "\n";
  return 1;
}

void write_trace(const std::string& path, const engine::TrainResult& r) {
  write_text_file("--trace", path, engine::chrome_trace_json(r));
}

}  // namespace

namespace {

struct TrainOutputs {
  std::string scenario_file, trace, calibration_file, html, mix;
  bool json = false;
};

void add_train_output_flags(CLI::App& app, TrainOutputs& o) {
  app.add_option("--mix", o.mix,
                 "A:N,B:M: one pipeline whose first stages run on N chips of system A and the rest on M chips of "
                 "B, layers split so that stages finish together (docs/fusion.md)");
  add_calibration_option(app, o.calibration_file);
  add_catalog_option(app);
  app.add_option("--scenario", o.scenario_file, "YAML scenario file (flags given on the command line win)");
  app.add_option("--trace", o.trace, "write the event-driven timeline as Chrome trace JSON (Perfetto)");
  app.add_flag("--json", o.json, "print one JSON document");
  add_html_option(app, o.html);
}

/// The modes (solver, scaling, mix) take text or JSON only, and only one of them at a time.
void check_train_modes(const scenario::TrainInputs& in, const TrainOutputs& o) {
  if (in.scaling && !o.html.empty()) core::fail("--html", "not available with --scaling", o.html, "a single training step");
  if (in.scaling && !o.trace.empty()) core::fail("--trace", "not available with --scaling", o.trace, "a single training step");
  const bool solver = in.deadline || in.budget;
  if (solver && !o.html.empty())
    core::fail("--html", "not available with --deadline/--budget", o.html, "a single training step");
  if (solver && !o.trace.empty())
    core::fail("--trace", "not available with --deadline/--budget", o.trace, "a single training step");
  if (!o.mix.empty() && (solver || in.scaling))
    core::fail("--mix", "not available with --deadline/--budget/--scaling", o.mix, "one mixed pipeline at the given chips");
  if (!o.mix.empty() && (!o.html.empty() || !o.trace.empty()))
    core::fail(o.html.empty() ? "--trace" : "--html", "not available with --mix", o.html.empty() ? o.trace : o.html,
               "text or --json");
}

/// One training step (the plan searched when not given): trace, HTML, then text or JSON.
int run_one_step(const scenario::TrainInputs& in, const TrainOutputs& o, const hw::Catalog& cat,
                 const calib::Params& params) {
  const auto started = std::chrono::steady_clock::now();
  // The HTML timeline is the event executor's trace (none when the analytical one was asked for).
  const bool html_trace = !o.html.empty() && in.executor.value_or("event") == "event";
  const scenario::TrainRun run = scenario::run_train(in, cat, data_dir() + "/models", params, !o.trace.empty() || html_trace);
  if (run.built.searched) {
    // Timings go to stderr so that stdout stays byte-identical between runs.
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    std::cerr << "xpusim train: plan search timed " << run.built.evaluated << " plans (" << run.built.pruned
              << " pruned) in " << took.count() << " s\n";
  }
  if (!o.trace.empty()) write_trace(o.trace, run.result);
  const auto prov = provenance(true, true, o.calibration_file);
  if (!o.html.empty())
    write_html(o.html, report::train_html(prov, run, scenario::train_page_data(run.built.scenario)));
  const validation::TrustData trust = load_trust_data();
  const auto assessment = validation::assess(trust, report::train_query(run.built.scenario));
  const auto metrics = report::train_metrics(run.result);
  if (o.json) {
    std::cout << api::train_document(prov, trust, in, run).dump(2) << "\n";
  } else {
    std::cout << report::train_run_text(run) << report::trust_text(trust, assessment, metrics);
  }
  if (run.result.fits) return 0;
  if (!o.json) std::cerr << "infeasible: " << run.result.reason << "\n";
  return 1;
}

}  // namespace

int run_train(const Args& args) {
  CLI::App app{"Simulate one training step: step time, tokens/s, MFU, breakdown, memory per chip", "xpusim train"};
  scenario::TrainInputs in;
  TrainOutputs o;
  add_train_flags(app, in);
  add_train_output_flags(app, o);
  if (int rc = parse(app, args); rc >= 0) return rc;

  if (!o.scenario_file.empty()) scenario::fill_unset(in, scenario::read_train_file(o.scenario_file));
  const hw::Catalog cat = load_catalog();
  const calib::Params params = load_calibration(o.calibration_file);
  check_train_modes(in, o);
  if (in.deadline || in.budget) return run_solver(in, cat, params, o.json, o.calibration_file);
  if (in.scaling) return run_scaling(in, cat, params, o.json, o.calibration_file);
  if (!o.mix.empty()) return run_mix(in, o.mix, cat, params, o.json, o.calibration_file);
  return run_one_step(in, o, cat, params);
}

}  // namespace xpusim::cli
