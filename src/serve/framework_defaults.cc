#include "xpusim/serve/framework_defaults.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <regex>

#include "xpusim/core/diagnostics.h"

namespace xpusim::serve {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
bool has(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }

// MLPerf Inference Llama-2-70B (OpenOrca): 24,576 samples, inputs ≤ 1024 tokens.
constexpr long long kOrcaSamples = 24576;
constexpr long long kOrcaInputMean = 280;   // mean input tokens (after the 1024 cap)
constexpr long long kOrcaOutputMean = 285;  // when the row leaves out_len empty
constexpr int kDefaultSpecLen = 7;          // NxDI fused speculation default in the tutorials
constexpr double kDefaultAcceptance = 0.70; // Llama-3.2-1B drafting for Llama-3 targets

Framework detect_framework(const std::string& notes, const hw::ChipSpec& chip, std::vector<std::string>& as) {
  const std::string n = lower(notes);
  if (has(n, "nxd inference") || has(n, "nxdi")) return Framework::NeuronNxdi;
  if (has(n, "transformers neuronx") || has(n, "transformers-neuronx")) return Framework::NeuronTnx;
  if (has(n, "nim ")) return Framework::Nim;
  if (has(n, "sglang")) return Framework::Sglang;
  if (has(n, "tensorrt-llm") || has(n, "trt-llm") || has(n, "trtllm")) return Framework::TensorRtLlm;
  if (has(n, "vllm")) return Framework::Vllm;
  const Framework f = default_framework(chip);
  as.push_back("framework not named in the notes: " + framework_name(f) + " (default for the chip)");
  return f;
}

std::optional<double> number_before(const std::string& text, const std::string& unit_regex) {
  std::smatch m;
  const std::regex re("([0-9]+(?:\\.[0-9]+)?)\\s*" + unit_regex);
  if (std::regex_search(text, m, re)) return std::stod(m[1].str());
  return std::nullopt;
}

}  // namespace

