// xpusim command-line entry point: dispatches to one sub-command per file and maps errors to
// exit codes (0 ok, 1 infeasible, 2 bad input, 3 internal error).

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli_util.h"
#include "commands.h"
#include "xpusim/api/api.h"
#include "xpusim/core/data_dir.h"
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
    {"trace-stats", "a request trace's lengths and its prefix reuse through prefix caches (LRU)", run_trace_stats},
    {"sessions", "multi-turn sessions (each prompt the last prompt and answer plus a message) as a request trace", run_sessions},
};

/// `xpusim --version`: the build, the data directory in use and where that choice came from, and
/// the digests every JSON document carries (docs/install.md).
int print_version() {
  const core::DataDir data = api::data_dir_in_use();
  const report::Provenance p = report::provenance(data.path + "/catalog", data.path + "/calibration");
  std::cout << "xpusim " << report::xpusim_version() << "\n"
            << "data directory: " << data.path << " (" << data.origin << ")\n"
            << "catalog digest: " << p.catalog_digest << "\n"
            << "calibration digest: " << p.calibration_digest << "\n";
  return 0;
}

/// Takes `--data-dir DIR` (or `--data-dir=DIR`) out of the arguments, wherever it stands, and
/// makes DIR the data directory of this process; false (and a message) when DIR is missing.
bool take_data_dir_flag(std::vector<std::string>& args) {
  const std::string flag = "--data-dir";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag) {
      if (i + 1 >= args.size() || args[i + 1].empty()) {
        std::cerr << "error: --data-dir: missing value (expected a directory holding catalog/)\n";
        return false;
      }
      core::set_data_dir_flag(args[i + 1]);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      return true;
    }
    if (args[i].rfind(flag + "=", 0) == 0) {
      core::set_data_dir_flag(args[i].substr(flag.size() + 1));
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  }
  return true;
}

/// A standard stream the shell closed (`>&-`) is held open read-only on /dev/null, so that no file
/// the run opens takes its descriptor (a result would land in it) and every write to it fails,
/// to be reported by check_standard_output.
void hold_closed_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = ::open("/dev/null", O_RDONLY);
    if (held >= 0 && held != fd) {
      ::dup2(held, fd);
      ::close(held);
    }
  }
}

/// The command's exit code, or 2 when its standard output or error could not be written in
/// full (a full disk, a closed stream): a lost result never exits 0 (docs/errors.md, "Output").
int check_standard_output(int rc) {
  errno = 0;
  std::cout.flush();
  const bool out_ok = std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout);
  const int out_err = errno;
  std::cerr.flush();
  const bool err_ok = std::cerr.good() && std::fflush(stderr) == 0 && !std::ferror(stderr);
  if (out_ok && err_ok) return rc;
  if (!out_ok && err_ok) {
    std::cerr << "error: standard output: the result could not be written"
              << (out_err != 0 ? std::string(" (") + std::strerror(out_err) + ")" : std::string())
              << " (expected a writable standard output with room for the result)\n";
    std::cerr.flush();
  }
  return rc == 0 || rc == 1 ? 2 : rc;
}

void usage(std::ostream& os) {
  os << "xpusim — simulator of AI accelerator systems (Trainium1-4, H100...GB300)\n\n"
        "usage: xpusim <command> [options]   (xpusim <command> --help for details)\n\ncommands:\n";
  for (const auto& c : kCommands) os << "  " << c.name << std::string(12 - std::string(c.name).size(), ' ') << c.help << "\n";
  os << "\noptions before or after the command: --data-dir DIR (the shipped data; else $XPUSIM_DATA_DIR,\n"
        "  else beside the binary, else the source tree's data/), --version (build, data directory, digests)\n";
  os << "\nexit codes: 0 ok, 1 infeasible plan, 2 bad input, 3 internal error\n";
}

}  // namespace
}  // namespace xpusim::cli

namespace {

int run_main(int argc, char** argv) {
  using namespace xpusim;
  std::vector<std::string> argv_all(argv + 1, argv + argc);
  if (!cli::take_data_dir_flag(argv_all)) return 2;
  if (argv_all.empty()) {
    cli::usage(std::cerr);
    return 2;
  }
  const std::string name = argv_all.front();
  if (name == "--help" || name == "-h" || name == "help") {
    cli::usage(std::cout);
    return 0;
  }
  cli::Args args(argv_all.begin() + 1, argv_all.end());
  try {
    if (name == "--version") return cli::print_version();
    for (const auto& c : cli::kCommands) {
      if (name == c.name) return c.run(args);
    }
  } catch (const core::InputError& e) {
    for (const auto& d : e.diagnostics()) std::cerr << "error: " << d.to_string() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "xpusim internal error: " << e.what() << "\n";
    return 3;
  }
  std::vector<std::string> names;
  for (const auto& c : cli::kCommands) names.push_back(c.name);
  std::cerr << "error: unknown command '" << core::shown_value(name) << "'";
  const std::string hint = core::did_you_mean(name, names);
  if (!hint.empty()) std::cerr << " (" << core::printable(hint) << ")";
  std::cerr << "; expected one of: " << core::join(names) << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  xpusim::cli::hold_closed_standard_streams();
  return xpusim::cli::check_standard_output(run_main(argc, argv));
}
