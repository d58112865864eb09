// xpusim calibrate: fitting the `fitted` parameters of data/calibration/ to measurements, and
// leave-one-source-out cross-validation (docs/calibration.md).

#include "xpusim/validation/fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

#include "xpusim/core/check.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/parallel.h"
#include "xpusim/validation/row_scenario.h"
#include "xpusim/validation/summary.h"
#include "xpusim/validation/trust.h"

namespace xpusim::validation {

namespace {

/// Indices into `which` (rows of `rows`) with the first row of each configuration ahead of the
/// rest (first_of_each_configuration), for predictions that share a ServeRunCache.
std::vector<size_t> configurations_first(const std::vector<Row>& rows, const std::vector<int>& which) {
  std::vector<std::string> keys;
  for (int i : which) keys.push_back(configuration_key(rows[static_cast<size_t>(i)]));
  return first_of_each_configuration(keys);
}

/// ln(predicted / measured) of an ok prediction.
double log_residual(const Row& row, const Prediction& p) { return std::log(p.predicted / row.value); }

bool usable(const Row& row, const Prediction& p) {
  return p.status == Status::Ok && p.predicted > 0 && row.value > 0 && std::isfinite(p.predicted);
}

/// Soft-L1 (pseudo-Huber) loss of a log residual: quadratic below `scale`, linear above.
double soft_l1(double residual, double scale) {
  const double z = residual / scale;
  return 2.0 * scale * scale * (std::sqrt(1.0 + z * z) - 1.0);
}

/// The loss a row contributes when a trial value makes it unpredictable: a factor-10 miss.
constexpr double kUnpredictableResidual = 2.302585092994046;

/// A row's residual in the fit: its log residual, or a factor-10 miss when it is unpredictable.
double fit_residual(const Row& row, const Prediction& p) {
  return usable(row, p) ? log_residual(row, p) : kUnpredictableResidual;
}

/// The fixed per-parameter quantities of the objective: the prior (log-normal around the
/// start value, width from the range) and the search interval in log space.
struct Coordinate {
  std::string key;
  double prior_center = 0, prior_sigma = 1, lower = 0, upper = 0;
};

Coordinate coordinate_of(const calib::Parameter& p, double search_factor) {
  const double v0 = p.prior.quantity.value;
  Coordinate c;
  c.key = p.key;
  c.prior_center = std::log(v0);
  double low = v0 / search_factor, high = v0 * search_factor;
  c.prior_sigma = std::log(search_factor);
  if (p.range_low && p.range_high) {
    const double lo = p.range_low->quantity.value, hi = p.range_high->quantity.value;
    c.prior_sigma = std::log(1.0 + (hi - lo) / (2.0 * v0));
    low = std::max(low, lo);
    high = std::min(high, hi);
  }
  c.lower = std::log(low);
  c.upper = std::log(high);
  return c;
}

double prior_loss(const Coordinate& c, double x) {
  const double z = (x - c.prior_center) / c.prior_sigma;
  return 0.5 * z * z;
}

/// The state of one fit: working parameters, the rows in the fit and their current residuals.
class Fitter {
 public:
  Fitter(const std::vector<Row>& rows, const std::vector<int>& use, const Context& ctx, const FitOptions& opt)
      : rows_(rows), opt_(opt), params_(*ctx.calibration), ctx_(ctx) {
    ctx_.calibration = &params_;
    ctx_.analytical_train = true;
    ctx_.serving_request_cap = opt.inner_request_cap;
    residual_.assign(rows.size(), 0.0);
    in_fit_.assign(rows.size(), 0);
    stale_.assign(rows.size(), 0);
    for (const Row& row : rows) config_.push_back(configuration_key(row));
    run_scale_.assign(rows.size(), 1.0);
    std::vector<Prediction> p;
    predict(use, p);
    scale_shortened_runs(use, p);
    for (size_t j = 0; j < use.size(); ++j) {
      const int i = use[j];
      if (!usable(rows_[i], p[j])) continue;
      in_fit_[i] = 1;
      residual_[i] = log_residual(rows_[i], p[j]);
    }
  }

  int rows_used() const { return static_cast<int>(std::count(in_fit_.begin(), in_fit_.end(), 1)); }
  long long predictions() const { return predictions_; }
  calib::Params& params() { return params_; }

  double weight(int i) const { return rows_[i].trust == "C" ? opt_.trust_c_weight : 1.0; }

  /// The rows' loss at the current values; residual_ must be up to date (refresh_all()).
  double data_loss() const {
    double sum = 0;
    for (size_t i = 0; i < rows_.size(); ++i)
      if (in_fit_[i]) sum += weight(static_cast<int>(i)) * soft_l1(residual_[i], opt_.soft_l1_scale);
    return sum;
  }