core::Result<RowScenario> scenario_for_row(const validation::Row& row, const hw::Catalog& catalog) {
  if (row.kind != "infer") return core::make_error("not an infer row");
  RowScenario rs;
  auto& sc = rs.scenario;
  auto& as = rs.assumptions;
  const hw::SystemSpec& sys = catalog.system(row.system, "system");
  const std::string notes = lower(row.notes);
  sc.system = row.system;
  sc.model = row.model;
  sc.chips = row.chips;
  const Framework fw = detect_framework(row.notes, sys.chip, as);
  sc.framework = fw;
  const bool mlperf = has(notes, "mlperf") || has(notes, "openorca");
  {
    std::smatch m;
    const std::regex re("tensorrt-llm v?([0-9]+\\.[0-9]+(?:\\.[0-9]+)?)");
    if (std::regex_search(notes, m, re)) sc.framework_version = m[1].str();
  }
  if (has(notes, "two-batch overlap")) {
    sc.overlap_ep_comm = true;
    as.push_back("expert all-to-all overlapped with compute (two-batch overlap, per the notes)");
  }

  // Precision: the row's, weight-only storage from the notes, MLPerf default when empty.
  if (!row.precision.empty()) {
    sc.precision = row.precision;
  } else {
    const bool fp4 = sys.chip.supports(core::Dtype::Nvfp4);
    sc.precision = mlperf && fp4 ? "nvfp4" : (mlperf ? "fp8" : "bf16");
    as.push_back("precision not stated: " + sc.precision + " (what the framework's MLPerf submissions use on " + sys.chip.id + ")");
  }
  if (has(notes, "int8 weights") || has(notes, "weights stored int8")) {
    sc.weight_precision = "int8";
    as.push_back("weights int8 (weight-only), matmuls " + sc.precision);
  } else if (has(notes, "fp8 weights") || has(notes, "weights stored fp8")) {
    sc.weight_precision = "fp8";
    as.push_back("weights fp8 (weight-only), matmuls " + sc.precision);
  }

  // Layout.
  if (row.tp) sc.tp = static_cast<int>(*row.tp);
  if (row.pp) sc.pp = static_cast<int>(*row.pp);
  if (row.ep) sc.ep = static_cast<int>(*row.ep);
  if (has(notes, "dp attention") && row.ep && *row.ep > 1 && !row.tp) {
    sc.attention_dp = true;
    sc.tp = 1;
    as.push_back("DP attention with EP" + std::to_string(*row.ep) + " (per the notes)");
  }

  // Lengths.
  const bool prefill_only = has(notes, "input (prefill) tokens") || has(notes, "prefill-only");
  if (row.in_len) {
    sc.load.in_len = *row.in_len;
  } else if (mlperf) {
    sc.load.in_len = kOrcaInputMean;
    sc.load.lengths = LengthDist::OpenOrcaLike;
    as.push_back("OpenOrca-like inputs: log-normal, <= 1024 tokens, mean ~280");
  } else {
    return core::make_error("input length not given and no benchmark default applies");
  }
  if (row.out_len) {
    sc.load.out_len = *row.out_len;
  } else if (prefill_only) {
    sc.load.out_len = 1;
    as.push_back("prefill-only measurement: out_len = 1");
  } else if (mlperf) {
    sc.load.out_len = kOrcaOutputMean;
    as.push_back("output mean not recorded for this run: " + std::to_string(kOrcaOutputMean) + " tokens (other v4.1 runs: 274-291)");
  } else {
    return core::make_error("output length not given and no benchmark default applies");
  }
  if (mlperf) sc.load.lengths = LengthDist::OpenOrcaLike;
  if (mlperf && row.out_len) as.push_back("OpenOrca-like outputs: log-normal with the row's mean, <= 1024");

  // Speculative decoding (NxDI fused speculation).
  if (has(notes, "speculative decoding") || has(notes, "specdec")) {
    std::smatch m;
    const std::regex re("speculation length ([0-9]+)");
    sc.draft_len = std::regex_search(notes, m, re) ? std::stoi(m[1].str()) : kDefaultSpecLen;
    if (!std::regex_search(notes, m, re))
      as.push_back("speculation length not stated: " + std::to_string(kDefaultSpecLen));
    sc.acceptance = kDefaultAcceptance;
    as.push_back("speculative decoding: draft " + std::to_string(sc.draft_len) + ", acceptance " +
                 std::to_string(kDefaultAcceptance).substr(0, 4) + " per token; draft cost folded into the fused step");
  }

  // Load and statistic.
  const long long b = row.batch_or_concurrency.value_or(0);
  const std::string& mode = row.mode;
  const std::string& metric = row.metric;
  if (mode == "fixed-batch") {
    if (b <= 0) return core::make_error("fixed-batch row without a batch size");
    sc.load.arrival = ArrivalKind::Offline;
    if (fw == Framework::TensorRtLlm) {
      sc.scheduler = SchedulerKind::StaticBatch;
      sc.static_batch = b;
      as.push_back("static batch of " + std::to_string(b) + " identical requests (no in-flight batching)");
    }
    sc.max_num_seqs = std::max<long long>(b, 1);
    if (!row.tp) {
      sc.tp = static_cast<int>(row.chips);
      as.push_back("tp = chips for a fixed-batch row without a layout");
    }
    // One batch per engine.
    sc.load.requests = b * std::max<long long>(1, row.chips / (static_cast<long long>(sc.tp) * sc.pp));
  } else if (mode == "single-stream") {
    sc.load.arrival = ArrivalKind::ClosedLoop;
    sc.load.concurrency = 1;
    sc.load.requests = 2;
    sc.max_num_seqs = std::max<long long>(sc.max_num_seqs, 1);
    if (!row.tp) sc.tp = static_cast<int>(row.chips);
  } else if (mode == "offline") {
    sc.load.arrival = ArrivalKind::Offline;
    if (mlperf) {
      // MLPerf offline runs at least 600 s, repeating the sample set as needed.
      sc.load.requests = std::max<long long>(kOrcaSamples, 3000 * std::max<long long>(1, row.chips));
      as.push_back("MLPerf offline: " + std::to_string(sc.load.requests) + " OpenOrca-like samples queued at once");
    } else if (prefill_only) {
      sc.load.requests = 64 * std::max<long long>(1, row.chips);
    } else {
      const long long engines = std::max<long long>(1, row.chips / std::max<long long>(1, row.tp.value_or(1)));
      sc.load.requests = 3000 * engines;
      as.push_back("offline: 3,000 requests per engine queued at once (trtllm-bench style)");
    }
  } else if (mode == "server") {
    if (auto qps = number_before(notes, "qps")) {
      sc.load.arrival = ArrivalKind::Poisson;
      sc.load.rate_per_s = *qps;
      sc.load.requests = std::max<long long>(4000, static_cast<long long>(*qps * 120));
      as.push_back("Poisson arrivals at " + std::to_string(*qps).substr(0, 5) + " QPS (from the notes)");
    } else if (b > 0) {
      sc.load.arrival = ArrivalKind::ClosedLoop;
      sc.load.concurrency = b;
      sc.load.requests = std::max<long long>(200, 8 * b);
      as.push_back("closed loop at concurrency " + std::to_string(b) + " (AIPerf style), " +
                   std::to_string(sc.load.requests) + " requests");
    } else {
      return core::make_error("server row without a rate or a concurrency");
    }
  } else {
    return core::make_error("unknown inference mode '" + mode + "'");
  }

  const bool p50 = has(notes, "statistic: p50");
  if (metric == "throughput_tokens_per_s") rs.metric = RowMetric::OutputTokensPerS;
  else if (metric == "throughput_tokens_per_s_per_chip")
    rs.metric = prefill_only ? RowMetric::InputTokensPerSPerChip : RowMetric::OutputTokensPerSPerChip;
  else if (metric == "ttft_ms") rs.metric = p50 ? RowMetric::TtftP50 : RowMetric::TtftMean;
  else if (metric == "tpot_ms") rs.metric = p50 ? RowMetric::TpotP50 : RowMetric::TpotMean;
  else if (metric == "e2e_latency_s") rs.metric = RowMetric::E2eMean;
  else if (metric == "requests_per_s") rs.metric = RowMetric::RequestsPerS;
  else return core::make_error("metric '" + metric + "' is not an inference metric");
  return rs;
}

