#include "xpusim/net/collective.h"

#include <algorithm>
#include <limits>

#include "xpusim/core/diagnostics.h"

namespace xpusim::net {

std::string collective_kind_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all-reduce";
    case CollectiveKind::ReduceScatter: return "reduce-scatter";
    case CollectiveKind::AllGather: return "all-gather";
    case CollectiveKind::AllToAll: return "all-to-all";
    case CollectiveKind::Broadcast: return "broadcast";
    case CollectiveKind::SendRecv: return "send-recv";
  }
  return "?";
}

const AlgorithmRegistry& builtin_algorithms() {
  static const AlgorithmRegistry reg = [] {
    AlgorithmRegistry r("collective algorithm");
    register_builtin_algorithms(r);
    return r;
  }();
  return reg;
}

namespace {

struct Chosen {
  std::string name;
  AlgorithmResult result;
};

/// Evaluates the requested algorithm (or all, for "auto") and returns the fastest valid one;
/// nullopt for a trivial call (group of one, nothing to send).
std::optional<Chosen> choose(const Topology& topo, CollectiveKind kind, core::Bytes bytes,
                             Group group, const CollectiveOptions& opt,
                             const AlgorithmRegistry& reg) {
  if (kind == CollectiveKind::SendRecv) group.size = 2;
  const GroupMapping map = topo.map(group);  // InputError naming "group" when it does not fit
  if (map.levels.empty() || bytes.base() <= 0) return std::nullopt;
  if (opt.chunk.base() <= 0) {
    core::fail("chunk", "the pipelining chunk must be positive", {}, "> 0 B");
  }
  AlgorithmInput in{&topo, &map, kind, bytes, opt.chunk};
  if (opt.algorithm != "auto") {
    const CollectiveAlgorithm& a = reg.get(opt.algorithm, "algorithm");
    std::optional<AlgorithmResult> r = a.cost(in);
    if (!r) {
      std::vector<std::string> valid;
      for (const std::string& n : reg.names()) {
        if (reg.get(n, "algorithm").cost(in)) valid.push_back(n);
      }
      core::fail("algorithm",
                 "algorithm '" + opt.algorithm + "' does not apply to " +
                     collective_kind_name(kind) + " over a group of " +
                     std::to_string(group.size) + " with stride " + std::to_string(group.stride),
                 opt.algorithm, "one of: " + core::join(valid));
    }
    return Chosen{opt.algorithm, std::move(*r)};
  }
  std::optional<Chosen> best;
  for (const std::string& n : reg.names()) {  // sorted: ties go to the first name
    std::optional<AlgorithmResult> r = reg.get(n, "algorithm").cost(in);
    if (!r) continue;
    if (!best || r->latency + r->bandwidth < best->result.latency + best->result.bandwidth) {
      best = Chosen{n, std::move(*r)};
    }
  }
  if (!best) {
    core::fail("algorithm", "no collective algorithm applies to " + collective_kind_name(kind),
               "auto", "one of: " + core::join(reg.names()));
  }
  return best;
}

CollectiveCost to_cost(const Chosen& c) {
  CollectiveCost out;
  out.time = c.result.latency + c.result.bandwidth;
  out.latency = c.result.latency;
  out.algorithm = c.name;
  out.scale_up_bytes = c.result.scale_up_bytes;
  out.scale_out_bytes = c.result.scale_out_bytes;
  return out;
}

CollectiveCost none() {
  CollectiveCost c;
  c.algorithm = "none";
  return c;
}

}  // namespace

CollectiveCost collective_cost(const Topology& topo, CollectiveKind kind, core::Bytes bytes,
                               Group group, const CollectiveOptions& opt,
                               const AlgorithmRegistry& reg) {
  std::optional<Chosen> c = choose(topo, kind, bytes, group, opt, reg);
  return c ? to_cost(*c) : none();
}

CollectiveCost collective_cost(const Topology& topo, CollectiveKind kind, core::Bytes bytes,
                               Group group, const CollectiveOptions& opt) {
  return collective_cost(topo, kind, bytes, group, opt, builtin_algorithms());
}

