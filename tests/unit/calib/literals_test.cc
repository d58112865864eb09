// Numbers in model code are physics: a numeric literal in the model layers must be explained by
// the rule of docs/calibration.md ("Literals in code") or by an entry of the allowlist below
// with its reason. Fitted and assumed values belong in data/calibration/*.yaml.
//
// Rule: comments, string and character literals are not scanned; 0, 1, 2 and 0.5 (identity,
// counting, doubling/halving, both directions of a link) and powers of ten written in exponent
// form (1e-12, 1e6: SI unit conversions) are always allowed. Every other literal in the model
// layers (compute, net, mapping, engine, serve, cost, calib) needs an allowlist entry.

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> kModelLayers = {"compute", "net", "mapping", "engine", "serve", "cost", "calib"};

struct Allowed {
  const char* file;                    ///< path under src/
  std::vector<std::string> literals;   ///< as written (digit separators and suffixes removed)
  const char* reason;
};

// Keep this list short: each entry is physics, a definition, or a structural number.
const std::vector<Allowed> kAllowlist = {
    {"compute/chip_model.cc", {"16.0"}, "GPU MMA tile granularity: 16 rows (Hopper/Blackwell wgmma m16)"},
    {"compute/chip_model.cc", {"512.0"}, "Trainium moving-tensor chunk of at most 512 columns (NKI guide); GPU split-K granularity"},
    {"compute/chip_model.cc", {"4.0"}, "fp32 accumulator bytes per element of dW"},
    {"compute/chip_model.cc", {"5.0"}, "the five kernels of Mamba-2's chunked SSD scan (mamba_chunk_scan_combined: dt cumsum, chunk states, state passing, C·Bᵀ, chunk scan)"},
    {"compute/chip_model.cc", {"3.0"}, "a cast kernel reads bf16 (2 bytes) and writes 1 byte per element"},
    {"compute/chip_model.cc", {"2.5"}, "attention backward runs 5 GEMMs to the forward's 2 (FLOP count)"},
    {"net/topology.cc", {"4.0"}, "all-to-all bisection: a cut between halves carries m·S/4 (docs/network.md)"},
    {"mapping/schedules/dualpipe.cc", {"3.0"}, "DualPipe bubble (pp/2 − 1)(F&B + B − 3W) of the DeepSeek-V3 report"},
    {"mapping/step_plan.cc", {"3"}, "tasks per micro-batch hop: F, B, W when the backward is split (else F and B)"},
    {"mapping/memory.cc", {"12.0"}, "mixed-precision Adam: fp32 master weights and two fp32 moments, 3 x 4 bytes"},
    {"mapping/memory.cc", {"4.0", "5.0", "3.0"}, "activation bytes per element of Korthikanti et al. 2022, eq. 1-2"},
    {"mapping/memory.cc", {"1.5"}, "threshold between 1- and 2-byte dtypes"},
    {"engine/stage_costs.cc", {"4.0", "3.0"}, "collective counts per layer: full recompute repeats the forward's 2, CP passes K/V 3 times, EP 4 all-to-alls"},
    {"engine/stage_costs.cc", {"30.0"}, "mixed-precision Adam bytes moved per parameter: 4·4 + 3·4 + 2"},
    {"engine/search.cc", {"64"}, "plan-search bound: expert parallelism up to 64 (enumeration, not a prediction)"},
    {"engine/sizing.cc", {"16.0", "400", "64", "4", "8", "16", "32"}, "capacity sizing: 16 bytes/param of mixed-precision Adam as a first guess, search bounds and TP/PP candidates"},
    {"serve/scenario.cc", {"64", "3", "1024", "100", "10"}, "TP candidates up to 64, 3 significant digits in messages, percent in a message, a 1,024-token KV transfer sampled to time disaggregated KV hand-off, the capacity run's steady state between its 10th- and 90th-percentile completions (the Poisson window's deciles)"},
    {"serve/search.cc", {"64", "1000000", "16", "8"},
     "plan-search bounds (enumeration, not a prediction): tp up to 64, pipeline stages up to 16, DP-attention expert "
     "groups up to 8 domains"},
    {"serve/simulator.cc", {"0.999999", "100", "10"}, "acceptance clamp below 1, Poisson warm-up: drop the first 10% of >= 100 requests"},
    {"serve/simulator.cc", {"16", "4", "3"},
     "runs of quiet steps: interpolated from 16 steps on (performance only), tested on the line at their quartiles"},
    {"serve/latency_stats.cc", {"0.90", "0.99"}, "p90/p99 definitions"},
    {"serve/step_cost.cc", {"16", "1025"}, "memo table sizes (2^16 tokens, 1024 + 1 initial entries): performance only"},
    {"serve/rng.h", {"11", "9007199254740992.0", "6.283185307179586"}, "uniform double from 53 random bits, 2π (Box-Muller)"},
    {"serve/workload.cc", {"30"}, "rejection-loop bound"},
    {"serve/sessions.cc", {"32"}, "characters of a buffer for one written arrival time (16 for 30 days in seconds with six decimals)"},
    {"engine/common.cc", {"4"}, "significant digits of a message"},
    {"serve/search.cc", {"6"}, "significant digits of the rate in the command a found plan prints"},
    {"engine/replay.cc", {"8"}, "at most 8 stuck nodes named in a replay deadlock message"},
    {"engine/goodput.cc", {"12.0", "6000", "4.0", "3.0"}, "quadrature of E[max of normals]: bounds ±12 σ, 6,000 Simpson intervals, Simpson weights 1-4-2-4 and h/3"},
    {"engine/goodput.cc", {"0.1", "0.9", "11", "53"}, "p10/p90 definitions; uniform double from the top 53 of 64 random bits"},
};

