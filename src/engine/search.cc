// Tier-A plan search: enumerate plans that divide the chips, prune those that cannot fit or
// that their schedule refuses, time the rest with the analytical executor, and keep the one
// with the highest throughput among those that meet the batch target. With a batch bound a
// plan that cannot stay within it is skipped; with a target, a plan whose least batch already
// exceeds it only wins when no plan meets it. Deterministic: ties keep the first plan in
// enumeration order.

#include <algorithm>
#include <numeric>

#include "xpusim/engine/defaults.h"
#include "xpusim/engine/train.h"
#include "xpusim/mapping/schedule.h"

namespace xpusim::engine {

namespace {

/// The parallel layout of a candidate: degrees that divide the chips and the model.
struct Layout {
  int tp = 1, pp = 1, cp = 1;
  long long dp = 1;
};

/// Every (tp, pp, cp) of the space that divides the chips, keeps TP inside (and tiling) the
/// scale-up domain and divides the model's heads and layers.
std::vector<Layout> layouts(const TrainScenario& base, long long chips, const SearchSpace& space) {
  std::vector<Layout> out;
  const auto& sys = *base.system;
  const auto& md = base.model;
  for (int tp : space.tp) {
    if (tp > sys.chips_per_domain || sys.chips_per_domain % tp != 0 || chips % tp != 0) continue;
    if (!workload::tp_divides(md, tp)) continue;
    for (int pp : space.pp) {
      if (pp > md.layers || chips % (static_cast<long long>(tp) * pp) != 0) continue;
      for (int cp : space.cp) {
        const long long rest = chips / (static_cast<long long>(tp) * pp);
        if (rest % cp != 0 || (space.ep > 0 && rest % space.ep != 0)) continue;
        out.push_back({tp, pp, cp, rest / cp});
      }
    }
  }
  return out;
}

/// Experts spread over the data-parallel ranks, up to the expert count (and 64).
int expert_parallel(const workload::ModelSpec& md, long long dp_cp) {
  int ep = 1;
  while (ep * 2 <= md.moe.num_experts && dp_cp % (ep * 2) == 0 && md.moe.num_experts % (ep * 2) == 0 &&
         ep * 2 <= 64)
    ep *= 2;
  return ep;
}

/// The base scenario with a layout and the per-candidate choices applied; false when the
/// global batch cannot be split into whole micro-batches per data-parallel rank.
bool make_candidate(const TrainScenario& base, const Layout& l, int vpp, long long micro_batch,
                    const SearchSpace& space, TrainScenario& s) {
  s = base;
  s.plan.tp = l.tp;
  s.plan.pp = l.pp;
  s.plan.cp = l.cp;
  s.plan.dp = static_cast<int>(l.dp);
  s.plan.vpp = vpp;
  s.plan.micro_batch = micro_batch;
  if (base.model.is_moe()) s.plan.ep = space.ep > 0 ? space.ep : expert_parallel(base.model, l.dp * l.cp);
  const long long unit = l.dp * micro_batch;
  // The one rule (engine/defaults.h): whole micro-batches per data-parallel rank, never fewer
  // than the pipeline needs; without gradient accumulation one local batch per rank.
  const double tokens = static_cast<double>(space.batch_tokens);
  if (!space.gradient_accumulation) s.plan.global_batch = unit * pipeline_min_micro_batches(s.plan);
  else if (space.batch_tokens > 0 && space.batch_bound) s.plan.global_batch = global_batch_within_tokens(tokens, s.plan);
  else if (space.batch_tokens > 0) s.plan.global_batch = global_batch_for_tokens(tokens, s.plan);
  return s.plan.global_batch > 0 && s.plan.global_batch % unit == 0;
}

/// True when the plan's memory cannot fit under any of the search's ZeRO and FSDP choices even
/// with full recompute (the least activation memory), or its pipeline schedule refuses it: no
/// need to time it. Every option that lowers memory is tried before a layout is pruned.
bool prune(const TrainScenario& s, const SearchSpace& space, const mapping::MemoryParams& memory) {
  if (mapping::schedule_of(s.plan).refusal(mapping::pipeline_shape(s.plan))) return true;
  mapping::TrainPlan least = s.plan;
  least.recompute = mapping::Recompute::Full;
  const std::vector<mapping::Zero> shardings = space.zero.empty() ? std::vector<mapping::Zero>{s.plan.zero} : space.zero;
  for (mapping::Zero zero : shardings) {
    least.zero = zero;
    if (mapping::train_memory_per_chip(s.model, least, memory).total() <= s.system->chip.hbm_capacity.value) return false;
  }
  return true;
}

/// True when the least batch the plan runs (one micro-batch per data-parallel rank, as many as
/// its pipeline needs) already exceeds the batch target: such a plan can only run with a larger
/// batch than asked for.
bool exceeds_target(const TrainScenario& s, const SearchSpace& space) {
  if (space.batch_tokens <= 0) return false;
  const long long least = static_cast<long long>(s.plan.dp) * s.plan.micro_batch * pipeline_min_micro_batches(s.plan);
  return least * s.plan.seq_len > space.batch_tokens;
}

/// Ranking: plans that meet the batch target come first; then the higher throughput.
bool better(const TrainScenario& s, const TrainResult& r, const SearchResult& best, const SearchSpace& space) {
  if (!best.found) return true;
  const bool over = exceeds_target(s, space), best_over = exceeds_target(best.best, space);
  if (over != best_over) return !over;
  return r.tokens_per_s > best.result.tokens_per_s;
}

/// Every plan that fits, when runners-up are asked for: the best is the first after sorting.
void keep_candidate(const TrainScenario& s, const TrainResult& r, const SearchSpace& space,
                    std::vector<RunnerUp>& kept) {
  if (space.runners_up <= 0) return;
  kept.push_back(RunnerUp{s.plan, r.tokens_per_s, r.step_time, r.memory.total(), exceeds_target(s, space)});
}

/// The runners-up: the search's ranking (within the batch target first, then throughput; ties in
/// enumeration order), the best itself left out.
std::vector<RunnerUp> runners_up(std::vector<RunnerUp> kept, int n) {
  std::stable_sort(kept.begin(), kept.end(), [](const RunnerUp& a, const RunnerUp& b) {
    if (a.over_batch_target != b.over_batch_target) return !a.over_batch_target;
    return a.tokens_per_s > b.tokens_per_s;
  });
  if (kept.empty()) return kept;
  kept.erase(kept.begin());
  if (static_cast<int>(kept.size()) > n) kept.resize(static_cast<std::size_t>(n));
  return kept;
}

/// Times the candidate under every recompute and ZeRO choice and keeps the best in `best`.
void time_choices(TrainScenario s, const SearchSpace& space, SearchResult& best, std::vector<RunnerUp>& kept) {
  for (auto recompute : space.recompute) {
    for (auto zero : space.zero) {
      s.plan.recompute = recompute;
      s.plan.zero = zero;
      TrainResult r = simulate_analytical(s);
      ++best.evaluated;
      if (!r.feasible || !r.fits) continue;
      ++best.fitting;
      keep_candidate(s, r, space, kept);
      if (better(s, r, best, space)) {
        best.found = true;
        best.best = s;
        best.result = r;
      }
    }
  }
}

}  // namespace

SearchResult search_plan(const TrainScenario& base, long long chips, const SearchSpace& space) {
  SearchResult best;
  const mapping::MemoryParams memory = mapping::memory_params(*base.calibration);
  const std::vector<int> vpps = space.vpp.empty() ? std::vector<int>{base.plan.vpp} : space.vpp;
  const std::vector<long long> micro_batches =
      space.micro_batch.empty() ? std::vector<long long>{base.plan.micro_batch} : space.micro_batch;
  std::vector<RunnerUp> kept;
  for (const Layout& l : layouts(base, chips, space)) {
    for (int vpp : vpps) {
      if (vpp > 1 && l.pp == 1) continue;  // interleaving needs a pipeline
      for (long long mb : micro_batches) {
        TrainScenario s;
        if (!make_candidate(base, l, vpp, mb, space, s)) {
          best.over_batch_bound += s.plan.global_batch == 0 ? 1 : 0;
          continue;
        }
        if (prune(s, space, memory)) {
          ++best.pruned;
          continue;
        }
        time_choices(s, space, best, kept);
      }
    }
  }
  best.runners_up = runners_up(std::move(kept), space.runners_up);
  return best;
}

long long largest_chips_within_bound(const TrainScenario& base, long long chips, const SearchSpace& space) {
  const long long domain = std::max(1, base.system->chips_per_domain);
  const long long micro = space.micro_batch.empty() ? base.plan.micro_batch : space.micro_batch.front();
  const long long seqs = space.batch_tokens / std::max<long long>(1, base.plan.seq_len) / std::max<long long>(1, micro);
  std::vector<long long> counts;
  for (int tp : space.tp) {
    if (tp > domain || domain % tp != 0 || !workload::tp_divides(base.model, tp)) continue;
    for (int pp : space.pp) {
      if (pp > base.model.layers) continue;
      TrainScenario probe = base;
      probe.plan.pp = pp;
      const long long per_rank = pipeline_min_micro_batches(probe.plan);
      for (int cp : space.cp) {
        const long long replica = static_cast<long long>(tp) * pp * cp;
        const long long q = domain / std::gcd(domain, replica);  // dp step that keeps whole domains
        const long long dp = std::min(seqs / per_rank, (chips - 1) / replica) / q * q;
        if (dp > 0) counts.push_back(replica * dp);
      }
    }
  }
  std::sort(counts.rbegin(), counts.rend());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  for (long long c : counts)
    if (search_plan(base, c, space).found) return c;
  return 0;
}

}  // namespace xpusim::engine
