#include "xpusim/engine/goodput.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "xpusim/core/check.h"

namespace xpusim::engine {

namespace {

const std::vector<std::string> kComponents = {"accelerator", "hbm", "host", "nic", "switch", "software"};

// Quadrature of E[max of n standard normals]: the integrand vanishes outside ±kBound.
constexpr double kBound = 12.0;
constexpr int kIntervals = 6000;  // Simpson intervals (even)

double normal_pdf(double x) { return std::exp(-x * x / 2.0) / std::sqrt(2.0 * M_PI); }
double log_normal_cdf(double x) { return std::log1p(-std::erfc(x / std::sqrt(2.0)) / 2.0); }

std::optional<core::ByteRate> optional_rate(const calib::Params& p, const std::string& key) {
  if (!p.has(key)) return std::nullopt;
  return p.byte_rate(key);
}

double ceil_div(double a, double b) { return std::ceil(a / b); }

core::ByteRate tier_rate(core::ByteRate per_node, double nodes, const std::optional<core::ByteRate>& aggregate) {
  const core::ByteRate all = per_node * nodes;
  return aggregate && *aggregate < all ? *aggregate : all;
}

double hardware_rate(const std::vector<ComponentRate>& rates) {
  double sum = 0;
  for (const auto& c : rates)
    if (c.component != "software") sum += c.per_chip_hour;
  return sum;
}

double total_rate(const std::vector<ComponentRate>& rates) {
  double sum = 0;
  for (const auto& c : rates) sum += c.per_chip_hour;
  return sum;
}

// Checkpoint size, write, read and blocking time from the tier and the shard layout.
void size_checkpoint(const GoodputInputs& in, const ReliabilityParams& r, Goodput& g) {
  g.checkpoint_size = core::Bytes::from_base(in.parameters * r.checkpoint_bytes_per_parameter);
  const double writers = static_cast<double>(std::max<long long>(1, in.checkpoint_writers));
  const double chips = static_cast<double>(in.chips);
  const double write_nodes = ceil_div(writers, in.chips_per_node);
  const double all_nodes = ceil_div(chips, in.chips_per_node);
  g.checkpoint_write = g.checkpoint_size / tier_rate(r.write_per_node, write_nodes, r.write_aggregate);
  // Every chip reads its shard: replicas of a shard read the same bytes again.
  g.checkpoint_read = g.checkpoint_size * (chips / writers) / tier_rate(r.read_per_node, all_nodes, r.read_aggregate);
  g.checkpoint_blocking = r.asynchronous ? g.checkpoint_size / writers / r.snapshot_per_chip : g.checkpoint_write;
}

// Young–Daly, at least the asynchronous write (one checkpoint in flight) and one step, in whole steps.
void choose_interval(const GoodputInputs& in, const ReliabilityParams& r, Goodput& g) {
  g.young_daly_interval = young_daly_interval(g.checkpoint_blocking, g.mtbf);
  if (in.interval) {
    g.checkpoint_interval = *in.interval;
    return;
  }
  if (!std::isfinite(core::to_seconds(g.mtbf))) {  // nothing fails: no checkpoint is needed
    g.checkpoint_interval = g.mtbf;
    return;
  }
  core::Seconds tau = std::max(g.young_daly_interval, in.step_time);
  if (r.asynchronous) tau = std::max(tau, g.checkpoint_write);
  g.checkpoint_interval = in.step_time * std::ceil(tau / in.step_time);
}

void recovery_classes(const GoodputInputs& in, const ReliabilityParams& r, Goodput& g) {
  const double rate = total_rate(r.rates);
  const double hw_rate = hardware_rate(r.rates);
  const double hw_share = rate > 0 ? hw_rate / rate : 0;
  const double nodes_in_repair = hw_rate * static_cast<double>(in.chips) * (r.repair / core::Seconds::from_base(core::kSecondsPerHour));
  g.spare_available = in.spares > 0 ? poisson_cdf(in.spares - 1, nodes_in_repair) : 0;
  // An asynchronous checkpoint is durable only after its write: a failure within (write −
  // blocking) of a segment's start also loses the segment before.
  core::Seconds redo;
  if (r.asynchronous && g.checkpoint_write > g.checkpoint_blocking &&
      std::isfinite(core::to_seconds(g.checkpoint_interval))) {
    const core::Seconds length = g.checkpoint_interval + g.checkpoint_blocking;
    redo = (g.checkpoint_write - g.checkpoint_blocking) * (g.checkpoint_interval / length);
  }
  const core::Seconds base = r.detection + r.restart + g.checkpoint_read + redo;
  g.recovery = {{"software restart", 1 - hw_share, base},
                {"hardware, hot spare", hw_share * g.spare_available, base + r.spare_swap},
                {"hardware, reschedule", hw_share * (1 - g.spare_available), base + r.reschedule}};
  g.mean_recovery = core::Seconds{};
  for (const auto& c : g.recovery) g.mean_recovery += c.time * c.probability;
}

}  // namespace

const std::vector<std::string>& checkpoint_tier_names() {
  static const std::vector<std::string> names = {"local-nvme", "parallel-fs", "object-storage"};
  return names;
}

ReliabilityParams reliability_params(const std::string& family, const std::string& tier, const calib::Params& p) {
  ReliabilityParams r;
  for (const auto& c : kComponents)
    r.rates.push_back({c, p.number("reliability.failure_rates." + family + "." + c)});
  const std::string rec = "reliability.recovery.";
  r.detection = p.seconds(rec + "detection");
  r.restart = p.seconds(rec + "restart");
  r.spare_swap = p.seconds(rec + "spare_swap");
  r.reschedule = p.seconds(rec + "reschedule");
  r.repair = p.seconds(rec + "repair");
  const std::string ck = "reliability.checkpoint.";
  r.checkpoint_bytes_per_parameter = p.number(ck + "bytes_per_parameter");
  r.asynchronous = p.flag(ck + "asynchronous");
  r.snapshot_per_chip = p.byte_rate(ck + "snapshot_bandwidth_per_chip");
  const std::string t = ck + "tiers." + tier + ".";
  r.write_per_node = p.byte_rate(t + "write_per_node");
  r.read_per_node = p.byte_rate(t + "read_per_node");
  r.write_aggregate = optional_rate(p, t + "write_aggregate");
  r.read_aggregate = optional_rate(p, t + "read_aggregate");
  r.step_time_cv = p.number("reliability.stragglers.step_time_cv");
  return r;
}

core::Seconds young_daly_interval(core::Seconds blocking, core::Seconds mtbf) {
  return core::Seconds::from_base(std::sqrt(2.0 * core::to_seconds(blocking) * core::to_seconds(mtbf)));
}

double expected_max_of_normals(long long n) {
  XS_CHECK(n >= 1, "at least one chip");
  if (n == 1) return 0;
  const double h = 2.0 * kBound / kIntervals;
  const double m = static_cast<double>(n);
  double sum = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    const double x = -kBound + i * h;
    const double f = x * m * normal_pdf(x) * std::exp((m - 1) * log_normal_cdf(x));
    const double w = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);  // Simpson weights
    sum += w * f;
  }
  return sum * h / 3.0;
}

