// xpusim command-line entry point: dispatches to one sub-command per file and maps errors to
// exit codes (0 ok, 1 infeasible, 2 bad input, 3 internal error).

#include <iostream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"

namespace xpusim::cli {

namespace {

struct Command {
  const char* name;
  const char* help;
  int (*run)(const Args&);
};

const Command kCommands[] = {
    {"demo", "Trn3 Gen2 UltraServer beside GB300 NVL72 and Trn2: hardware, models, fit", run_demo},
    {"catalog", "list systems, or show one with the source of every number", run_catalog},
    {"model", "parameters, FLOPs and bytes of a model (HF config.json or id)", run_model},
    {"train", "simulate one training step of a model on a system with a parallel plan", run_train},
    {"serve", "simulate serving a request load (continuous batching, paged KV, SLOs)", run_serve},
    {"validate", "predict every row of a validation CSV and report the errors", run_validate},
    {"calibration", "the fitted and assumed parameters: value, unit, meaning, basis, kind, range", run_calibration},
    {"calibrate", "fit the fitted parameters to measurements, with leave-one-source-out CV", run_calibrate},
    {"mx", "OCP MX / NVFP4 block floating point: quantize, stats, gemm", run_mx},
    {"collective", "time, algbw and busbw of one collective over N chips (as nccl-tests)", run_collective},
    {"claims", "check the public Trainium3 claims (Trn3 vs Trn2) with the simulator", run_claims},
    {"sweep", "run a grid of train or serve scenarios: one CSV row per point (MPI-aware)", run_sweep},
    {"replay", "simulate a Chakra execution trace (PREFIX.<rank>.et) on a system's compute and network", run_replay},
};

void usage(std::ostream& os) {
  os << "xpusim — simulator of AI accelerator systems (Trainium1-4, H100...GB300)\n\n"
        "usage: xpusim <command> [options]   (xpusim <command> --help for details)\n\ncommands:\n";
  for (const auto& c : kCommands) os << "  " << c.name << std::string(12 - std::string(c.name).size(), ' ') << c.help << "\n";
  os << "\nexit codes: 0 ok, 1 infeasible plan, 2 bad input, 3 internal error\n";
}

}  // namespace
}  // namespace xpusim::cli

int main(int argc, char** argv) {
  using namespace xpusim;
  if (argc < 2) {
    cli::usage(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    cli::usage(std::cout);
    return 0;
  }
  if (name == "--version") {
    std::cout << "xpusim " << report::xpusim_version() << "\n";
    return 0;
  }
  cli::Args args(argv + 2, argv + argc);
  for (const auto& c : cli::kCommands) {
    if (name != c.name) continue;
    try {
      return c.run(args);
    } catch (const core::InputError& e) {
      for (const auto& d : e.diagnostics()) std::cerr << "error: " << d.to_string() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "xpusim internal error: " << e.what() << "\n";
      return 3;
    }
  }
  std::vector<std::string> names;
  for (const auto& c : cli::kCommands) names.push_back(c.name);
  std::cerr << "error: unknown command '" << name << "'";
  const std::string hint = core::did_you_mean(name, names);
  if (!hint.empty()) std::cerr << " (" << hint << ")";
  std::cerr << "; expected one of: " << core::join(names) << "\n";
  return 2;
}
