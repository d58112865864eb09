// Determinism (DESIGN.md): every command that computes something, run twice with the same
// inputs, prints byte-identical stdout, as text and as --json.

#include <gtest/gtest.h>

#include <string>

#include "cli_runner.h"
#include "npy_fixture.h"

namespace {

using xpusim::test::run_cli;

struct Command {
  const char* name;
  std::string args;  ///< without --json; the test runs it with and without
};

class Determinism : public ::testing::TestWithParam<Command> {};

TEST_P(Determinism, SameInputsGiveByteIdenticalOutput) {
  const std::string args = xpusim::test::with_npy_fixtures(GetParam().args);
  for (const std::string& form : {args, args + " --json"}) {
    const auto first = run_cli(form);
    const auto second = run_cli(form);
    ASSERT_EQ(first.exit_code, 0) << form << "\n" << first.err;
    EXPECT_EQ(second.exit_code, first.exit_code) << form;
    EXPECT_FALSE(first.out.empty()) << form;
    EXPECT_TRUE(first.out == second.out) << form << ": the two runs differ";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Commands, Determinism,
    ::testing::Values(
        Command{"catalog_list", "catalog list"},
        Command{"catalog_show", "catalog show gb300-nvl72"},
        Command{"model_list", "model list"},
        Command{"model_show", "model show llama3.1-405b --seq 8192"},
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
        Command{"validate", "validate"},
        Command{"calibration_show", "calibration show"},
        Command{"claims", "claims --price 4 --tdp 900"},
        Command{"collective", "collective --system gb300-nvl72 --chips 72 --op all-to-all --bytes 1073741824"},
        Command{"mx_quantize", "mx quantize --format mxfp4_e2m1 {A} " + testing::TempDir() + "xs_det_q.npy"},
        Command{"mx_stats", "mx stats {A}"},
        Command{"mx_gemm", "mx gemm {A} {B} --format mxfp8_e4m3"}),
    [](const ::testing::TestParamInfo<Command>& command) { return std::string(command.param.name); });

}  // namespace
