#pragma once
// Rendering of `xpusim model`: the shipped models, and one model's shape, parameters, FLOPs per
// token and bytes (weights per dtype, KV cache), text and JSON. The figures are workload/'s
// accounting, gathered here once so that text and JSON print the same numbers.

#include <string>
#include <vector>

#include "xpusim/report/json_convention.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

namespace xpusim::report {

/// workload/'s accounting of one model at a sequence length (train, prefill) and a context (decode, KV).
struct ModelFigures {
  workload::ModelSpec model;
  long long seq_len = 0, context = 0;
  workload::ParamCounts params;
  workload::TrainFlops train_none, train_selective, train_full;
  double prefill_flop_per_token = 0, decode_flop_per_token = 0;
};

/// `seq_len` <= 0: min(max_position or 4096, 4096); `context` <= 0: the sequence length.
ModelFigures model_figures(const workload::ModelSpec& m, long long seq_len, long long context);

/// `model show --json`; `what` is the id or path as given.
Json model_show_document(const Provenance& provenance, const std::string& what, const ModelFigures& f);
std::string model_show_text(const ModelFigures& f);

/// `model list --json`: `models`, one summary per model (id, family, layers, hidden, params).
Json model_list_document(const Provenance& provenance, const std::vector<workload::ModelSpec>& models);
std::string model_list_text(const std::vector<workload::ModelSpec>& models);

}  // namespace xpusim::report
