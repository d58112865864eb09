#pragma once
// Private to src/scenario: the runs behind `xpusim claims` and the builders of each claim.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/scenario/claims.h"
#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/train_inputs.h"

namespace xpusim::scenario::claims_detail {

inline constexpr const char* kTrn3Gen1 = "trn3-ultraserver-gen1";
inline constexpr const char* kTrn3Gen2 = "trn3-ultraserver-gen2";
inline constexpr const char* kTrn2 = "trn2-ultraserver";
// Training: Llama-3.1-70B, 8K sequences, 576 sequences per step (4.7M tokens; divides 64 and 144).
inline constexpr const char* kTrainModel = "llama3.1-70b";
inline constexpr long long kTrainSeqLen = 8192, kTrainGlobalBatch = 576;
// Serving: gpt-oss-120b, 8K in / 1K out (the Trn3 gpt-oss tutorial's shape), 16 chips (one server).
inline constexpr const char* kServeModel = "gpt-oss-120b";
inline constexpr long long kServeChips = 16, kServeInLen = 8192, kServeOutLen = 1024;
inline constexpr long long kServeLoads[] = {1024, 256, 64, 1};  ///< concurrent requests; first = central
// The million-chip run: Llama-3.1-405B, tp 16 x pp 16 (x cp 4 where the batch needs it).
inline constexpr const char* kScaleModel = "llama3.1-405b";
inline constexpr long long kMillion = 1048576, kScaleReferenceChips = 4096;
/// Half a unit of the last printed digit of a published figure, the rounding a claim allows
/// (4 → 0.5, 1.4 → 0.05, 4.36 → 0.005): docs/claims.md, "Verdicts".
double printed_half_unit(double published);

struct EstimateRange {
  double value = 0, low = 0, high = 0;
};

struct TrainPoint {
  std::string system, precision;
  long long chips = 0;
  TrainRun run;
};

struct Runs {
  hw::Catalog cat;  ///< with the user's Trn3 overrides
  std::string models_dir;
  const calib::Params* params = nullptr;
  EstimateRange tdp, price;  ///< Trn3's (the override alone when one is given)
  std::map<std::string, TrainPoint> train;         ///< "gen2/mxfp8", "trn2/fp8", ...
  std::map<std::string, serve::ServeReport> serve; ///< "trn3/mxfp4/1024", "trn2/bf16/1"...
  std::optional<serve::ServeReport> serve_tdp_low, serve_tdp_high;  ///< Trn3 central at the TDP ends
  /// The Trn3 central run under the slowest validated Neuron stack and under GPU-grade serving
  /// software (serve::software_range; docs/serving.md, "Software range").
  std::optional<serve::SoftwareRange> trn3_software;
  std::map<std::string, TrainPoint> scale;         ///< "ref", "2048", "4096", "16384"
};

hw::Catalog with_trn3_overrides(const hw::Catalog& base, const EstimateOverrides& o, std::vector<std::string>& notes);
EstimateRange tdp_range(const hw::SystemSpec& trn3);
EstimateRange price_range(const hw::SystemSpec& trn3);
std::vector<std::string> estimate_notes(const Runs& r);

TrainPoint train_point(const Runs& r, const std::string& system, long long chips, const std::string& precision);
/// Tokens per joule of a run (all chips, overhead included), at the catalog TDP or `tdp_w`.
double tokens_per_joule(const TrainPoint& p, const Runs& r, std::optional<double> tdp_w = std::nullopt);
std::optional<serve::ServeReport> serve_point(const Runs& r, const hw::Catalog& cat, const std::string& system,
                                              const std::string& precision, long long concurrency);
void run_training(Runs& r);
void run_serving(Runs& r);
/// A serving run by chip ("trn3", "trn2"), precision and load; null when it did not fit.
const serve::ServeReport* find_serve(const Runs& r, const std::string& chip, const std::string& precision,
                                     long long load);

Claim make_claim(std::string id, std::string text, std::string source, std::string conditions, std::string metric,
                 double published);
/// A per-chip figure times the chips of one scale-up domain (UltraServer).
double per_domain(const hw::SystemSpec& s, double per_chip);
/// Sets xpusim_ratio, the range and the verdict from the cases.
void finish(Claim& c);
std::string ratio_text(double x);
/// A conclusion "ratio > threshold" at both ends of an estimated input's range: holds, fails, or flips.
void add_flip(Claim& c, const std::string& conclusion, const std::string& input, double at_low, double at_high,
              const EstimateRange& range, const std::string& unit, double threshold);

Claim claim_speed(const Runs& r);
Claim claim_memory(const Runs& r);
Claim claim_energy_per_chip(const Runs& r);
Claim claim_million_chips(const Runs& r);
Claim claim_inference_cost(const Runs& r);
Claim claim_compute(const Runs& r);
Claim claim_memory_bandwidth(const Runs& r);
Claim claim_energy_per_ultraserver(const Runs& r);
Claim claim_throughput_per_chip(const Runs& r);
Claim claim_response_time(const Runs& r);
Claim claim_ultracluster_scale(const Runs& r);

}  // namespace xpusim::scenario::claims_detail
