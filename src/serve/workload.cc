// Request generation: deterministic arrivals and lengths from a seed (own transforms of
// mt19937_64 bits, so the sequence is the same with every standard library).

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "xpusim/core/diagnostics.h"
#include "xpusim/serve/simulator.h"

namespace xpusim::serve {

namespace {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : g_(seed) {}
  double uniform() {  // (0, 1)
    return (static_cast<double>(g_() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  double exponential(double mean) { return -std::log(uniform()) * mean; }
  double normal() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// Lognormal with the given mean and log-space sigma.
  double lognormal(double mean, double sigma) {
    return std::exp(std::log(mean) - 0.5 * sigma * sigma + sigma * normal());
  }

 private:
  std::mt19937_64 g_;
};

// OpenOrca-like lengths (MLPerf Llama-2-70B): a log-normal spread with a cap of 1024 tokens.
constexpr double kInSigma = 0.9, kOutSigma = 0.7;
constexpr long long kOrcaCap = 1024;

}  // namespace

SimTime to_sim_time(core::Seconds s) { return static_cast<SimTime>(std::llround(s.base() * 1e12)); }
core::Seconds from_sim_time(SimTime t) { return core::seconds(static_cast<double>(t) * 1e-12); }

std::string arrival_name(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::Offline: return "offline";
    case ArrivalKind::Poisson: return "poisson";
    case ArrivalKind::ClosedLoop: return "closed-loop";
    case ArrivalKind::Trace: return "trace";
  }
  return "?";
}

std::vector<Request> generate_requests(const LoadSpec& load) {
  if (load.arrival == ArrivalKind::Trace) return load.trace;
  std::vector<Request> out;
  const size_t n = static_cast<size_t>(std::max<long long>(0, load.requests));
  out.reserve(n);
  Rng rng(load.seed);
  // OpenOrca-like: log-normal draws, scaled so that the mean after the 1024 cap is the target.
  std::vector<double> raw_in, raw_out;
  double s_in = 1, s_out = 1;
  if (load.lengths == LengthDist::OpenOrcaLike) {
    Rng lr(load.seed ^ 0x9e3779b97f4a7c15ULL);
    for (size_t i = 0; i < n; ++i) {
      raw_in.push_back(lr.lognormal(static_cast<double>(load.in_len), kInSigma));
      raw_out.push_back(lr.lognormal(static_cast<double>(load.out_len), kOutSigma));
    }
    auto fit = [&](const std::vector<double>& v, double target) {
      double sc = 1;
      for (int it = 0; it < 30 && !v.empty(); ++it) {
        double m = 0;
        for (double x : v) m += std::clamp(std::round(x * sc), 1.0, static_cast<double>(kOrcaCap));
        m /= static_cast<double>(v.size());
        sc *= target / m;
      }
      return sc;
    };
    s_in = fit(raw_in, static_cast<double>(load.in_len));
    s_out = fit(raw_out, static_cast<double>(load.out_len));
  }
  double t = 0;
  for (size_t i = 0; i < n; ++i) {
    Request r;
    if (load.lengths == LengthDist::OpenOrcaLike) {
      r.in_len = std::clamp<long long>(std::llround(raw_in[i] * s_in), 1, kOrcaCap);
      r.out_len = std::clamp<long long>(std::llround(raw_out[i] * s_out), 1, kOrcaCap);
    } else {
      r.in_len = std::max<long long>(1, load.in_len);
      r.out_len = std::max<long long>(1, load.out_len);
    }
    r.max_out = std::max(r.out_len, load.max_out_len);
    if (load.arrival == ArrivalKind::Poisson) {
      t += rng.exponential(1.0 / load.rate_per_s);
      r.arrival = to_sim_time(core::seconds(t));
    }
    out.push_back(r);
  }
  return out;
}

std::vector<Request> read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) core::fail("trace", "cannot open trace file", path);
  core::Diagnostics d;
  std::vector<Request> out;
  std::string line;
  int n = 0;
  bool header = false;
  double last = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = true;
      if (line.rfind("arrival_s", 0) == 0) continue;
    }
    std::stringstream ss(line);
    std::string a, b, c;
    std::getline(ss, a, ',');
    std::getline(ss, b, ',');
    std::getline(ss, c, ',');
    try {
      size_t pa = 0, pb = 0, pc = 0;
      const double t = std::stod(a, &pa);
      const long long il = std::stoll(b, &pb), ol = std::stoll(c, &pc);
      if (t < 0 || il < 1 || ol < 1 || t < last) throw std::invalid_argument("range");
      last = t;
      out.push_back(Request{to_sim_time(core::seconds(t)), il, ol});
    } catch (const std::exception&) {
      core::Diagnostic diag;
      diag.file = path;
      diag.line = n;
      diag.path = "trace";
      diag.message = "bad trace line";
      diag.value = line;
      diag.expected = "arrival_s,in_len,out_len with arrival_s >= 0 non-decreasing, lengths >= 1";
      d.add(diag);
    }
  }
  if (out.empty() && d.empty()) d.error("trace", "trace file has no requests", path);
  d.throw_if_any();
  return out;
}

}  // namespace xpusim::serve