  /// The rows of `sensitive` that are in the fit.
  std::vector<int> fitted_rows(const std::vector<int>& sensitive) const {
    std::vector<int> out;
    for (int i : sensitive)
      if (in_fit_[i]) out.push_back(i);
    return out;
  }

  /// Sets the key to exp(x) and returns the loss of `rows` plus the prior; their residuals in `out`.
  double evaluate(const Coordinate& c, double x, const std::vector<int>& rows, std::vector<double>& out) {
    params_.set(with_value(params_.get(c.key), std::exp(x)));
    double loss = opt_.prior_weight * prior_loss(c, x);
    std::vector<Prediction> p;
    predict(rows, p);
    out.resize(rows.size());
    for (size_t j = 0; j < rows.size(); ++j) {
      out[j] = fit_residual(rows_[rows[j]], p[j]);
      loss += weight(rows[j]) * soft_l1(out[j], opt_.soft_l1_scale);
    }
    return loss;
  }

  /// The loss evaluate() would return at the current value x0, from the stored residuals.
  double current_loss(const Coordinate& c, double x0, const std::vector<int>& rows, std::vector<double>& out) const {
    double loss = opt_.prior_weight * prior_loss(c, x0);
    out.clear();
    for (int i : rows) {
      out.push_back(residual_[i]);
      loss += weight(i) * soft_l1(residual_[i], opt_.soft_l1_scale);
    }
    return loss;
  }

  /// One line search (search()) in log space over `rows`, or over an evenly spaced subset of
  /// opt_.line_rows of them when there are more; keeps the current value unless a trial beats it
  /// on the rows searched. When the value moved, the unsearched rows' residuals are out of date:
  /// they are predicted again when a later search or the final loss needs them (refresh()), not
  /// here, so rows no later search reads cost nothing.
  void line_search(const Coordinate& c, const std::vector<int>& rows) {
    const std::vector<int> searched = evenly_spaced(rows, opt_.line_rows);
    refresh(searched);
    const double start = params_.get(c.key).value.quantity.value;
    search(c, searched);
    if (searched.size() == rows.size() || params_.get(c.key).value.quantity.value == start) return;
    for (int i : rows) stale_[i] = 1;
    for (int i : searched) stale_[i] = 0;
  }

  /// Predicts again the rows of `rows` whose residuals a key's move left out of date.
  void refresh(const std::vector<int>& rows) {
    std::vector<int> out_of_date;
    for (int i : rows)
      if (stale_[i]) out_of_date.push_back(i);
    if (out_of_date.empty()) return;
    std::vector<Prediction> p;
    predict(out_of_date, p);
    for (size_t j = 0; j < out_of_date.size(); ++j) {
      const int i = out_of_date[j];
      residual_[i] = fit_residual(rows_[i], p[j]);
      stale_[i] = 0;
    }
  }

  /// Brings every row's residual up to date (for data_loss()).
  void refresh_all() {
    std::vector<int> all;
    for (size_t i = 0; i < rows_.size(); ++i)
      if (in_fit_[i]) all.push_back(static_cast<int>(i));
    refresh(all);
  }

  /// The ratio full / shortened moves with the fitted values (the ramp-up and drain weigh on
  /// other parts of the step than the steady state): measured again at the current values (each
  /// sweep's start), with the shortened rows' residuals set from their full runs.
  void rescale_shortened_runs() {
    if (shortened_.empty()) return;
    for (int i : shortened_) run_scale_[static_cast<size_t>(i)] = 1.0;
    std::vector<Prediction> cut;
    predict(shortened_, cut);
    const std::vector<double> full = measure_run_scales(cut);
    for (size_t k = 0; k < shortened_.size(); ++k) {
      const int i = shortened_[k];
      if (!in_fit_[i] || full[k] <= 0) continue;
      residual_[i] = std::log(full[k] / rows_[i].value);
      stale_[i] = 0;
    }
  }