std::string strip_code(const std::string& line, bool& in_block) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (in_block) {
      if (line.compare(i, 2, "*/") == 0) { in_block = false; ++i; }
      continue;
    }
    if (line.compare(i, 2, "//") == 0) break;
    if (line.compare(i, 2, "/*") == 0) { in_block = true; ++i; continue; }
    const char c = line[i];
    const bool digit_separator = c == '\'' && i > 0 && std::isdigit(static_cast<unsigned char>(line[i - 1]));
    if ((c == '"' || c == '\'') && !digit_separator) {
      for (++i; i < line.size() && line[i] != c; ++i)
        if (line[i] == '\\') ++i;
      out += "\"\"";
      continue;
    }
    out += c;
  }
  return out;
}

bool always_allowed(const std::string& literal) {
  if (std::regex_match(literal, std::regex("1[eE][-+]?[0-9]+"))) return true;
  const double v = std::stod(literal);
  return v == 0.0 || v == 0.5 || v == 1.0 || v == 2.0;
}

struct Finding {
  std::string file;
  int line;
  std::string literal;
};

std::vector<Finding> scan(const std::filesystem::path& root, const std::string& layer) {
  static const std::regex number(R"((^|[^A-Za-z0-9_.])((?:[0-9][0-9']*\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)[uUlLfF]*(?![A-Za-z0-9_.]))");
  std::vector<Finding> out;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root / layer))
    if (e.path().extension() == ".cc" || e.path().extension() == ".h") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string line;
    bool in_block = false;
    for (int n = 1; std::getline(in, line); ++n) {
      const std::string code = strip_code(line, in_block);
      for (std::sregex_iterator it(code.begin(), code.end(), number), end; it != end; ++it) {
        std::string literal = (*it)[2].str();
        literal.erase(std::remove(literal.begin(), literal.end(), '\''), literal.end());
        if (!always_allowed(literal))
          out.push_back({std::filesystem::relative(path, root).string(), n, literal});
      }
    }
  }
  return out;
}

bool allowlisted(const Finding& f) {
  for (const auto& a : kAllowlist)
    if (f.file == a.file && std::find(a.literals.begin(), a.literals.end(), f.literal) != a.literals.end())
      return true;
  return false;
}

TEST(LiteralsInModelCode, EveryLiteralIsPhysicsOrAllowlisted) {
  const std::filesystem::path root = XS_SOURCE_DIR "/src";
  for (const auto& layer : kModelLayers)
    for (const Finding& f : scan(root, layer))
      EXPECT_TRUE(allowlisted(f)) << "src/" << f.file << ":" << f.line << ": numeric literal " << f.literal
                                  << " — move it to data/calibration/*.yaml, or allowlist it with a reason "
                                     "(tests/unit/calib/literals_test.cc, docs/calibration.md)";
}

// The allowlist carries no dead entries: each literal still occurs in its file.
TEST(LiteralsInModelCode, AllowlistHasNoStaleEntries) {
  const std::filesystem::path root = XS_SOURCE_DIR "/src";
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& layer : kModelLayers)
    for (const Finding& f : scan(root, layer)) seen.insert({f.file, f.literal});
  for (const auto& a : kAllowlist)
    for (const auto& literal : a.literals)
      EXPECT_TRUE(seen.count({a.file, literal})) << a.file << ": " << literal << " is no longer used; drop it";
}

// The scanner itself: a fitted number in code is found, comments and strings are not scanned.
TEST(LiteralsInModelCode, ScannerFindsLiteralsOutsideCommentsAndStrings) {
  bool block = false;
  EXPECT_EQ(strip_code("x = 0.75; // 0.8", block), "x = 0.75; ");
  EXPECT_EQ(strip_code("s = \"0.9\" + 1'000;", block), "s = \"\" + 1'000;");
  EXPECT_EQ(strip_code("a /* 3.0", block), "a ");
  EXPECT_TRUE(block);
  EXPECT_EQ(strip_code("4.0 */ b", block), " b");
  EXPECT_TRUE(always_allowed("1e-12"));
  EXPECT_TRUE(always_allowed("2.0"));
  EXPECT_FALSE(always_allowed("0.75"));
  EXPECT_FALSE(always_allowed("10.0"));
}

}  // namespace
