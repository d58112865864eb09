#pragma once
// A float32 .npy matrix written into the test's temporary directory, for the CLI tests that
// run `xpusim mx` (values are a fixed function of the index, so the file is the same every run; the name carries
// the process id, as parallel tests write it).

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../npy_bytes.h"
#include "../scratch_path.h"

namespace xpusim::test {

/// Writes `rows` x `cols` float32 values sin(0.37 i) * 3 as .npy v1.0; returns the path.
inline std::string write_npy_matrix(const std::string& name, int rows, int cols) {
  std::vector<float> v(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(3.0 * std::sin(0.37 * static_cast<double>(i)));
  const std::string out =
      npy_file(npy_dict("<f4", "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")"),
               std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)));
  // Per process: ctest runs the tests that write these files in parallel.
  const std::string path = scratch_path("xs_fixture_" + name, ".npy");
  std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
  return path;
}

/// Replaces every "{A}" in `args` with a 4x64 matrix and "{B}" with a 64x8 one.
inline std::string with_npy_fixtures(std::string args) {
  const std::pair<std::string, std::string> fixtures[] = {{"{A}", write_npy_matrix("a", 4, 64)},
                                                          {"{B}", write_npy_matrix("b", 64, 8)}};
  for (const auto& [token, path] : fixtures)
    for (size_t at = args.find(token); at != std::string::npos; at = args.find(token))
      args.replace(at, token.size(), path);
  return args;
}

}  // namespace xpusim::test
