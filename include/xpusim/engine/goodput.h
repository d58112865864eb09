#pragma once
// Failures, checkpoints, recovery and stragglers of a synchronous training run at scale, and
// the goodput they leave (docs/scale.md). Closed form plus a seeded Monte Carlo of whole runs.
//
// Failures: each chip's components (accelerator, HBM, host, NIC, switch, software) interrupt the
// job at a constant rate per chip-hour (reliability.failure_rates.<family>; Llama 3 Table 5),
// so the job sees a Poisson process of rate λ = chips × Σ rates, MTBF M = 1/λ.
// Checkpoints: size = parameters × bytes per parameter (weights + optimizer state), written in
// parallel by the chips that hold a unique shard, at min(per-node × nodes, aggregate) bandwidth
// of the storage tier; asynchronous checkpoints block only for the device-to-host snapshot.
// Interval: Young–Daly τ = √(2 δ M) (δ the blocking cost), at least the asynchronous write and
// one step, in whole steps, unless given.
// Recovery: detection + restart + checkpoint read (+ the re-done unpersisted work of an
// asynchronous checkpoint), plus a hot-spare swap or a reschedule from the pool for hardware
// failures; a failure during recovery starts a new recovery.
// A segment of work τ plus checkpoint δ (L = τ + δ) then takes, in expectation,
//   E[T] = (e^{λL} − 1) / (λ · Σ_k p_k e^{−λ R_k})   (recovery class k with probability p_k),
// exact for this model (Daly 2006 for one recovery class); goodput = τ / E[T] ÷ straggler slowdown.
// Stragglers: a synchronous step waits for the slowest of N chips whose step times have a
// coefficient of variation cv: slowdown = 1 + cv · E[max of N standard normals].

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/calib/params.h"
#include "xpusim/core/units.h"

namespace xpusim::engine {

/// Storage tiers of reliability.checkpoint.tiers: "local-nvme", "parallel-fs", "object-storage".
const std::vector<std::string>& checkpoint_tier_names();
inline const char* kDefaultCheckpointTier = "parallel-fs";

struct ComponentRate {
  std::string component;     ///< accelerator, hbm, host, nic, switch, software
  double per_chip_hour = 0;  ///< unexpected interruptions per chip-hour
};

/// The reliability parameters of one hardware family and storage tier (reliability.*).
struct ReliabilityParams {
  std::vector<ComponentRate> rates;
  core::Seconds detection, restart, spare_swap, reschedule, repair;
  double checkpoint_bytes_per_parameter = 0;
  bool asynchronous = true;
  core::ByteRate snapshot_per_chip;
  core::ByteRate write_per_node, read_per_node;
  std::optional<core::ByteRate> write_aggregate, read_aggregate;  ///< none: no shared limit
  double step_time_cv = 0;
};

/// InputError naming the key when the family or the tier is missing from the calibration.
ReliabilityParams reliability_params(const std::string& family, const std::string& tier, const calib::Params& p);

struct GoodputInputs {
  long long chips = 0;
  int chips_per_node = 1;
  double parameters = 0;              ///< model parameters (all experts)
  long long checkpoint_writers = 0;   ///< chips holding a unique shard of the state
  core::Seconds step_time;            ///< simulated step, without stragglers
  double tokens_per_step = 0;
  long long spares = 0;               ///< hot spare nodes
  std::optional<core::Seconds> interval;  ///< checkpoint interval given by the user
};

/// How a failure is recovered from.
struct RecoveryClass {
  std::string name;         ///< "software restart", "hardware, hot spare", "hardware, reschedule"
  double probability = 0;   ///< share of failures
  core::Seconds time;       ///< time from the failure until training resumes
};

struct Goodput {
  std::vector<ComponentRate> failures_per_day;  ///< per component, whole job
  double total_failures_per_day = 0;
  core::Seconds mtbf;                           ///< of the job; +inf when nothing fails
  core::Bytes checkpoint_size;
  core::Seconds checkpoint_write, checkpoint_read, checkpoint_blocking;
  core::Seconds young_daly_interval, checkpoint_interval;
  double spare_available = 0;                   ///< probability a hardware failure finds a spare
  std::vector<RecoveryClass> recovery;
  core::Seconds mean_recovery;
  double straggler_slowdown = 1;                ///< ≥ 1
  double failure_goodput = 1;                   ///< τ / E[segment time]
  double goodput_fraction = 1;                  ///< failure_goodput / straggler_slowdown
  double effective_tokens_per_s = 0;
};

Goodput goodput(const GoodputInputs& in, const ReliabilityParams& r);

// The closed-form pieces, exposed for tests.
core::Seconds young_daly_interval(core::Seconds blocking, core::Seconds mtbf);
/// E[max of n independent standard normals] by quadrature (0 for n = 1; 1/√π for n = 2).
double expected_max_of_normals(long long n);
/// P(X ≤ k) for X ~ Poisson(mean); 0 for k < 0.
double poisson_cdf(long long k, double mean);
/// Expected wall time of a segment of length `length` (work + checkpoint) at failure rate
/// `rate` (per second) with the recovery classes; `length` when rate is 0.
core::Seconds expected_segment_time(core::Seconds length, double rate, const std::vector<RecoveryClass>& recovery);

/// The distribution of time to train over `runs` seeded Monte Carlo runs of `work` compute
/// seconds (stragglers included) in segments of the goodput's interval and checkpoint.
struct TimeDistribution {
  int runs = 0;
  std::uint64_t seed = 0;
  core::Seconds mean, p10, p50, p90;
  double mean_failures = 0;
};
TimeDistribution monte_carlo_time_to_train(const Goodput& g, core::Seconds work, int runs, std::uint64_t seed);

}  // namespace xpusim::engine