 private:
  /// The predictions of `rows` at the current parameters, in parallel (`ctx` as the fit's, by
  /// default), each shortened run scaled by run_scale_. The rows of one configuration (a TTFT and
  /// a TPOT row) share one serve run, its first row started ahead of the others.
  void predict(const std::vector<int>& rows, std::vector<Prediction>& out) { predict(rows, ctx_, out); }
  void predict(const std::vector<int>& rows, Context ctx, std::vector<Prediction>& out) {
    predictions_ += static_cast<long long>(rows.size());
    ServeRunCache runs;
    ctx.serve_runs = &runs;
    std::vector<std::string> keys;
    for (int i : rows) keys.push_back(config_[static_cast<size_t>(i)]);
    const std::vector<size_t> order = first_of_each_configuration(keys);
    out.assign(rows.size(), Prediction{});
    core::parallel_for(order.size(), opt_.threads,
                       [&](size_t k) { out[order[k]] = predict_row(rows_[rows[order[k]]], ctx).prediction; });
    for (size_t j = 0; j < rows.size(); ++j) out[j].predicted *= run_scale_[static_cast<size_t>(rows[j])];
  }

  /// A run the request cap shortened measures a different quantity: an offline run's throughput
  /// over the whole run weighs its ramp-up and drain by the run's length (two 72-chip MLPerf
  /// offline rows read 55-65 % low at 24,576 requests). Each such row of `use` is simulated in
  /// full at the starting values, and its shortened runs are scaled by full / shortened until
  /// rescale_shortened_runs() measures the ratio again; `p` (the shortened predictions of `use`)
  /// is scaled in place.
  void scale_shortened_runs(const std::vector<int>& use, std::vector<Prediction>& p) {
    std::vector<size_t> at;  // where each shortened row sits in `use`
    std::vector<Prediction> cut;
    for (size_t j = 0; j < use.size(); ++j)
      if (p[j].run_shortened && usable(rows_[use[j]], p[j])) {
        shortened_.push_back(use[j]);
        at.push_back(j);
        cut.push_back(p[j]);
      }
    const std::vector<double> full = measure_run_scales(cut);
    for (size_t k = 0; k < shortened_.size(); ++k)
      if (full[k] > 0) p[at[k]].predicted = full[k];
  }

  /// Runs shortened_ in full at the current values, sets their run_scale_ from `cut` (their
  /// unscaled shortened runs at the same values) and returns the full runs' predictions (0 where
  /// either run is unusable; its scale stays 1).
  std::vector<double> measure_run_scales(const std::vector<Prediction>& cut) {
    std::vector<double> out(shortened_.size(), 0.0);
    if (shortened_.empty()) return out;
    Context whole = ctx_;
    whole.serving_request_cap = 0;
    std::vector<Prediction> full;
    predict(shortened_, whole, full);
    for (size_t k = 0; k < shortened_.size(); ++k) {
      const Row& row = rows_[shortened_[k]];
      if (!usable(row, full[k]) || !usable(row, cut[k])) continue;
      run_scale_[static_cast<size_t>(shortened_[k])] = full[k].predicted / cut[k].predicted;
      out[k] = full[k].predicted;
    }
    return out;
  }

  /// About `n` rows of `rows`, as whole configurations (rows that share one run) spread evenly
  /// over the configurations in order of first appearance: all of them when there are no more
  /// than `n` rows.
  std::vector<int> evenly_spaced(const std::vector<int>& rows, int n) const {
    if (n <= 0 || rows.size() <= static_cast<size_t>(n)) return rows;
    std::vector<std::vector<int>> configs;
    std::map<std::string, size_t> index;
    for (int i : rows) {
      const auto [it, fresh] = index.emplace(config_[static_cast<size_t>(i)], configs.size());
      if (fresh) configs.emplace_back();
      configs[it->second].push_back(i);
    }
    const size_t want = std::max<size_t>(1, static_cast<size_t>(n) * configs.size() / rows.size());
    std::vector<int> out;
    for (size_t j = 0; j < want; ++j)
      for (int i : configs[j * configs.size() / want]) out.push_back(i);
    std::sort(out.begin(), out.end());
    return out;
  }

  /// A trial value of the key and the loss of the rows searched there.
  struct Point {
    double x, loss;
  };

  /// A line search of the key over `rows` (whose stored residuals hold at the current value x0),
  /// in log space within [c.lower, c.upper]: first a bracket around x0 (steps of opt_.line_step,
  /// growing by the golden ratio while the loss falls), then golden-section refinement of the
  /// bracket down to opt_.line_tolerance; opt_.line_evaluations trials at most. Keeps the best
  /// value tried, or x0 when none beats it.
  void search(const Coordinate& c, const std::vector<int>& rows) {
    std::vector<double> res;
    const double x0 = std::log(params_.get(c.key).value.quantity.value);
    Point best{x0, current_loss(c, x0, rows, res)};
    std::vector<double> best_residuals = res;
    int left = opt_.line_evaluations;
    auto consider = [&](double x) {
      --left;
      const Point p{x, evaluate(c, x, rows, res)};
      if (p.loss < best.loss) best = p, best_residuals = res;
      return p;
    };
    double lo = c.lower, hi = c.upper;
    const Point mid = bracket(c, best, lo, hi, left, consider);
    refine(mid, lo, hi, left, consider);
    params_.set(with_value(params_.get(c.key), std::exp(best.x)));
    for (size_t j = 0; j < rows.size(); ++j) residual_[rows[j]] = best_residuals[j];
  }

