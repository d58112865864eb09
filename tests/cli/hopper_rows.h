#pragma once
// The validation CSV's header and its H100 training rows, written to a per-process temporary
// file (calibrate's input in the CLI tests; ctest runs their cases in parallel).

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <unistd.h>

#include "cli_runner.h"
#include "../scratch_path.h"

namespace xpusim::test {

inline std::string write_hopper_rows(const std::string& name) {
  std::ifstream in(data_dir() + "/validation/public.csv");
  std::string line, text;
  std::getline(in, line);
  text = line + "\n";
  while (std::getline(in, line))
    if (line.find(",train,h100-sxm-dgx,") != std::string::npos) text += line + "\n";
  const std::string path = scratch_path(name, ".csv");
  std::ofstream(path) << text;
  return path;
}

}  // namespace xpusim::test
