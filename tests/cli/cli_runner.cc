#include "cli_runner.h"

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace xpusim::test {

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

CliRun run_cli(const std::string& args) {
  char out_tpl[] = "/tmp/xs_cli_out_XXXXXX";
  char err_tpl[] = "/tmp/xs_cli_err_XXXXXX";
  int fo = mkstemp(out_tpl);
  int fe = mkstemp(err_tpl);
  close(fo);
  close(fe);
  const std::string cmd = std::string(XS_CLI_PATH) + " " + args + " >" + out_tpl + " 2>" + err_tpl;
  int status = std::system(cmd.c_str());
  CliRun r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out_tpl);
  r.err = slurp(err_tpl);
  std::remove(out_tpl);
  std::remove(err_tpl);
  return r;
}

std::string data_dir() { return XS_TESTDATA_DIR; }

std::string write_public_rows(const std::string& name, const std::vector<std::string>& prefixes,
                              const std::vector<std::string>& extra) {
  std::ifstream in(data_dir() + "/validation/public.csv");
  std::string line;
  std::ostringstream out;
  std::getline(in, line);
  out << line << "\n";
  while (std::getline(in, line))
    for (const auto& p : prefixes)
      if (line.rfind(p, 0) == 0) out << line << "\n";
  for (const auto& e : extra) out << e << "\n";
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << out.str();
  return path;
}

}  // namespace xpusim::test