double metric_value(const ServeReport& rep, RowMetric m) {
  const auto& s = rep.sim;
  const double chips = static_cast<double>(std::max<long long>(1, rep.chips_used));
  switch (m) {
    case RowMetric::OutputTokensPerS: return s.output_tokens_per_s;
    case RowMetric::OutputTokensPerSPerChip: return s.output_tokens_per_s / chips;
    case RowMetric::InputTokensPerSPerChip: return s.input_tokens_per_s / chips;
    case RowMetric::TtftMean: return s.ttft_ms.mean;
    case RowMetric::TtftP50: return s.ttft_ms.p50;
    case RowMetric::TpotMean: return s.tpot_ms.mean;
    case RowMetric::TpotP50: return s.tpot_ms.p50;
    case RowMetric::E2eMean: return s.e2e_s.mean;
    case RowMetric::RequestsPerS: return s.requests_per_s;
  }
  return 0;
}

validation::Prediction predict_infer_row(const validation::Row& row, const ServeEnv& env) {
  validation::Prediction p;
  try {
    auto rs = scenario_for_row(row, *env.catalog);
    if (!rs) {
      p.status = validation::Status::Unsupported;
      p.reason = rs.error();
      return p;
    }
    auto rep = run_scenario(rs->scenario, env);
    if (!rep) {
      p.status = validation::Status::Unsupported;
      p.reason = rep.error();
      return p;
    }
    p.predicted = metric_value(*rep, rs->metric);
    p.assumptions = rs->assumptions;
    for (const auto& a : rep->assumptions) p.assumptions.push_back(a);
  } catch (const core::InputError& e) {
    p.status = validation::Status::Error;
    p.reason = e.diagnostics().empty() ? e.what() : e.diagnostics().front().to_string();
  }
  return p;
}

}  // namespace xpusim::serve
