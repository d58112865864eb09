#pragma once
// Deadline and budget solvers over chip counts (docs/scale.md): `train --train-tokens N
// --deadline 30d` finds the fewest chips, and their plan, that train in time with failures
// included (goodput-adjusted time to train); `--budget USD` finds the fastest run whose cost over
// the whole run (failures included) is within the money.
//
// The counts are those of `--scaling` (whole nodes below the scale-up domain, then whole
// UltraServers/racks, doubling) from one node to the system's largest cluster; each is a plan
// search with goodput (the analytical executor unless --executor is given). Between the two
// neighbouring counts that bracket the answer, a bisection over whole domains refines it.

#include <functional>
#include <string>
#include <vector>

#include "xpusim/scenario/scale.h"

namespace xpusim::scenario {

/// What one chip count gives: whether a plan fits, the time to train with failures and the cost
/// of the whole run.
struct SolverProbe {
  long long chips = 0;
  bool found = false;
  std::string note;         ///< why no plan
  double time_to_train_s = 0;
  double cost_usd = 0;
  bool meets = false;       ///< within the deadline or the budget
};

enum class SolverKind { Deadline, Budget };

/// The solver's logic, apart from the simulator: `evaluate` gives a probe (chips, found, time,
/// cost) for a count; the solver marks `meets` and keeps every probe in `tried`, in order.
struct SolverChoice {
  bool met = false;             ///< some count meets the target
  long long chips = 0;          ///< the answer; when none meets, the best achievable
  std::vector<SolverProbe> tried;
};
using ProbeFunction = std::function<SolverProbe(long long chips)>;

/// Fewest chips with time ≤ deadline: the counts in ascending order up to the first that meets,
/// then a bisection over whole `domain`s between it and the count before. None meets: the
/// fastest count tried.
SolverChoice solve_deadline(const std::vector<long long>& counts, long long domain, double deadline_s,
                            const ProbeFunction& evaluate);
/// Fastest run with cost ≤ budget (ties: fewer chips): every count; then, when the next count is
/// faster but over budget, a bisection over whole `domain`s for the largest affordable count
/// between them. None affordable: the cheapest count tried.
SolverChoice solve_budget(const std::vector<long long>& counts, long long domain, double budget_usd,
                          const ProbeFunction& evaluate);

/// --deadline, --budget: each needs --train-tokens; not both; not with --scaling or --chips (the
/// solver chooses the count); a deadline is a duration ("30d", "720h", "2.5e6 s"), a budget a
/// finite number of dollars > 0.
void check_solver_inputs(const TrainInputs& in, core::Diagnostics& d);
/// The deadline in seconds (InputError naming --deadline).
double parse_deadline(const std::string& text);

struct SolverResult {
  SolverKind kind = SolverKind::Deadline;
  std::string target_text;      ///< as written ("30d", "5e6")
  double target = 0;            ///< seconds or USD
  std::string system, model;
  SolverChoice choice;
  TrainRun run;                 ///< the chosen (or best achievable) count's run
  double cost_usd = 0;          ///< of the whole run, failures included
};

/// Runs the solver asked for by --deadline or --budget. No count with a plan: InputError.
SolverResult run_solver(const TrainInputs& in, const hw::Catalog& cat, const std::string& models_dir,
                        const calib::Params& params);

}  // namespace xpusim::scenario
