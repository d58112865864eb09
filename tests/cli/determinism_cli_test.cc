// Determinism (DESIGN.md): every command that computes something, run twice with the same
// inputs, prints byte-identical stdout, as text and as --json. Every sub-command of the CLI
// (main.cc) has at least one row; DeterminismTable.EveryCommandHasARow keeps it so.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "../unit/chakra_fixture.h"
#include "cli_runner.h"
#include "hopper_rows.h"
#include "npy_fixture.h"

#include <unistd.h>
#include "../scratch_path.h"

namespace {

using xpusim::test::run_cli;

/// A Chakra training trace of 4 ranks (tests/unit/chakra_fixture.h); returns its prefix. The
/// fixtures are per process: ctest runs the commands' cases in parallel.
std::string chakra_trace() {
  const std::string dir = xpusim::test::scratch_path("xs_det_chakra", "") + "/";
  std::filesystem::create_directories(dir);
  return xpusim::test::chakra::write_training(dir, "train", xpusim::test::chakra::TrainingShape{});
}

/// The validation CSV's header and its H100 training rows (calibrate's input).
std::string hopper_rows() { return xpusim::test::write_hopper_rows("xs_det_hopper"); }

/// `args` with its fixtures written: {A} and {B} (.npy), {CHAKRA} (a trace prefix), {HOPPER}
/// (a CSV), {DATA} (the shipped data directory) and {SCRATCH} (a file of this process to write).
std::string with_fixtures(const std::string& args) {
  std::string out = xpusim::test::with_npy_fixtures(args);
  const auto replace = [&out](const std::string& token, auto make) {
    const std::size_t at = out.find(token);
    if (at != std::string::npos) out.replace(at, token.size(), make());
  };
  replace("{CHAKRA}", chakra_trace);
  replace("{HOPPER}", hopper_rows);
  replace("{DATA}", [] { return xpusim::test::data_dir(); });
  replace("{SCRATCH}", [] { return xpusim::test::scratch_path("xs_det_out", ".csv"); });
  return out;
}

struct Command {
  const char* name;
  std::string args;  ///< without --json; the test runs it with and without
};

class Determinism : public ::testing::TestWithParam<Command> {};

TEST_P(Determinism, SameInputsGiveByteIdenticalOutput) {
  const std::string args = with_fixtures(GetParam().args);
  for (const std::string& form : {args, args + " --json"}) {
    const auto first = run_cli(form);
    const auto second = run_cli(form);
    ASSERT_EQ(first.exit_code, 0) << form << "\n" << first.err;
    EXPECT_EQ(second.exit_code, first.exit_code) << form;
    EXPECT_FALSE(first.out.empty()) << form;
    EXPECT_TRUE(first.out == second.out) << form << ": the two runs differ";
  }
}

const Command kCommands[] = {
    Command{"catalog_list", "catalog list"},
    Command{"catalog_show", "catalog show gb300-nvl72"},
    Command{"model_list", "model list"},
    Command{"model_show", "model show llama3.1-405b --seq 8192"},
    Command{"model_show_ssm", "model show falcon-mamba-7b"},
    Command{"model_show_sparse", "model show deepseek-v3.2"},
    Command{"serve_ssm", "serve --system h100-sxm-dgx --model mamba-2.8b --rate 20 --requests 200 --in-len 2048 "
                         "--out-len 256 --json"},
    Command{"demo", "demo"},
    Command{"train", "train --system trn2-48xl --model llama3.1-8b --chips 16 --tp 4 --pp 2 --train-tokens 1e12"},
    Command{"train_h100", "train --system h100-sxm-dgx --model llama3.1-8b --chips 8 --tp 1 --pp 1"},
    Command{"train_monte_carlo", "train --system h100-sxm-dgx --model llama3.1-8b --chips 64 --tp 1 --pp 1 "
                                 "--train-tokens 1e11 --runs 20 --seed 9"},
    Command{"train_scaling", "train --system h100-sxm-dgx --model llama3.1-8b --seq-len 4096 --scaling 8..32"},
    Command{"serve", "serve --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 5 --requests 100 "
                     "--in-len 256 --out-len 32"},
    Command{"serve_search", "serve --search --system h100-sxm-dgx --model llama3.1-8b --precision fp8 --rate 2 "
                            "--requests 100 --in-len 256 --out-len 32"},
    Command{"serve_search_hetero", "serve --search --prefill-system gb300-fusion-mixed-rack --decode-system "
                                   "trn4-fusion-mixed-rack --model llama3.1-8b --precision fp8 --rate 4 "
                                   "--requests 100 --in-len 256 --out-len 32"},
    Command{"train_mix_interleaved", "train --model llama3.1-8b --tp 2 --micro-batch 1 --global-batch 16 --seq-len 4096 "
                                     "--vpp 2 --mix trn4-fusion-mixed-rack:4,gb300-fusion-mixed-rack:4"},
    Command{"validate", "validate"},
    Command{"validate_json", "validate --json"},
    Command{"calibration_show", "calibration show"},
    Command{"claims", "claims --price 4 --tdp 900"},
    Command{"collective", "collective --system gb300-nvl72 --chips 72 --op all-to-all --bytes 1073741824"},
    Command{"mx_quantize", "mx quantize --format mxfp4_e2m1 {A} " + testing::TempDir() + "xs_det_q.npy"},
    Command{"mx_stats", "mx stats {A}"},
    Command{"mx_gemm", "mx gemm {A} {B} --format mxfp8_e4m3"},
    Command{"sweep_train", "sweep {DATA}/sweeps/train-llama3.1-8b-h100.yaml"},
    Command{"sweep_serve", "sweep {DATA}/sweeps/serve-llama3.1-8b-h100.yaml"},
    Command{"replay", "replay {CHAKRA} --system h100-sxm-dgx"},
    Command{"trace_stats", "trace-stats {DATA}/traces/mooncake-conversation.csv --cache-tokens 3000000"},
    Command{"sessions", "sessions --sessions 300 --turns 5 --system-prompt-len 900 --out {SCRATCH}"},
    Command{"sessions_from_trace", "sessions --from {DATA}/traces/azure-code-2023.csv --turns 2 --out {SCRATCH}"},
    Command{"serve_prefix_cache", "serve --system h100-sxm-dgx --model llama3.1-70b --chips 8 --tp 8 --precision fp8 "
                                  "--arrivals {DATA}/traces/mooncake-synthetic.csv"},
    Command{"calibrate", "calibrate {HOPPER} --params compute.nvidia-hopper.gemm_efficiency --folds none"},
    Command{"train_scenario", "train --scenario {DATA}/scenarios/train-llama3.1-8b-trn2.yaml"},
    Command{"serve_scenario", "serve --scenario {DATA}/scenarios/serve-trn3-llama70b.yaml --requests 300"},
};

INSTANTIATE_TEST_SUITE_P(
    Commands, Determinism, ::testing::ValuesIn(kCommands),
    [](const ::testing::TestParamInfo<Command>& command) { return std::string(command.param.name); });

// Every command main.cc dispatches to appears in the table above: a new command gets a row.
TEST(DeterminismTable, EveryCommandHasARow) {
  const auto help = run_cli("--help");
  ASSERT_EQ(help.exit_code, 0);
  std::set<std::string> covered;
  for (const Command& c : kCommands) covered.insert(c.args.substr(0, c.args.find(' ')));
  std::istringstream lines(help.out);
  std::string line;
  bool in_commands = false;
  int listed = 0;
  while (std::getline(lines, line)) {
    if (line == "commands:") in_commands = true;
    else if (in_commands && line.rfind("  ", 0) == 0) {
      const std::string name = line.substr(2, line.find(' ', 2) - 2);
      ++listed;
      EXPECT_TRUE(covered.count(name)) << "no determinism row for '" << name << "'";
    } else if (in_commands) in_commands = false;
  }
  EXPECT_GE(listed, 10) << help.out;
}

}  // namespace