std::vector<CollectiveCost> concurrent_costs(const Topology& topo,
                                             const std::vector<CollectiveRequest>& reqs) {
  // Each collective is a fluid flow with `work` seconds of bandwidth time at its solo rate and a
  // utilisation u[d] = busy[d] / work of each link class d when running alone. Rates ρ ∈ (0, 1]
  // (relative to solo speed) are max-min fair subject to Σ ρ·u[d] <= 1 per class (progressive
  // filling); when one finishes, the rest are re-shared. The α part is not shared.
  const size_t nr = reqs.size(), nd = topo.dims().size();
  std::vector<CollectiveCost> out(nr);
  std::vector<double> remaining(nr, 0.0), finish(nr, 0.0);
  std::vector<std::vector<double>> u(nr, std::vector<double>(nd, 0.0));
  std::vector<bool> active(nr, false);
  for (size_t i = 0; i < nr; ++i) {
    const CollectiveRequest& q = reqs[i];
    std::optional<Chosen> c =
        choose(topo, q.kind, q.bytes, q.group, q.options, builtin_algorithms());
    if (!c) {
      out[i] = none();
      continue;
    }
    out[i] = to_cost(*c);
    const double work = core::to_seconds(c->result.bandwidth);
    if (work <= 0) continue;
    remaining[i] = work;
    active[i] = true;
    for (size_t d = 0; d < nd && d < c->result.busy.size(); ++d) {
      u[i][d] = std::min(1.0, core::to_seconds(c->result.busy[d]) / work);
    }
  }
  double now = 0.0;
  for (;;) {
    std::vector<size_t> act;
    for (size_t i = 0; i < nr; ++i) if (active[i]) act.push_back(i);
    if (act.empty()) break;
    // Progressive filling.
    std::vector<double> rate(nr, 0.0);
    std::vector<bool> frozen(nr, false);
    std::vector<double> used(nd, 0.0);
    size_t left = act.size();
    while (left > 0) {
      double level = 1.0;
      for (size_t d = 0; d < nd; ++d) {
        double load = 0.0;
        for (size_t i : act) if (!frozen[i]) load += u[i][d];
        if (load > 1e-15) level = std::min(level, (1.0 - used[d]) / load);
      }
      level = std::max(level, 0.0);
      // Freeze the flows on saturated classes (or all, when no class limits them).
      std::vector<bool> saturated(nd, false);
      for (size_t d = 0; d < nd; ++d) {
        double load = 0.0;
        for (size_t i : act) if (!frozen[i]) load += u[i][d];
        if (load > 1e-15 && used[d] + level * load >= 1.0 - 1e-12) saturated[d] = true;
      }
      bool any = false;
      for (size_t i : act) {
        if (frozen[i]) continue;
        bool on_sat = level >= 1.0;
        for (size_t d = 0; d < nd && !on_sat; ++d) on_sat = saturated[d] && u[i][d] > 1e-15;
        if (!on_sat) continue;
        rate[i] = level;
        frozen[i] = true;
        --left;
        any = true;
      }
      for (size_t d = 0; d < nd; ++d) {
        used[d] = 0.0;
        for (size_t i : act) if (frozen[i]) used[d] += rate[i] * u[i][d];
      }
      if (!any) {  // numerical corner: give everyone left the current level
        for (size_t i : act) if (!frozen[i]) { rate[i] = level; frozen[i] = true; }
        left = 0;
      }
    }
    double dt = std::numeric_limits<double>::infinity();
    for (size_t i : act) if (rate[i] > 0) dt = std::min(dt, remaining[i] / rate[i]);
    if (!(dt < std::numeric_limits<double>::infinity())) break;  // cannot happen: rates > 0
    now += dt;
    for (size_t i : act) {
      remaining[i] -= rate[i] * dt;
      if (remaining[i] <= 1e-12 * (1.0 + now)) {
        active[i] = false;
        finish[i] = now;
      }
    }
  }
  for (size_t i = 0; i < nr; ++i) {
    if (out[i].algorithm == "none") continue;
    out[i].time = out[i].latency + core::seconds(finish[i]);
  }
  return out;
}

}  // namespace xpusim::net