  /// Narrows [lo, hi] to three points around the lowest loss found walking from `start`: up by
  /// opt_.line_step, else down, the step growing by the golden ratio while the loss falls (or a
  /// bound is reached). Returns the middle point (the lowest).
  template <class Consider>
  Point bracket(const Coordinate& c, Point start, double& lo, double& hi, const int& left, Consider& consider) const {
    constexpr double kGolden = 1.6180339887498949;
    auto at = [&](double x) { return std::clamp(x, c.lower, c.upper); };
    double step = opt_.line_step;
    int dir = 1;
    Point next{start.x, start.loss};
    if (at(start.x + step) != start.x && left > 0) next = consider(at(start.x + step));
    if (!(next.loss < start.loss)) {
      if (next.x != start.x) hi = next.x;
      dir = -1;
      next = start;
      if (at(start.x - step) != start.x && left > 0) next = consider(at(start.x - step));
      if (!(next.loss < start.loss)) {
        if (next.x != start.x) lo = next.x;
        return start;
      }
    }
    Point far = start, mid = next;
    while (left > 0) {
      step *= kGolden;
      const double x = at(mid.x + dir * step);
      if (x == mid.x) break;  // at a bound: the bracket runs to it
      const Point p = consider(x);
      if (!(p.loss < mid.loss)) {
        (dir > 0 ? hi : lo) = p.x;
        break;
      }
      far = mid, mid = p;
    }
    (dir > 0 ? lo : hi) = far.x;
    return mid;
  }

  /// Golden-section refinement of the bracket [lo, hi] around `mid` (the lowest loss in it) until
  /// it is narrower than opt_.line_tolerance or the trials run out.
  template <class Consider>
  void refine(Point mid, double lo, double hi, const int& left, Consider& consider) const {
    constexpr double kGoldenSection = 0.3819660112501051;  // (3 - sqrt 5) / 2
    while (left > 0 && hi - lo > opt_.line_tolerance) {
      const bool above = hi - mid.x > mid.x - lo;  // probe the wider side
      const double x = above ? mid.x + kGoldenSection * (hi - mid.x) : mid.x - kGoldenSection * (mid.x - lo);
      const Point p = consider(x);
      if (p.loss < mid.loss) {
        (above ? lo : hi) = mid.x;
        mid = p;
      } else {
        (above ? hi : lo) = p.x;
      }
    }
  }