double poisson_cdf(long long k, double mean) {
  if (k < 0) return 0;
  if (mean <= 0) return 1;
  double sum = 0;
  for (long long i = 0; i <= k; ++i) {
    const double x = static_cast<double>(i);
    sum += std::exp(-mean + x * std::log(mean) - std::lgamma(x + 1));
    if (x > mean && sum >= 1) break;
  }
  return std::min(1.0, sum);
}

core::Seconds expected_segment_time(core::Seconds length, double rate, const std::vector<RecoveryClass>& recovery) {
  if (rate <= 0) return length;
  double survive = 0;  // E[e^{-λR}]: a recovery finishes before the next failure
  for (const auto& c : recovery) survive += c.probability * std::exp(-rate * core::to_seconds(c.time));
  return core::Seconds::from_base(std::expm1(rate * core::to_seconds(length)) / (rate * survive));
}

Goodput goodput(const GoodputInputs& in, const ReliabilityParams& r) {
  XS_CHECK(in.chips >= 1 && in.step_time > core::Seconds{}, "a simulated step on at least one chip");
  Goodput g;
  const double chips = static_cast<double>(in.chips);
  for (const auto& c : r.rates) g.failures_per_day.push_back({c.component, c.per_chip_hour * chips * core::kSecondsPerDay / core::kSecondsPerHour});
  const double rate = total_rate(r.rates) * chips / core::kSecondsPerHour;  // per second
  g.total_failures_per_day = rate * core::kSecondsPerDay;
  g.mtbf = core::Seconds::from_base(rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity());
  size_checkpoint(in, r, g);
  choose_interval(in, r, g);
  recovery_classes(in, r, g);
  g.straggler_slowdown = 1.0 + r.step_time_cv * expected_max_of_normals(in.chips);
  if (std::isfinite(core::to_seconds(g.checkpoint_interval))) {
    const core::Seconds length = g.checkpoint_interval + g.checkpoint_blocking;
    g.failure_goodput = g.checkpoint_interval / expected_segment_time(length, rate, g.recovery);
  }
  g.goodput_fraction = g.failure_goodput / g.straggler_slowdown;
  g.effective_tokens_per_s = in.tokens_per_step / core::to_seconds(in.step_time) * g.goodput_fraction;
  return g;
}

