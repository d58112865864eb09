// Request generation: deterministic arrivals and lengths from a seed (rng.h).

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/limits.h"
#include "xpusim/serve/simulator.h"
#include "rng.h"

namespace xpusim::serve {

namespace {

using detail::Rng;

/// Clips a drawn (prompt, output) pair to the model's context: the prompt leaves room for one
/// output token, the output fills at most the rest. Returns whether anything was cut.
bool clip_to_context(long long max_context, long long& in_len, long long& out_len) {
  if (max_context < 2 || in_len + out_len <= max_context) return false;
  in_len = std::min(in_len, max_context - 1);
  out_len = std::min(out_len, max_context - in_len);
  return true;
}

/// A drawn length: rounded, at least 1 token, at most `limit` when the load states one.
long long bounded_length(double x, long long limit) {
  const long long n = std::max<long long>(1, std::llround(x));
  return limit > 0 ? std::min(n, limit) : n;
}

/// The scale that makes the mean of the bounded draws `target`: a few fixed-point steps,
/// since rounding, the floor of 1 and a data set's limit move the mean.
double fit_mean(const std::vector<double>& draws, double target, long long limit) {
  constexpr int kSteps = 30;
  double scale = 1;
  for (int step = 0; step < kSteps && !draws.empty(); ++step) {
    double mean = 0;
    for (double x : draws) mean += static_cast<double>(bounded_length(x * scale, limit));
    mean /= static_cast<double>(draws.size());
    scale *= target / mean;
  }
  return scale;
}

/// The scales that make the means of the OpenOrca-like length draws the requested ones, fitted
/// on the first RequestStream::kFitDraws draws (all of them in a run of up to that many requests).
std::pair<double, double> fit_length_scales(const LoadSpec& load, size_t n) {
  const size_t m = std::min<size_t>(n, RequestStream::kFitDraws);
  Rng rng(load.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<double> in(m), outs(m);
  for (size_t i = 0; i < m; ++i) {  // interleaved, as the draws always were
    in[i] = rng.lognormal(static_cast<double>(load.in_len), load.spread.input_sigma);
    outs[i] = rng.lognormal(static_cast<double>(load.out_len), load.spread.output_sigma);
  }
  return {fit_mean(in, static_cast<double>(load.in_len), load.max_drawn_in_len),
          fit_mean(outs, static_cast<double>(load.out_len), load.max_drawn_out_len)};
}

}  // namespace

std::string arrival_name(ArrivalKind k) {
  switch (k) {
    case ArrivalKind::Offline: return "offline";
    case ArrivalKind::Poisson: return "poisson";
    case ArrivalKind::ClosedLoop: return "closed-loop";
    case ArrivalKind::Trace: return "trace";
  }
  return "?";
}

struct RequestStream::State {
  Rng lengths, arrivals;
  Rng stops;  ///< early output stops (LoadSpec::output_stop_hazard): a stream of its own
  double t = 0;
};

RequestStream::RequestStream(const LoadSpec& load)
    : load_(load),
      total_(load.arrival == ArrivalKind::Trace ? static_cast<long long>(load.trace.size())
                                                : std::max<long long>(0, load.requests)),
      state_(std::make_unique<State>(State{Rng(load.seed ^ 0x9e3779b97f4a7c15ULL), Rng(load.seed),
                                           Rng(load.seed ^ 0x5851f42d4c957f2dULL)})) {
  if (load.lengths == LengthDist::OpenOrcaLike && load.arrival != ArrivalKind::Trace)
    scales_ = fit_length_scales(load, static_cast<size_t>(total_));
}

RequestStream::~RequestStream() = default;

Request RequestStream::next() {
  if (load_.arrival == ArrivalKind::Trace) return load_.trace[static_cast<size_t>(issued_++)];
  ++issued_;
  Request r;
  r.in_len = std::max<long long>(1, load_.in_len);
  r.out_len = std::max<long long>(1, load_.out_len);
  if (load_.lengths == LengthDist::OpenOrcaLike) {
    const double in = state_->lengths.lognormal(static_cast<double>(load_.in_len), load_.spread.input_sigma);
    const double out = state_->lengths.lognormal(static_cast<double>(load_.out_len), load_.spread.output_sigma);
    r.in_len = bounded_length(in * scales_.first, load_.max_drawn_in_len);
    r.out_len = bounded_length(out * scales_.second, load_.max_drawn_out_len);
    // Drawn lengths stay within the model's context (fixed lengths are the user's own).
    r.clipped = clip_to_context(load_.max_context, r.in_len, r.out_len);
  }
  r.max_out = std::max(r.out_len, load_.max_out_len);
  if (load_.output_stop_hazard > 0 && load_.lengths == LengthDist::Fixed) {
    // Ends early at EOS with probability h per token; the reservation (max_out) stays the cap.
    const double stop = state_->stops.exponential(1.0 / load_.output_stop_hazard);
    r.out_len = std::clamp<long long>(1 + static_cast<long long>(std::min(stop, static_cast<double>(r.out_len))), 1,
                                      r.out_len);
  }
  if (load_.arrival == ArrivalKind::Poisson) {
    state_->t += state_->arrivals.exponential(1.0 / load_.rate_per_s);
    r.arrival = to_sim_time(core::seconds(state_->t));
  }
  return r;
}

std::vector<double> client_start_fractions(const LoadSpec& load, long long clients) {
  Rng rng(~load.seed);  // a stream of its own (lengths and arrivals draw from others)
  std::vector<double> out(static_cast<size_t>(std::max<long long>(0, clients)));
  const double c = static_cast<double>(clients);
  for (size_t i = 1; i < out.size(); ++i) out[i] = (static_cast<double>(i) + rng.uniform()) / c;
  return out;
}

std::vector<Request> generate_requests(const LoadSpec& load) {
  RequestStream stream(load);
  std::vector<Request> out;
  out.reserve(static_cast<size_t>(stream.total()));
  while (stream.more()) out.push_back(stream.next());
  return out;
}

}  // namespace xpusim::serve
