// Deadline and budget solvers over chip counts (scenario/solver.h, docs/scale.md).

#include "xpusim/scenario/solver.h"

#include <algorithm>
#include <map>

#include "xpusim/config/values.h"
#include "xpusim/core/format.h"

namespace xpusim::scenario {

namespace {

// Evaluates each count once, marks whether it meets the target and records it in order.
class Prober {
 public:
  Prober(const ProbeFunction& evaluate, std::function<bool(const SolverProbe&)> meets, SolverChoice& out)
      : evaluate_(evaluate), meets_(std::move(meets)), out_(out) {}

  SolverProbe operator()(long long chips) {
    for (const auto& p : out_.tried)
      if (p.chips == chips) return p;
    SolverProbe p = evaluate_(chips);
    p.chips = chips;
    p.meets = p.found && meets_(p);
    out_.tried.push_back(std::move(p));
    return out_.tried.back();
  }

 private:
  const ProbeFunction& evaluate_;
  std::function<bool(const SolverProbe&)> meets_;
  SolverChoice& out_;
};

// The found probe with the least `key` (ties: the first tried); 0 when none was found.
template <typename Key>
long long least_by(const std::vector<SolverProbe>& tried, Key key) {
  const SolverProbe* best = nullptr;
  for (const auto& p : tried)
    if (p.found && (!best || key(p) < key(*best))) best = &p;
  return best ? best->chips : 0;
}

double time_of(const SolverProbe& p) { return p.time_to_train_s; }

// Bisection over whole domains strictly between `low` and `high` (multiples of `domain`):
// `keep_high` says whether a count that meets moves the upper end (deadline: the fewest that
// meets) or the lower end (budget: the most that meets). Returns the final end that meets.
long long bisect_domains(Prober& probe, long long low, long long high, long long domain, bool keep_high) {
  long long lo = low / domain, hi = high / domain;
  while (hi - lo > 1) {
    const long long mid = lo + (hi - lo) / 2;
    const bool meets = probe(mid * domain).meets;
    if (meets == keep_high) hi = mid;
    else lo = mid;
  }
  return keep_high ? hi * domain : lo * domain;
}

}  // namespace

SolverChoice solve_deadline(const std::vector<long long>& counts, long long domain, double deadline_s,
                            const ProbeFunction& evaluate) {
  SolverChoice out;
  Prober probe(evaluate, [deadline_s](const SolverProbe& p) { return p.time_to_train_s <= deadline_s; }, out);
  long long before = 0, first_meeting = 0;
  for (long long c : counts) {
    if (probe(c).meets) {
      first_meeting = c;
      break;
    }
    before = c;
  }
  if (!first_meeting) {
    out.chips = least_by(out.tried, time_of);
    return out;
  }
  out.met = true;
  out.chips = first_meeting % domain == 0 ? bisect_domains(probe, before, first_meeting, domain, true) : first_meeting;
  return out;
}

SolverChoice solve_budget(const std::vector<long long>& counts, long long domain, double budget_usd,
                          const ProbeFunction& evaluate) {
  SolverChoice out;
  Prober probe(evaluate, [budget_usd](const SolverProbe& p) { return p.cost_usd <= budget_usd; }, out);
  size_t best = counts.size();
  for (size_t i = 0; i < counts.size(); ++i) {
    const SolverProbe& p = probe(counts[i]);
    if (p.meets && (best == counts.size() || p.time_to_train_s < probe(counts[best]).time_to_train_s)) best = i;
  }
  if (best == counts.size()) {
    out.chips = least_by(out.tried, [](const SolverProbe& p) { return p.cost_usd; });
    return out;
  }
  out.met = true;
  out.chips = counts[best];
  if (best + 1 == counts.size()) return out;
  const SolverProbe next = probe(counts[best + 1]);
  const double best_time = probe(counts[best]).time_to_train_s;
  if (!next.found || next.time_to_train_s >= best_time || next.chips % domain != 0) return out;
  const long long refined = bisect_domains(probe, counts[best], next.chips, domain, false);
  if (refined > counts[best] && probe(refined).time_to_train_s < best_time) out.chips = refined;
  return out;
}

double parse_deadline(const std::string& text) {
  core::Diagnostics d;
  const auto s = config::parse_positive_duration(d, "--deadline", text);
  d.throw_if_any();
  return core::to_seconds(*s);
}

void check_solver_inputs(const TrainInputs& in, core::Diagnostics& d) {
  const char* flag = in.deadline ? "--deadline" : "--budget";
  if (!in.deadline && !in.budget) return;
  if (in.deadline) config::parse_positive_duration(d, "--deadline", *in.deadline);
  config::check_positive_number(d, "--budget", in.budget);
  if (in.deadline && in.budget)
    d.error("--budget", "a budget with a deadline", core::fmt_num(*in.budget, 6), "one of --deadline or --budget");
  if (!in.train_tokens)
    d.error(flag, "the solver needs the tokens to train", in.deadline ? *in.deadline : core::fmt_num(*in.budget, 6),
            std::string("--train-tokens N with ") + flag);
  if (in.chips)
    d.error("--chips", std::string("the solver chooses the chip count (") + flag + ")", std::to_string(*in.chips),
            std::string("no --chips with ") + flag);
  if (in.scaling)
    d.error("--scaling", std::string("the scaling curve and the solver are separate runs (") + flag + ")",
            *in.scaling, std::string("--scaling or ") + flag);
}

}  // namespace xpusim::scenario