namespace {

// Uniform in (0, 1] from 53 random bits, so that −log(u) is finite; the engine's own
// conversion keeps runs identical across standard libraries.
double uniform(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 1.0) * 0x1.0p-53; }
double exponential(std::mt19937_64& rng, double rate) { return -std::log(uniform(rng)) / rate; }

const RecoveryClass& pick(std::mt19937_64& rng, const std::vector<RecoveryClass>& classes) {
  double u = uniform(rng);
  for (const auto& c : classes) {
    if (u <= c.probability) return c;
    u -= c.probability;
  }
  return classes.back();
}

// Wall time from a failure until training resumes: a failure during a recovery starts a new one.
double recover(std::mt19937_64& rng, double rate, const std::vector<RecoveryClass>& classes, long long& failures) {
  double t = 0;
  for (;;) {
    const double r = core::to_seconds(pick(rng, classes).time);
    const double x = exponential(rng, rate);
    if (x >= r) return t + r;
    t += x;
    ++failures;
  }
}

// Wall time of one segment of `length` seconds, repeated from its start after each failure.
double run_segment(std::mt19937_64& rng, double length, double rate, const std::vector<RecoveryClass>& classes,
                   long long& failures) {
  double t = 0;
  for (;;) {
    const double x = rate > 0 ? exponential(rng, rate) : std::numeric_limits<double>::infinity();
    if (x >= length) return t + length;
    ++failures;
    t += x + recover(rng, rate, classes, failures);
  }
}

core::Seconds percentile(const std::vector<double>& sorted, double q) {
  const size_t n = sorted.size();
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));  // nearest rank
  return core::Seconds::from_base(sorted[std::clamp<size_t>(rank, 1, n) - 1]);
}

}  // namespace

TimeDistribution monte_carlo_time_to_train(const Goodput& g, core::Seconds work, int runs, std::uint64_t seed) {
  XS_CHECK(runs >= 1 && g.checkpoint_interval > core::Seconds{}, "at least one run and a checkpoint interval");
  const double rate = 1.0 / core::to_seconds(g.mtbf);
  const double total = core::to_seconds(work);
  const double tau = std::min(core::to_seconds(g.checkpoint_interval), total);
  const double delta = core::to_seconds(g.checkpoint_blocking);
  const long long full = static_cast<long long>(std::floor(total / tau));
  const double rest = total - static_cast<double>(full) * tau;
  std::mt19937_64 rng(seed);
  std::vector<double> times;
  long long failures = 0;
  for (int run = 0; run < runs; ++run) {
    double t = 0;
    for (long long s = 0; s < full; ++s) t += run_segment(rng, tau + delta, rate, g.recovery, failures);
    if (rest > 0) t += run_segment(rng, rest + delta, rate, g.recovery, failures);
    times.push_back(t);
  }
  TimeDistribution d;
  d.runs = runs;
  d.seed = seed;
  double sum = 0;
  for (double t : times) sum += t;
  d.mean = core::Seconds::from_base(sum / runs);
  std::sort(times.begin(), times.end());
  d.p10 = percentile(times, 0.1);
  d.p50 = percentile(times, 0.5);
  d.p90 = percentile(times, 0.9);
  d.mean_failures = static_cast<double>(failures) / runs;
  return d;
}

}  // namespace xpusim::engine
