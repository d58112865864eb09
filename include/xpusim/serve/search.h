#pragma once
// Plan search for serving: the fewest chips (and the plan: TP, batch limit, colocated or a
// prefill:decode pool ratio) that serve a request rate within an SLO on one system; the
// cheapest heterogeneous deployment (prefill engines on one system, decode engines on another,
// docs/fusion.md); and the side-by-side comparison of systems for the same load (chips,
// tokens/s per chip, $ per million tokens, J per token) that `xpusim serve --compare` and
// `xpusim demo` print.

#include <string>
#include <utility>
#include <vector>

#include "xpusim/core/result.h"
#include "xpusim/serve/scenario.h"

namespace xpusim::serve {

struct SearchSpec {
  ServeScenario base;            ///< system, model, precision, framework, lengths
  double rate_per_s = 1.0;       ///< requests per second to serve (a trace's: its requests over its span)
  /// The load as flags, for the command that runs a found plan ("--rate R --in-len ... --requests
  /// N", or "--arrivals FILE ..." for a trace in base.load, which each slice deals a share of).
  std::string load_flags;
  core::Seconds ttft_p90_slo = core::seconds(2);
  core::Seconds tpot_p90_slo = core::milliseconds(100);
  long long requests = 2000;     ///< requests per trial simulation
  bool try_disaggregated = true;
  /// Mixture-of-experts models: also try DP attention beside each expert-parallel group (colocated,
  /// and 1:1 disaggregated when try_disaggregated).
  bool try_dp_attention = true;
  /// Try tensor-parallel engines (false: only DP attention, as `--dp-attention` states).
  bool try_tp_attention = true;
  /// Tensor-parallel degrees to try (empty = every power of two within the scale-up domain).
  std::vector<int> tp_candidates;
  /// Expert-parallel degrees a layout may have (empty = any: ep = tp, or each DP-attention group
  /// of the tp candidates' sizes); `--ep N` states one.
  std::vector<int> ep_candidates;
  /// Pipeline stages of a tensor-parallel engine (empty = the rule of pipeline_candidates in
  /// search.cc: one, and at the widest group also 2-16 when the weights crowd its HBM); `--pp N`
  /// states one.
  std::vector<int> pp_candidates;
  /// max_num_seqs values to try per engine.
  std::vector<long long> max_num_seqs_candidates = {64, 256};
  /// Disaggregated slices of one system: prefill:decode engines per slice besides 1:1 (tried
  /// where 1:1 serves the rate).
  std::vector<std::pair<int, int>> split_ratios = {{2, 1}, {1, 2}, {3, 1}, {1, 3}};
  /// Heterogeneous search: prefill:decode engines per slice to try.
  std::vector<std::pair<int, int>> pool_ratios = {{1, 1}, {1, 2}, {2, 1}, {1, 3}, {3, 1}, {1, 4}, {4, 1}, {2, 3}, {3, 2}};
};

struct PlanCandidate {
  int tp = 1;
  int ep = 1;                    ///< mixture-of-experts models: experts sharded over the tp chips
  int pp = 1;                    ///< pipeline stages of an engine (tp x pp chips)
  bool dp_attention = false;     ///< DP attention: each of the ep chips an engine (tp 1), experts ep ways
  long long max_num_seqs = 0;
  long long prefill_chips = 0;   ///< 0 = colocated
  long long decode_chips = 0;    ///< heterogeneous only: chips of the decode system
  int prefill_engines = 0, decode_engines = 0;  ///< heterogeneous only: engines per slice
  long long chips = 0;
  double dollars_per_hour = 0;   ///< the deployment's chips at their systems' catalog prices
  bool meets_slo = false;
  bool sustains_rate = false;    ///< completes its share of the rate (latency aside)
  double ttft_p90_ms = 0, tpot_p90_ms = 0;
  double output_tokens_per_s_per_chip = 0;
  double dollars_per_million_output_tokens = 0;
  double joules_per_output_token = 0;
  std::string precision;         ///< the matmul precision the plan ran
  std::string framework;         ///< the framework (and version range) it ran
  std::string note;
};

struct SearchResult {
  std::string system;                        ///< heterogeneous: "PREFILL + DECODE"
  std::string prefill_system, decode_system; ///< heterogeneous only
  bool found = false;
  PlanCandidate best;
  std::vector<PlanCandidate> tried;  ///< every plan evaluated, in order
  /// `xpusim serve …` that runs the best plan alone (empty: not found, or heterogeneous).
  std::string command;
  /// On Trainium: the best plan's slice under the software range's ends (serve/software_range.h).
  std::optional<SoftwareRange> software_range;
};

/// The cheapest plan in chips meeting the SLO at the rate (ties: lower $ per M tokens).
SearchResult search_plan(const SearchSpec& spec, const ServeEnv& env);

/// Heterogeneous disaggregation (spec.base names prefill_system and decode_system): the
/// deployment of slices of P prefill engines on the prefill system and D decode engines on the
/// decode system (the same tp in both pools, P:D from spec.pool_ratios) with the lowest
/// price per hour that meets the rate within the SLOs (ties: fewer chips, then lower $ per M
/// tokens). Every ratio, tp and batch limit tried is in `tried`.
SearchResult search_hetero(const SearchSpec& spec, const ServeEnv& env);

/// The heterogeneous answer beside each system alone: search_hetero, then search_plan on the
/// prefill system and on the decode system (same load, SLOs and model), so that a user sees
/// whether mixing the two kinds pays.
std::vector<SearchResult> compare_hetero(const SearchSpec& spec, const ServeEnv& env);

/// search_plan on each system with the same load; systems that cannot serve it are listed
/// with found = false and the reason in best.note.
std::vector<SearchResult> compare_systems(const SearchSpec& spec, const std::vector<std::string>& systems,
                                          const ServeEnv& env);

/// The systems `--compare` uses by default: trn3-ultraserver-gen2, trn2-ultraserver, gb300-nvl72.
std::vector<std::string> default_compare_systems();

}  // namespace xpusim::serve