namespace xpusim::scenario {

namespace {

// A count's failure depends on the count (no plan fits, degrees that do not divide it) when the
// diagnostics name only these; anything else is bad input, whatever the count.
bool count_dependent(const core::InputError& e) {
  for (const auto& x : e.diagnostics())
    if (x.path != "--chips" && x.path != "--dp" && x.path != "--global-batch" && x.path != "plan") return false;
  return true;
}

// Cost of the whole run with failures: the run's one cost path (TrainBudget, billed for the time
// with failures), so the solver's table and the report under it agree.
double cost_with_failures(const TrainRun& run) { return core::to_dollars(run.budget->dollars); }

// The solver's counts: those of --scaling from one node to the system's largest cluster.
std::vector<long long> solver_counts(const hw::SystemSpec& sys) {
  const long long node = std::max(1, sys.chips_per_node), largest = sys.max_chips.value;
  if (largest <= node) return {largest};
  return scaling_counts(ScalingRange{node, largest}, sys);
}

struct Evaluations {
  std::map<long long, TrainRun> runs;
  std::optional<core::InputError> last_error;
};

ProbeFunction simulate_counts(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                              const calib::Params& params, Evaluations& ev) {
  return [&in, &cat, &models_dir, &params, &ev](long long chips) {
    SolverProbe p;
    try {
      TrainRun run = run_train(inputs_at_count(in, chips), cat, models_dir, params, false);
      p.found = run.result.fits;
      p.time_to_train_s = core::to_seconds(*run.time_to_train_with_failures);
      p.cost_usd = cost_with_failures(run);
      if (!p.found) p.note = run.result.reason;
      else ev.runs.emplace(chips, std::move(run));
    } catch (const core::InputError& e) {
      if (!count_dependent(e)) throw;
      p.note = e.diagnostics().empty() ? "no plan" : e.diagnostics().front().message;
      ev.last_error = e;
    }
    return p;
  };
}

}  // namespace

SolverResult run_solver(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                        const calib::Params& params) {
  core::Diagnostics d;
  check_solver_inputs(in, d);
  d.throw_if_any();
  SolverResult res;
  res.kind = in.deadline ? SolverKind::Deadline : SolverKind::Budget;
  res.target_text = in.deadline ? *in.deadline : core::fmt_num(*in.budget, 6);
  res.target = in.deadline ? parse_deadline(*in.deadline) : *in.budget;
  const hw::SystemSpec& sys = cat.system(in.system.value_or(""), "--system");
  res.system = sys.id;
  const long long domain = std::max(1, sys.chips_per_domain);
  Evaluations ev;
  const ProbeFunction evaluate = simulate_counts(in, cat, models_dir, params, ev);
  res.choice = res.kind == SolverKind::Deadline ? solve_deadline(solver_counts(sys), domain, res.target, evaluate)
                                                : solve_budget(solver_counts(sys), domain, res.target, evaluate);
  if (ev.runs.empty()) {
    if (ev.last_error) throw *ev.last_error;
    core::fail("--system", "no chip count of the system fits the model", sys.id, "a larger system or a smaller model");
  }
  TrainRun& chosen = ev.runs.at(res.choice.chips);
  if (in.runs) {  // the Monte Carlo of the answer
    TrainInputs with_runs = inputs_at_count(in, res.choice.chips);
    with_runs.runs = in.runs;
    with_runs.seed = in.seed;
    chosen = run_train(with_runs, cat, models_dir, params, false);
  }
  res.run = std::move(chosen);
  res.model = res.run.built.scenario.model.id;
  res.cost_usd = cost_with_failures(res.run);
  return res;
}

}  // namespace xpusim::scenario