  const std::vector<Row>& rows_;
  const FitOptions& opt_;
  calib::Params params_;
  Context ctx_;
  std::vector<double> residual_;
  std::vector<char> in_fit_;  // not vector<bool>: written from several threads
  std::vector<char> stale_;   ///< 1: the residual predates a key's move (refresh())
  std::vector<std::string> config_;  ///< each row's configuration_key
  std::vector<double> run_scale_;    ///< per row: full run / shortened run (scale_shortened_runs)
  std::vector<int> shortened_;       ///< the rows in the fit whose runs the request cap shortens
  long long predictions_ = 0;        ///< rows predicted so far (FitResult::predictions)
};

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> out;
  std::stringstream ss(key);
  for (std::string part; std::getline(ss, part, '.');) out.push_back(part);
  return out;
}

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' ? std::string("\\\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

namespace {

/// True when `key` matches one of the comma-separated globs of `globs`.
bool matches_any(const std::string& globs, const std::string& key) {
  std::stringstream ss(globs);
  for (std::string glob; std::getline(ss, glob, ',');)
    if (!glob.empty() && core::glob_match(glob, key)) return true;
  return false;
}

}  // namespace

std::vector<std::string> fitted_keys(const calib::Params& params, const std::string& glob) {
  std::vector<std::string> out;
  for (const auto& [key, p] : params.all()) {
    if (p.kind != calib::Kind::Fitted || p.value.is_flag || !(glob.empty() || matches_any(glob, key))) continue;
    // The search runs in log space around the documented value: it needs a positive one.
    if (!(p.prior.quantity.value > 0) || !(p.value.quantity.value > 0))
      core::fail(key, "a fitted parameter is searched in log space around its documented value, which must be positive",
                 p.prior.text + (p.value.text != p.prior.text ? " (value " + p.value.text + ")" : ""),
                 "a positive documented value in the shipped calibration (an assumed key set to 0 cannot be fitted; "
                 "give it a positive value and `kind: fitted` in data/calibration)");
    out.push_back(key);
  }
  return out;
}

calib::Parameter with_value(const calib::Parameter& p, double base_value) {
  const std::string& text = p.value.text;
  char* end = nullptr;
  const double written = std::strtod(text.c_str(), &end);
  XS_CHECK(end != text.c_str() && written != 0.0, "with_value: the text has no nonzero leading number");
  const double scale = p.value.quantity.value / written;  // base units per written unit
  char number[64];
  std::snprintf(number, sizeof number, "%.6g", base_value / scale);
  calib::Parameter out = p;
  out.value.text = std::string(number) + std::string(end);
  out.value.quantity.value = std::strtod(number, nullptr) * scale;
  return out;
}

Sensitivity find_sensitive_rows(const std::vector<Row>& rows, const Context& ctx, const std::vector<std::string>& keys,
                                int threads) {
  calib::Params params = *ctx.calibration;
  Context local = ctx;
  local.calibration = &params;
  local.analytical_train = true;
  local.serving_request_cap = FitOptions{}.inner_request_cap;
  std::vector<Prediction> base(rows.size());
  std::vector<std::set<std::string>> read(rows.size());
  core::parallel_for(rows.size(), threads, [&](size_t i) {
    const calib::ReadLog log;
    base[i] = predict_row(rows[i], local).prediction;
    read[i] = log.keys();
  });
  Sensitivity out;
  for (const auto& key : keys) {
    // Only a row that reads the key can move with it.
    std::vector<int> candidates;
    for (size_t i = 0; i < rows.size(); ++i)
      if (usable(rows[i], base[i]) && read[i].count(key)) candidates.push_back(static_cast<int>(i));
    const calib::Parameter original = params.get(key);
    const double v = original.value.quantity.value;
    const bool room_above = !original.range_high || v * 1.1 <= original.range_high->quantity.value;
    params.set(with_value(original, room_above ? v * 1.1 : v / 1.1));
    // A configuration's rows (TTFT and TPOT) share one serve run. Not in the first pass: a row
    // handed a run another thread made would log no key that run read.
    ServeRunCache runs;
    Context perturbed = local;
    perturbed.serve_runs = &runs;
    const std::vector<size_t> order = configurations_first(rows, candidates);
    std::vector<char> moved(candidates.size(), 0);
    core::parallel_for(order.size(), threads, [&](size_t k) {
      const size_t j = order[k];
      const int i = candidates[j];
      const Prediction p = predict_row(rows[i], perturbed).prediction;
      moved[j] = !usable(rows[i], p) || std::fabs(std::log(p.predicted / base[i].predicted)) > 1e-9;
    });
    auto& list = out[key];
    for (size_t j = 0; j < candidates.size(); ++j)
      if (moved[j]) list.push_back(candidates[j]);
    params.set(original);
  }
  return out;
}

std::vector<std::string> keys_with_rows(const Sensitivity& sensitivity) {
  std::vector<std::string> keys;
  for (const auto& [key, rows] : sensitivity)
    if (!rows.empty()) keys.push_back(key);
  return keys;
}

FitResult fit(const std::vector<Row>& rows, const std::vector<int>& use, const Context& ctx,
              const Sensitivity& sensitivity, const FitOptions& opt) {
  std::vector<int> all_rows = use;
  if (all_rows.empty())
    for (size_t i = 0; i < rows.size(); ++i) all_rows.push_back(static_cast<int>(i));
  Fitter fitter(rows, all_rows, ctx, opt);
  FitResult result;
  result.rows_used = fitter.rows_used();
  result.loss_start = fitter.data_loss();
  std::vector<Coordinate> coordinates;
  for (const auto& key : opt.keys) {
    const auto& p = ctx.calibration->get(key);
    XS_CHECK(p.kind == calib::Kind::Fitted, "fit: a key to fit is not a fitted parameter");
    coordinates.push_back(coordinate_of(p, opt.search_factor));
  }
  std::map<std::string, int> sensitive_count;
  // The sweeps stop once one moves no key by line_tolerance or more (converged).
  for (int sweep = 0; sweep < opt.sweeps; ++sweep) {
    if (sweep > 0) fitter.rescale_shortened_runs();
    double largest_move = 0;
    for (const auto& c : coordinates) {
      const auto it = sensitivity.find(c.key);
      const std::vector<int> rows_k = it == sensitivity.end() ? std::vector<int>{} : fitter.fitted_rows(it->second);
      sensitive_count[c.key] = static_cast<int>(rows_k.size());
      const double before = fitter.params().get(c.key).value.quantity.value;
      if (!rows_k.empty()) fitter.line_search(c, rows_k);  // else the prior keeps the start value
      const double after = fitter.params().get(c.key).value.quantity.value;
      largest_move = std::max(largest_move, std::fabs(std::log(after / before)));
      if (opt.progress) opt.progress(c.key, static_cast<int>(rows_k.size()));
    }
    if (largest_move < opt.line_tolerance) break;
  }
  result.loss_end = std::numeric_limits<double>::quiet_NaN();
  if (opt.final_loss) {
    fitter.refresh_all();
    result.loss_end = fitter.data_loss();
  }
  result.params = fitter.params();
  result.predictions = fitter.predictions();
  for (const auto& c : coordinates) {
    const auto& p = result.params.get(c.key);
    FittedValue v{c.key, std::exp(c.prior_center), p.value.quantity.value, p.value.text, sensitive_count[c.key]};
    v.active = ctx.calibration->get(c.key).value.quantity.value;
    result.values.push_back(std::move(v));
  }
  return result;
}

namespace {

/// The keys of `keys` that move at least one row of `held_out`, and of whose rows the held-out
/// ones are at least `min_share`.
std::vector<std::string> keys_moving(const std::vector<std::string>& keys, const Sensitivity& sensitivity,
                                     const std::vector<int>& held_out, double min_share) {
  std::vector<std::string> out;
  for (const auto& key : keys) {
    const auto it = sensitivity.find(key);
    if (it == sensitivity.end()) continue;
    const auto& moved = it->second;
    const auto held = std::count_if(held_out.begin(), held_out.end(),
                                    [&](int i) { return std::binary_search(moved.begin(), moved.end(), i); });
    if (held > 0 && static_cast<double>(held) >= min_share * static_cast<double>(moved.size())) out.push_back(key);
  }
  return out;
}

/// "<kind>.frameworks.<stack>.<leaf>" → {"<kind>.frameworks.", "<leaf>", "<stack>"}; empty for
/// any other key (hardware-family keys have no sibling stacks).
struct StackKey {
  std::string prefix, leaf, stack;
};
std::optional<StackKey> stack_key(const std::string& key) {
  const auto parts = split_key(key);
  if (parts.size() != 4 || parts[1] != "frameworks") return std::nullopt;
  return StackKey{parts[0] + ".frameworks.", parts[3], parts[2]};
}

/// True when `other` is the same parameter (`<kind>.frameworks.*.<leaf>`) as `key` in another stack.
bool is_sibling(const StackKey& key, const std::string& other) {
  const auto ok = stack_key(other);
  return ok && ok->prefix == key.prefix && ok->leaf == key.leaf && ok->stack != key.stack;
}

std::set<std::string> families_of(const std::vector<int>& rows, const std::vector<Row>& all, const Context& ctx) {
  std::set<std::string> out;
  for (int i : rows) out.insert(family_of_row(all[static_cast<size_t>(i)], *ctx.catalog));
  return out;
}

/// The rows of `train` (a sorted set) that `key` moves.
std::vector<int> rows_moved_in(const Sensitivity& sensitivity, const std::string& key, const std::set<int>& train) {
  std::vector<int> out;
  const auto it = sensitivity.find(key);
  if (it != sensitivity.end())
    for (int i : it->second)
      if (train.count(i)) out.push_back(i);
  return out;
}

/// The rows of `train` that at least one of `keys` moves, in order.
std::vector<int> rows_moved_by_any(const Sensitivity& sensitivity, const std::vector<std::string>& keys,
                                   const std::vector<int>& train) {
  const std::set<int> in_train(train.begin(), train.end());
  std::set<int> moved;
  for (const auto& key : keys)
    for (int i : rows_moved_in(sensitivity, key, in_train)) moved.insert(i);
  return {moved.begin(), moved.end()};
}

/// The log-space median (the fit works in log space) of `key`'s parameter in the other stacks
/// whose training rows share a hardware family with `families`; empty when none does.
std::optional<double> sibling_median(const std::string& key, const std::set<std::string>& families,
                                     const std::vector<Row>& rows, const std::set<int>& train, const Context& ctx,
                                     const Sensitivity& sensitivity, const std::vector<std::string>& all_keys,
                                     const calib::Params& params) {
  const auto sk = stack_key(key);
  std::vector<double> values;
  for (const auto& other : all_keys) {
    if (!is_sibling(*sk, other)) continue;
    const auto seen = families_of(rows_moved_in(sensitivity, other, train), rows, ctx);
    if (std::any_of(families.begin(), families.end(), [&](const std::string& f) { return seen.count(f) > 0; }))
      values.push_back(params.get(other).value.quantity.value);
  }
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : std::sqrt(values[n / 2 - 1] * values[n / 2]);
}

/// The median of the same parameter in every other stack, as documented (fitted or assumed):
/// what a stack no row measures is written down with (0 s for transformers-neuronx's
/// prefill_step_overhead in the other stacks); empty when no other stack has the parameter.
/// Arithmetic, since a documented value may be 0.
std::optional<double> documented_sibling_median(const std::string& key, const calib::Params& params) {
  const auto sk = stack_key(key);
  std::vector<double> values;
  for (const auto& [other, p] : params.all()) {
    if (!is_sibling(*sk, other) || p.value.is_flag) continue;
    values.push_back(p.value.quantity.value);
  }
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/// A software stack's key that no training row of the fold moves cannot be learned in the fold,
/// and its documented value may be a fit on the held-out rows themselves. It takes the median of
/// the same parameter of the other stacks that the fold's rows of the same hardware family inform
/// (sibling_median, kept within the key's range): the value a user of a stack the validation has
/// not seen is given. A key no fold row informs in any sibling takes the siblings' documented
/// median instead (documented_sibling_median); only a parameter no other stack has keeps its own.
void borrow_from_sibling_stacks(const std::vector<Row>& rows, const std::vector<int>& train, const Context& ctx,
                                const Sensitivity& sensitivity, const std::vector<std::string>& fold_keys,
                                const std::vector<std::string>& all_keys, calib::Params& params) {
  const std::set<int> in_train(train.begin(), train.end());
  for (const auto& key : fold_keys) {
    if (!stack_key(key) || !rows_moved_in(sensitivity, key, in_train).empty()) continue;
    const auto it = sensitivity.find(key);
    const auto families = families_of(it == sensitivity.end() ? std::vector<int>{} : it->second, rows, ctx);
    auto median = sibling_median(key, families, rows, in_train, ctx, sensitivity, all_keys, params);
    if (!median) median = documented_sibling_median(key, params);
    if (!median) continue;
    const calib::Parameter& p = params.get(key);
    if (p.range_low) *median = std::max(*median, p.range_low->quantity.value);
    if (p.range_high) *median = std::min(*median, p.range_high->quantity.value);
    params.set(with_value(p, *median));
  }
}

/// What a fold did to each of its keys: the full fit's value, the fold's, and the training rows
/// of the fold that the key moves.
std::vector<FittedValue> refitted_values(const std::vector<std::string>& keys, const calib::Params& full,
                                         const calib::Params& fold, const Sensitivity& sensitivity,
                                         const std::vector<int>& train) {
  const std::set<int> in_train(train.begin(), train.end());
  std::vector<FittedValue> out;
  for (const auto& key : keys) {
    const calib::Parameter& p = fold.get(key);
    out.push_back({key, full.get(key).value.quantity.value, p.value.quantity.value, p.value.text,
                   static_cast<int>(rows_moved_in(sensitivity, key, in_train).size())});
  }
  return out;
}

/// One fold: the keys that move a held-out row go back to their prior and are fitted on the
/// other rows (a stack's key no other row informs borrows its sibling stacks' median instead);
/// every other key keeps its value in *ctx.calibration (it cannot move a held-out row). Returns
/// the held-out rows predicted with the event-driven executor.
std::vector<RowResult> run_fold(const std::vector<Row>& rows, const std::vector<int>& train,
                                const std::vector<int>& held_out, const Context& ctx,
                                const Sensitivity& sensitivity, const FitOptions& opt, FoldFit& fold_fit,
                                const RowSelection& report) {
  FitOptions fold_opt = opt;
  fold_opt.keys = keys_moving(opt.keys, sensitivity, held_out, opt.refit_min_share);
  if (opt.fold_sweeps > 0) fold_opt.sweeps = opt.fold_sweeps;
  fold_opt.final_loss = false;  // only the fold's values are used
  calib::Params start = *ctx.calibration;
  for (const auto& key : fold_opt.keys) {
    calib::Parameter p = start.get(key);
    p.value = p.prior;
    start.set(p);
  }
  Context fold_ctx = ctx;
  fold_ctx.calibration = &start;
  FitResult fold;
  if (!fold_opt.keys.empty()) {
    // Only the training rows a re-fitted key moves enter the fit: the others add a constant.
    const std::vector<int> moved = rows_moved_by_any(sensitivity, fold_opt.keys, train);
    fold.params = start;
    if (!moved.empty()) fold = fit(rows, moved, fold_ctx, sensitivity, fold_opt);
    borrow_from_sibling_stacks(rows, train, ctx, sensitivity, fold_opt.keys, opt.keys, fold.params);
    fold_ctx.calibration = &fold.params;
  }
  fold_fit.values = refitted_values(fold_opt.keys, *ctx.calibration, *fold_ctx.calibration, sensitivity, train);
  fold_fit.predictions = fold.predictions;
  fold_ctx.analytical_train = false;
  ServeRunCache runs;  // a configuration's rows share one serve run
  fold_ctx.serve_runs = &runs;
  const std::vector<size_t> order = configurations_first(rows, held_out);
  std::vector<RowResult> out(held_out.size());
  core::parallel_for(order.size(), opt.threads, [&](size_t k) {
    const size_t j = order[k];
    if (report.keeps(rows[held_out[j]])) out[j] = predict_row(rows[held_out[j]], fold_ctx);
  });
  return out;
}

}  // namespace

long long fold_predictions(const std::vector<FoldFit>& fits) {
  long long n = 0;
  for (const auto& f : fits) n += f.predictions;
  return n;
}

std::vector<std::string> fold_labels(const std::vector<Row>& rows, const FitOptions& opt) {
  std::map<std::string, std::set<std::string>> models;
  std::map<std::string, int> count;
  std::vector<std::string> out;
  for (const auto& row : rows) {
    out.push_back(source_of(row.source_url));
    models[out.back()].insert(row.model);
    ++count[out.back()];
  }
  if (opt.folds == Folds::BySource) return out;
  for (size_t i = 0; i < rows.size(); ++i)
    if (models[out[i]].size() >= 2 && count[out[i]] >= opt.model_fold_min_rows) out[i] += " / " + rows[i].model;
  return out;
}

std::vector<RowResult> cross_validate(const std::vector<Row>& rows, const Context& ctx, const Sensitivity& sensitivity,
                                      const FitOptions& opt, std::vector<std::string>* folds,
                                      std::vector<FoldFit>* fold_fits, const RowSelection& report) {
  const std::vector<std::string> label = fold_labels(rows, opt);
  std::set<std::string> labels;
  for (size_t i = 0; i < rows.size(); ++i)
    if (report.keeps(rows[i])) labels.insert(label[i]);
  std::vector<RowResult> out(rows.size());
  int done = 0;
  for (const auto& fold : labels) {
    std::vector<int> train, held_out;
    for (size_t i = 0; i < rows.size(); ++i) (label[i] == fold ? held_out : train).push_back(static_cast<int>(i));
    if (train.empty()) continue;
    FoldFit fold_fit{fold, {}, 0};
    const auto predicted = run_fold(rows, train, held_out, ctx, sensitivity, opt, fold_fit, report);
    for (size_t j = 0; j < held_out.size(); ++j) {
      out[held_out[j]] = predicted[j];
      out[held_out[j]].fold = fold;
    }
    if (opt.fold_progress)
      opt.fold_progress(fold, ++done, static_cast<int>(labels.size()), static_cast<int>(fold_fit.values.size()));
    if (folds) folds->push_back(fold);
    if (fold_fits) fold_fits->push_back(std::move(fold_fit));
  }
  for (size_t i = 0; i < rows.size(); ++i)
    if (out[i].row.id.empty() && report.keeps(rows[i]))
      out[i] = predict_row(rows[i], ctx);  // a single-source file: no fold
  return out;
}

std::string override_yaml(const FitResult& fit, const std::string& basis_text) {
  std::vector<std::vector<std::string>> keys;
  for (const auto& v : fit.values) keys.push_back(split_key(v.key));
  std::sort(keys.begin(), keys.end());
  std::ostringstream o;
  o << "# " << basis_text << "\n";
  std::vector<std::string> previous;
  for (const auto& parts : keys) {
    const std::vector<std::string> path(parts.begin(), parts.end() - 1);
    size_t common = 0;
    while (common < path.size() && common < previous.size() && path[common] == previous[common]) ++common;
    for (size_t j = common; j < path.size(); ++j) o << std::string(2 * j, ' ') << path[j] << ":\n";
    std::string key;
    for (const auto& p : parts) key += (key.empty() ? "" : ".") + p;
    const std::string indent(2 * path.size(), ' ');
    o << indent << parts.back() << ":\n";
    o << indent << "  value: " << yaml_quoted(fit.params.get(key).value.text) << "\n";
    o << indent << "  basis: " << yaml_quoted(basis_text) << "\n";
    previous = path;
  }
  return o.str();
}

}  // namespace xpusim::validation
