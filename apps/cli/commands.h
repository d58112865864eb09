#pragma once
// Sub-commands of the xpusim CLI. Each lives in its own cmd_<name>.cc, parses its own
// arguments and returns the process exit code: 0 ok, 1 infeasible plan, 2 bad input,
// 3 internal error. InputError thrown from a command is reported by main() with code 2.

#include <string>
#include <vector>

namespace xpusim::cli {

using Args = std::vector<std::string>;  ///< arguments after the sub-command name

int run_catalog(const Args& args);
int run_model(const Args& args);
int run_demo(const Args& args);
int run_train(const Args& args);
int run_serve(const Args& args);
int run_validate(const Args& args);
int run_mx(const Args& args);
int run_collective(const Args& args);
int run_calibration(const Args& args);
int run_calibrate(const Args& args);
int run_claims(const Args& args);
int run_sweep(const Args& args);
int run_replay(const Args& args);
int run_trace_stats(const Args& args);
int run_sessions(const Args& args);

/// The data directory: $XPUSIM_DATA_DIR when set, else the source tree's data/.
std::string data_dir();

}  // namespace xpusim::cli
