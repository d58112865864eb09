#include "xpusim/validation/row_scenario.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <regex>

#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/version.h"

namespace xpusim::validation {

namespace {

using serve::ArrivalKind;
using serve::Framework;
using serve::LengthDist;
using serve::SchedulerKind;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
bool has(const std::string& hay, const char* needle) { return hay.find(needle) != std::string::npos; }

// MLPerf Inference Llama-2-70B (OpenOrca): 24,576 samples, inputs of at most 1,024 tokens
// (a property of the data set; the drawn lengths honour its mean, docs/serving.md).
constexpr long long kOrcaSamples = 24576;
constexpr long long kOrcaInputMean = 280;   // mean input tokens of the subset
constexpr long long kOrcaOutputMean = 285;  // when the row leaves out_len empty
constexpr long long kOrcaMaxTokens = 1024;  // the subset's prompts and outputs (max_new_tokens)
// MLPerf Inference DeepSeek-R1 data set (4,388 samples; the rows' notes cite its statistics:
// openshift-psap/performance-dashboard mlperf-data/summaries/deepseek-r1.csv and the MLCommons
// deepseek-r1 README): prompts of at most 3,140 tokens (tok_input_len max, also max_input_len in
// NVIDIA's configs); reference outputs mean 4,043 and median about 2,200 tokens, at most 32k.
constexpr long long kR1MaxInput = 3140;
constexpr long long kR1MaxOutput = 32768;
constexpr double kR1ReferenceOutputMean = 4043;
constexpr double kR1ReferenceOutputMedian = 2200;
constexpr int kDefaultSpecLen = 7;          // NxDI fused speculation default in the tutorials
constexpr double kDefaultAcceptance = 0.70; // Llama-3.2-1B drafting for Llama-3 targets
// How many requests a row's simulated run holds: enough that the start-up and drain are a small
// share of the measured window (docs/serving.md, "Run lengths").
constexpr long long kOfflineRequestsPerChip = 3000;     // MLPerf offline: at least 600 s of samples
constexpr long long kOfflineRequestsPerEngine = 3000;   // trtllm-bench style offline runs
constexpr long long kPrefillOnlyRequestsPerChip = 64;   // prompt-only (TTFT) offline rows
constexpr long long kPoissonMinRequests = 4000;         // a Poisson run: at least this many arrivals,
constexpr double kPoissonMinSeconds = 120;              // and at least this many seconds of them

/// What the notes say about the benchmark, read once.
struct RowNotes {
  std::string text;  ///< lower case
  bool mlperf = false;
  bool prefill_only = false;
};

Framework detect_framework(const std::string& notes, const hw::ChipSpec& chip, std::vector<std::string>& as) {
  const std::string n = lower(notes);
  // Neuron stacks run on Trainium only: a GPU baseline in a Neuron source's notes names its
  // own framework (the NxDI Mixtral card's H100 row runs vLLM 0.8.5). Front ends over NxD
  // Inference first: they ship their own releases and defaults.
  const bool trainium = chip.family == hw::ChipFamily::Trainium;
  if (trainium && (has(n, "optimum-neuron") || has(n, "optimum-cli neuron"))) return Framework::NeuronOptimum;
  if (trainium && (has(n, "vllm neuron") || has(n, "vllm-neuron"))) return Framework::NeuronVllm;
  if (trainium && (has(n, "nxd inference") || has(n, "nxdi"))) return Framework::NeuronNxdi;
  if (trainium && (has(n, "transformers neuronx") || has(n, "transformers-neuronx"))) return Framework::NeuronTnx;
  if (has(n, "nim ")) return Framework::Nim;
  if (has(n, "sglang")) return Framework::Sglang;
  if (has(n, "tensorrt-llm") || has(n, "trt-llm") || has(n, "trtllm")) return Framework::TensorRtLlm;
  if (has(n, "vllm")) return Framework::Vllm;
  const Framework f = serve::default_framework(chip);
  as.push_back("framework not named in the notes: " + serve::framework_name(f) + " (default for the chip)");
  return f;
}

// A number the notes give in QPS ("12.5 qps"). The patterns of this file are compiled once
// (static): compiling a std::regex per row cost more than matching it.
std::optional<double> qps_in_notes(const std::string& text) {
  if (!has(text, "qps")) return std::nullopt;  // most rows: no regex
  static const std::regex re("([0-9]+(?:\\.[0-9]+)?)\\s*qps");
  std::smatch m;
  if (std::regex_search(text, m, re)) return std::stod(m[1].str());
  return std::nullopt;
}

// The pattern that names the framework's version in the notes (lower case): the silicon file's
// "framework: <name> <version>", else the stack's own spelling; Neuron stacks by their SDK.
std::string version_pattern(Framework f) {
  const std::string v = " v?([0-9][0-9a-z.+-]*)";
  switch (f) {
    case Framework::TensorRtLlm: return "(?:tensorrt-llm|trt-llm|trtllm)" + v;
    case Framework::Vllm: return "vllm" + v;
    case Framework::Sglang: return "sglang" + v;
    case Framework::Nim: return "nim" + v;
    case Framework::NeuronOptimum: return "optimum-neuron" + v;
    case Framework::NeuronTnx:
    case Framework::NeuronNxdi:
    case Framework::NeuronVllm: return "sdk" + v;
  }
  return "";
}

// The framework version the notes state, normalised; empty when none is stated or what is
// stated is not a PEP 440 version (said in the assumptions: the stack's default range applies).
std::string version_in_notes(const std::string& text, Framework f, std::vector<std::string>& as) {
  static const std::regex named("framework: [a-z-]+ ([^ ;,()]+)");
  static const std::map<Framework, std::regex> by_stack = [] {
    std::map<Framework, std::regex> out;
    for (Framework each : {Framework::TensorRtLlm, Framework::Vllm, Framework::Sglang, Framework::Nim,
                           Framework::NeuronOptimum, Framework::NeuronTnx, Framework::NeuronNxdi, Framework::NeuronVllm})
      out.emplace(each, std::regex(version_pattern(each)));
    return out;
  }();
  std::smatch m;
  std::string stated;
  if (std::regex_search(text, m, named)) stated = m[1].str();
  else if (std::regex_search(text, m, by_stack.at(f))) stated = m[1].str();
  while (!stated.empty() && std::strchr(".-+", stated.back()) != nullptr) stated.pop_back();
  if (stated.empty()) return "";
  if (!core::parse_version(stated)) {
    as.push_back("framework version '" + stated + "' in the notes is not a PEP 440 version: the " +
                 serve::framework_name(f) + " default range applies");
    return "";
  }
  return stated;
}

void apply_framework(const Row& row, const RowNotes& notes, const hw::SystemSpec& sys, RowScenario& rs) {
  auto& sc = rs.scenario;
  sc.framework = detect_framework(row.notes, sys.chip, rs.assumptions);
  sc.framework_version = version_in_notes(notes.text, *sc.framework, rs.assumptions);
  // A serving row's seq_len is the compiled maximum sequence length (the schema); on Neuron it
  // sets the static-shape buckets.
  if (row.seq_len) {
    sc.compiled_seq_len = *row.seq_len;
    if (sc.framework && serve::is_neuron(*sc.framework))
      rs.assumptions.push_back("static shapes: compiled sequence length " + std::to_string(*row.seq_len) +
                               ", prompts and decode attention padded to their buckets");
  }
  if (has(notes.text, "two-batch overlap")) {
    sc.overlap_ep_comm = true;
    rs.assumptions.push_back("expert all-to-all overlapped with compute (two-batch overlap, per the notes)");
  }
}

// The row's precision, weight-only storage from the notes, the MLPerf default when empty.
void apply_precision(const Row& row, const RowNotes& notes, const hw::SystemSpec& sys, RowScenario& rs) {
  auto& sc = rs.scenario;
  auto& as = rs.assumptions;
  sc.allow_fallback = true;  // a measured run: a precision its chip lacks runs weight-only, stated
  if (!row.precision.empty()) {
    sc.precision = row.precision;
  } else {
    const bool fp4 = sys.chip.supports(core::Dtype::Nvfp4);
    sc.precision = notes.mlperf && fp4 ? "nvfp4" : (notes.mlperf ? "fp8" : "bf16");
    as.push_back("precision not stated: " + sc.precision + " (what the framework's MLPerf submissions use on " +
                 sys.chip.id + ")");
  }
  if (has(notes.text, "int8 weights") || has(notes.text, "weights stored int8")) {
    sc.weight_precision = "int8";
    as.push_back("weights int8 (weight-only), matmuls " + sc.precision);
  } else if (has(notes.text, "fp8 weights") || has(notes.text, "weights stored fp8")) {
    sc.weight_precision = "fp8";
    as.push_back("weights fp8 (weight-only), matmuls " + sc.precision);
  }
}

// Whether the notes (lower case) name DP attention: "dp attention", "attention dp", "attention
// data-parallel", TensorRT-LLM's enable_attention_dp set true, or its perf tables' "DEP<n>"
// column (DP attention with EP n; "TEP<n>" is tensor-parallel attention).
bool names_dp_attention(const std::string& text) {
  for (const char* phrase : {"dp attention", "attention dp", "attention data-parallel", "attention data parallel"})
    if (has(text, phrase)) return true;
  const std::string key = "enable_attention_dp";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    size_t value = at + key.size();  // past "=", ":", quotes and spaces
    while (value < text.size() && std::strchr(" :=\"'", text[value]) != nullptr) ++value;
    if (text.compare(value, 4, "true") == 0) return true;
  }
  for (size_t at = text.find("dep"); at != std::string::npos; at = text.find("dep", at + 1)) {
    const bool starts_word = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    if (starts_word && at + 3 < text.size() && std::isdigit(static_cast<unsigned char>(text[at + 3]))) return true;
  }
  return false;
}

void apply_layout(const Row& row, const RowNotes& notes, RowScenario& rs) {
  auto& sc = rs.scenario;
  if (row.tp) sc.tp = static_cast<int>(*row.tp);
  if (row.pp) sc.pp = static_cast<int>(*row.pp);
  if (row.ep) sc.ep = static_cast<int>(*row.ep);
  // DP attention (attention data-parallel, tp 1 per rank) with EP for the experts: the row's
  // layout states tp empty or 1 (MLPerf configs: "enable_attention_dp ... -> tp=1, ep=8").
  if (names_dp_attention(notes.text) && row.ep && *row.ep > 1 && (!row.tp || *row.tp == 1)) {
    sc.attention_dp = true;
    sc.tp = 1;
    rs.assumptions.push_back("DP attention with EP" + std::to_string(*row.ep) + " (per the notes)");
  }
}

// The MLPerf DeepSeek-R1 data set's shape: its limits, and the output spread of a log-normal
// whose mean over median is the reference outputs' (σ = √(2 ln(mean/median)) ≈ 1.10, against
// OpenOrca's 0.7). The row's own means are kept; the prompts keep the calibration's spread (the
// data set's median input is above its mean, which no log-normal has).
void apply_r1_lengths(serve::LoadSpec& load, std::vector<std::string>& as) {
  load.max_drawn_in_len = kR1MaxInput;
  load.max_drawn_out_len = kR1MaxOutput;
  load.stated_output_sigma = std::sqrt(2.0 * std::log(kR1ReferenceOutputMean / kR1ReferenceOutputMedian));
  as.push_back("MLPerf DeepSeek-R1 data set: prompts within " + std::to_string(kR1MaxInput) + " tokens, outputs within " +
               std::to_string(kR1MaxOutput) + ", log-normal outputs with the row's mean and the reference outputs' " +
               "mean/median spread (sigma " + core::fmt_num(*load.stated_output_sigma, 3) + ")");
}

// Input and output lengths; an error when neither the row nor a benchmark default gives them.
core::Result<bool> apply_lengths(const Row& row, const RowNotes& notes, RowScenario& rs) {
  auto& load = rs.scenario.load;
  auto& as = rs.assumptions;
  if (row.in_len) {
    load.in_len = std::llround(*row.in_len);  // a dataset mean such as 684.7: nearest token
  } else if (notes.mlperf) {
    load.in_len = kOrcaInputMean;
    as.push_back("OpenOrca-like inputs: log-normal, mean ~280 tokens");
  } else {
    return core::make_error("input length not given and no benchmark default applies");
  }
  if (row.out_len) {
    load.out_len = std::llround(*row.out_len);
  } else if (notes.prefill_only) {
    load.out_len = 1;
    as.push_back("prefill-only measurement: out_len = 1");
  } else if (notes.mlperf) {
    load.out_len = kOrcaOutputMean;
    as.push_back("output mean not recorded for this run: " + std::to_string(kOrcaOutputMean) +
                 " tokens (other v4.1 runs: 274-291)");
  } else {
    return core::make_error("output length not given and no benchmark default applies");
  }
  if (notes.mlperf) load.lengths = LengthDist::OpenOrcaLike;
  if (notes.mlperf && has(notes.text, "openorca")) {
    load.max_drawn_in_len = load.max_drawn_out_len = kOrcaMaxTokens;
    as.push_back("OpenOrca subset: drawn prompts and outputs within 1024 tokens (the data set's limit)");
  }
  if (notes.mlperf && has(notes.text, "deepseek-r1 dataset")) {
    apply_r1_lengths(load, as);
  } else if (notes.mlperf && row.out_len) {
    as.push_back("OpenOrca-like outputs: log-normal with the row's mean");
  }
  return true;
}

// NxDI fused speculation, when the notes name speculative decoding.
void apply_speculation(const RowNotes& notes, RowScenario& rs) {
  if (!has(notes.text, "speculative decoding") && !has(notes.text, "specdec")) return;
  auto& sc = rs.scenario;
  std::smatch m;
  static const std::regex re("speculation length ([0-9]+)");
  const bool stated = std::regex_search(notes.text, m, re);
  sc.draft_len = stated ? std::stoi(m[1].str()) : kDefaultSpecLen;
  if (!stated) rs.assumptions.push_back("speculation length not stated: " + std::to_string(kDefaultSpecLen));
  sc.acceptance = kDefaultAcceptance;  // the run states the draft and acceptance (serve::run_scenario)
}

core::Result<bool> apply_fixed_batch(const Row& row, long long batch, RowScenario& rs) {
  auto& sc = rs.scenario;
  if (batch <= 0) return core::make_error("fixed-batch row without a batch size");
  sc.load.arrival = ArrivalKind::Offline;
  if (sc.framework == Framework::TensorRtLlm) {
    sc.scheduler = SchedulerKind::StaticBatch;
    sc.static_batch = batch;
    rs.assumptions.push_back("static batch of " + std::to_string(batch) + " identical requests (no in-flight batching)");
  }
  sc.max_num_seqs = std::max<long long>(batch, 1);
  if (!row.tp) {
    sc.tp = static_cast<int>(row.chips);
    rs.assumptions.push_back("tp = chips for a fixed-batch row without a layout");
  }
  // One batch per engine.
  sc.load.requests = batch * std::max<long long>(1, row.chips / (static_cast<long long>(sc.tp) * sc.pp));
  return true;
}

void apply_offline(const Row& row, const RowNotes& notes, RowScenario& rs) {
  auto& load = rs.scenario.load;
  load.arrival = ArrivalKind::Offline;
  const long long chips = std::max<long long>(1, row.chips);
  if (notes.mlperf) {
    // MLPerf offline runs at least 600 s, repeating the sample set as needed.
    load.requests = std::max<long long>(kOrcaSamples, kOfflineRequestsPerChip * chips);
    rs.assumptions.push_back("MLPerf offline: " + std::to_string(load.requests) +
                             " samples queued at once (the source does not record its sample count; MLPerf "
                             "requires a run of at least 600 s)");
  } else if (notes.prefill_only) {
    load.requests = kPrefillOnlyRequestsPerChip * chips;
  } else {
    const long long engines = std::max<long long>(1, row.chips / std::max<long long>(1, row.tp.value_or(1)));
    load.requests = kOfflineRequestsPerEngine * engines;
    rs.assumptions.push_back("offline: " + core::fmt_int(kOfflineRequestsPerEngine) +
                             " requests per engine queued at once (trtllm-bench style)");
  }
}

long long poisson_requests(double qps) {
  return std::max<long long>(kPoissonMinRequests, static_cast<long long>(qps * kPoissonMinSeconds));
}

/// MLPerf server rate in its fixed phrasing, "Poisson, 75 QPS".
std::optional<double> mlperf_qps(const std::string& text) {
  std::smatch m;
  static const std::regex re("poisson,\\s*([0-9][0-9,]*(?:\\.[0-9]+)?)\\s*qps");
  if (std::regex_search(text, m, re)) return number_in_notes(m[1].str());
  return std::nullopt;
}

/// MLPerf server scenario (docs/serving.md, "MLPerf server semantics"): Poisson arrivals at the
/// submitted QPS read from the notes; a row without the phrase is not guessed.
core::Result<bool> apply_mlperf_server(const RowNotes& notes, RowScenario& rs) {
  const auto qps = mlperf_qps(notes.text);
  if (!qps || *qps <= 0)
    return core::make_error("MLPerf server row: the notes do not state the submitted rate as 'Poisson, <N> QPS'");
  auto& load = rs.scenario.load;
  load.arrival = ArrivalKind::Poisson;
  load.rate_per_s = *qps;
  load.requests = poisson_requests(*qps);
  rs.assumptions.push_back("MLPerf server: Poisson arrivals at the submitted " + core::fmt_num(*qps) +
                           " QPS (from the notes), " + std::to_string(load.requests) + " requests");
  return true;
}

core::Result<bool> apply_server(const RowNotes& notes, long long concurrency, RowScenario& rs) {
  if (notes.mlperf) return apply_mlperf_server(notes, rs);
  auto& load = rs.scenario.load;
  if (auto qps = qps_in_notes(notes.text)) {
    load.arrival = ArrivalKind::Poisson;
    load.rate_per_s = *qps;
    load.requests = poisson_requests(*qps);
    rs.assumptions.push_back("Poisson arrivals at " + std::to_string(*qps).substr(0, 5) + " QPS (from the notes)");
    return true;
  }
  if (concurrency <= 0) return core::make_error("server row without a rate or a concurrency");
  load.arrival = ArrivalKind::ClosedLoop;
  load.concurrency = concurrency;
  load.output_stop_hazard = -1;  // the benchmark client's early stops: the calibration's hazard
  rs.benchmark_loop = true;  // its request count: size_benchmark_loop, from the calibration
  return true;
}

// The benchmark's load for the row's mode.
core::Result<bool> apply_load(const Row& row, const RowNotes& notes, RowScenario& rs) {
  const long long b = row.batch_or_concurrency.value_or(0);
  auto& sc = rs.scenario;
  if (row.mode == "fixed-batch") return apply_fixed_batch(row, b, rs);
  if (row.mode == "single-stream") {
    sc.load.arrival = ArrivalKind::ClosedLoop;
    sc.load.concurrency = 1;
    sc.load.requests = 2;
    sc.max_num_seqs = std::max<long long>(sc.max_num_seqs, 1);
    if (!row.tp) sc.tp = static_cast<int>(row.chips);
    return true;
  }
  if (row.mode == "offline") {
    apply_offline(row, notes, rs);
    return true;
  }
  if (row.mode == "server") return apply_server(notes, b, rs);
  return core::make_error("unknown inference mode '" + row.mode + "'");
}

/// The statistic a latency row reports, in its fixed phrasing "TTFT statistic: mean" (mean, p50
/// or median, p90, p99); nullopt when the notes do not state it.
std::optional<std::string> latency_statistic(const std::string& text, const std::string& latency) {
  if (text.find(latency + " statistic:") == std::string::npos) return std::nullopt;  // most rows: no regex
  std::smatch m;
  const std::regex re(latency + " statistic:\\s*(mean|median|p50|p90|p99)\\b");
  if (!std::regex_search(text, m, re)) return std::nullopt;
  return m[1].str() == "median" ? std::string("p50") : m[1].str();
}

/// TTFT or TPOT at the row's statistic. MLPerf server rows must state it; other rows report the
/// mean unless they state another.
core::Result<RowMetric> latency_metric(const RowNotes& notes, const std::string& mode, bool ttft) {
  const std::string name = ttft ? "ttft" : "tpot";
  const auto stat = latency_statistic(notes.text, name);
  if (!stat && notes.mlperf && mode == "server")
    return core::make_error("MLPerf server row: the notes do not state the statistic as '" +
                            std::string(ttft ? "TTFT" : "TPOT") + " statistic: mean|p50|p90|p99'");
  const std::string st = stat.value_or("mean");
  if (st == "p50") return ttft ? RowMetric::TtftP50 : RowMetric::TpotP50;
  if (st == "p90") return ttft ? RowMetric::TtftP90 : RowMetric::TpotP90;
  if (st == "p99") return ttft ? RowMetric::TtftP99 : RowMetric::TpotP99;
  return ttft ? RowMetric::TtftMean : RowMetric::TpotMean;
}

core::Result<RowMetric> metric_of(const Row& row, const RowNotes& notes) {
  const std::string& metric = row.metric;
  if (metric == "throughput_tokens_per_s") return RowMetric::OutputTokensPerS;
  if (metric == "throughput_tokens_per_s_per_chip")
    return notes.prefill_only ? RowMetric::InputTokensPerSPerChip : RowMetric::OutputTokensPerSPerChip;
  if (metric == "ttft_ms") return latency_metric(notes, row.mode, true);
  if (metric == "tpot_ms") return latency_metric(notes, row.mode, false);
  if (metric == "e2e_latency_s") return RowMetric::E2eMean;
  if (metric == "requests_per_s") return RowMetric::RequestsPerS;
  return core::make_error("metric '" + metric + "' is not an inference metric");
}

}  // namespace

/// Neuron compiles the batch it serves (static shapes): a "max-num-seqs N" the notes state is
/// the compiled batch; otherwise serve's rule applies (the closed-loop concurrency per engine).
void apply_compiled_batch(const RowNotes& notes, RowScenario& rs) {
  auto& sc = rs.scenario;
  if (!sc.framework || !serve::is_neuron(*sc.framework) || sc.max_num_seqs > 0) return;
  std::smatch m;
  static const std::regex re("max-num-seqs ([0-9]+)");
  if (!std::regex_search(notes.text, m, re)) return;
  sc.max_num_seqs = std::stoll(m[1].str());
  rs.assumptions.push_back("compiled batch " + std::to_string(sc.max_num_seqs) + " (max-num-seqs in the notes)");
}

core::Result<RowScenario> scenario_for_row(const Row& row, const hw::Catalog& catalog) {
  if (row.kind != "infer") return core::make_error("not an infer row");
  RowScenario rs;
  const hw::SystemSpec& sys = catalog.system(row.system, "system");
  RowNotes notes;
  notes.text = lower(row.notes);
  notes.mlperf = has(notes.text, "mlperf") || has(notes.text, "openorca");
  notes.prefill_only = has(notes.text, "input (prefill) tokens") || has(notes.text, "prefill-only");
  rs.scenario.system = row.system;
  rs.scenario.model = row.model_ref();
  rs.scenario.chips = row.chips;
  apply_framework(row, notes, sys, rs);
  apply_precision(row, notes, sys, rs);
  apply_layout(row, notes, rs);
  if (auto ok = apply_lengths(row, notes, rs); !ok) return core::make_error(ok.error());
  apply_speculation(notes, rs);
  if (auto ok = apply_load(row, notes, rs); !ok) return core::make_error(ok.error());
  apply_compiled_batch(notes, rs);
  auto metric = metric_of(row, notes);
  if (!metric) return core::make_error(metric.error());
  rs.metric = *metric;
  return rs;
}

double metric_value(const serve::ServeReport& rep, RowMetric m) {
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
    case RowMetric::TtftP90: return s.ttft_ms.p90;
    case RowMetric::TtftP99: return s.ttft_ms.p99;
    case RowMetric::TpotP90: return s.tpot_ms.p90;
    case RowMetric::TpotP99: return s.tpot_ms.p99;
    case RowMetric::E2eMean: return s.e2e_s.mean;
    case RowMetric::RequestsPerS: return s.requests_per_s;
  }
  return 0;
}

namespace {

/// The engines that ran, the latencies they gave and where the time of a decode step (at the mean
/// batch) and of one prompt alone went (validate --explain).
std::vector<ExplainItem> explain_serve(const serve::ServeReport& rep) {
  const auto& sim = rep.sim;
  const auto& d = rep.sample_decode_step;
  const auto& pre = rep.sample_prefill_step;
  return {{"engines", static_cast<double>(rep.engines)},
          {"tp", static_cast<double>(rep.scenario.tp)},
          {"pp", static_cast<double>(rep.scenario.pp)},
          {"ep", static_cast<double>(rep.scenario.ep)},
          {"requests", static_cast<double>(sim.requests)},
          {"mean_batch_per_engine", sim.mean_batch},
          {"kv_tokens_per_engine", static_cast<double>(rep.memory.kv_cache_tokens())},
          {"mean_kv_utilisation", sim.mean_kv_utilisation},
          {"preemptions", static_cast<double>(sim.preemptions)},
          {"ttft_mean_ms", sim.ttft_ms.mean},
          {"ttft_p99_ms", sim.ttft_ms.p99},
          {"tpot_mean_ms", sim.tpot_ms.mean},
          {"tpot_p99_ms", sim.tpot_ms.p99},
          {"output_tokens_per_s_per_chip", rep.output_tokens_per_s_per_chip},
          {"decode_step_ms", core::to_ms(d.total)},
          {"decode_linear_ms", core::to_ms(d.linear)},
          {"decode_attention_ms", core::to_ms(d.attention)},
          {"decode_comm_ms", core::to_ms(d.comm)},
          {"decode_overhead_ms", core::to_ms(d.overhead)},
          {"prefill_alone_ms", core::to_ms(pre.total)},
          {"prefill_linear_ms", core::to_ms(pre.linear)},
          {"prefill_attention_ms", core::to_ms(pre.attention)},
          {"prefill_comm_ms", core::to_ms(pre.comm)},
          {"prefill_overhead_ms", core::to_ms(pre.overhead)}};
}

}  // namespace

core::Result<serve::ServeReport> ServeRunCache::run(const serve::ServeScenario& sc, const serve::ServeEnv& env) {
  const std::string key = sc.system + "|" + sc.model + "|" + std::to_string(sc.chips) + "|" +
                          std::to_string(sc.load.in_len) + "|" + std::to_string(sc.load.out_len);
  std::promise<core::Result<serve::ServeReport>> mine;
  std::shared_future<core::Result<serve::ServeReport>> report;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& bucket = by_key_[key];
    const auto it = std::find_if(bucket.begin(), bucket.end(), [&](const Entry& e) { return e.scenario == sc; });
    if (it != bucket.end()) {
      report = it->report;
    } else {
      report = mine.get_future().share();
      bucket.push_back(Entry{sc, report});
      owner = true;
    }
  }
  if (owner) {
    try {
      mine.set_value(serve::run_scenario(sc, env));
    } catch (...) {
      mine.set_exception(std::current_exception());
    }
  }
  return report.get();
}

std::size_t ServeRunCache::runs() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t n = 0;
  for (const auto& [key, bucket] : by_key_) n += bucket.size();
  return n;
}

namespace {

/// A row whose stated prompt + output exceed the model config's context: the source ran it (a
/// deployment with a longer context, RoPE scaling), so it is predicted as stated and flagged.
void flag_beyond_context(const Row& row, long long context, Prediction& p) {
  if (context <= 0 || !row.in_len) return;
  const double tokens = *row.in_len + row.out_len.value_or(0);
  if (tokens <= static_cast<double>(context)) return;
  p.beyond_context = "prompt + output " + core::fmt_num(tokens, 6) + " tokens exceed the model config's context (" +
                     std::to_string(context) + ", max_position_embeddings)";
  p.assumptions.push_back(p.beyond_context + ": run as the source states (its deployment extended the context); "
                          "the config's limit is not applied");
}

}  // namespace

void size_benchmark_loop(const calib::Params& params, RowScenario& rs) {
  if (!rs.benchmark_loop) return;
  const calib::Parameter& per_client = params.get("serving.closed_loop.benchmark_requests_per_client");
  const double measured = params.number(per_client.key);
  if (!(measured >= 1))
    core::fail(per_client.key, "a closed-loop benchmark measures at least one request per client",
               core::fmt_num(measured), "a count of at least 1");
  const long long count = std::llround(measured);
  const long long warmup = std::max<long long>(0, std::llround(params.number("serving.closed_loop.warmup_requests_per_client")));
  auto& load = rs.scenario.load;
  load.requests = load.concurrency * (count + warmup);
  rs.assumptions.push_back("closed loop at concurrency " + std::to_string(load.concurrency) + ", " +
                           std::to_string(load.requests) + " requests: " + std::to_string(count) +
                           " measured per client after its warm-up (" + calib::as_stated(per_client) +
                           "; the source records no request count)");
}

namespace {

/// An offline run's throughput is taken over the whole run, so its length is part of the answer.
std::string offline_run_length(const serve::ServeReport& rep) {
  return "the simulated offline run lasts " + core::fmt_num(rep.sim.duration.base(), 3) +
         " s, first request to last completion; its throughput is taken over the whole run, ramp-up and drain "
         "included, so it moves with the run's length (docs/serving.md, \"An offline run's length moves its "
         "throughput\")";
}

}  // namespace

Prediction predict_infer_row(const Row& row, const serve::ServeEnv& env, long long request_cap, ServeRunCache* runs) {
  Prediction p;
  try {
    auto rs = scenario_for_row(row, *env.catalog);
    if (!rs) {
      p.status = Status::Unsupported;
      p.reason = rs.error();
      return p;
    }
    RowScenario sized = *rs;
    size_benchmark_loop(*env.calibration, sized);
    serve::ServeScenario& sc = sized.scenario;
    if (request_cap > 0 && sc.load.requests > request_cap) {
      sc.load.requests = request_cap;
      p.run_shortened = true;
    }
    auto rep = runs ? runs->run(sc, env) : serve::run_scenario(sc, env);
    if (!rep) {
      p.status = Status::Unsupported;
      p.reason = rep.error();
      return p;
    }
    p.predicted = metric_value(*rep, rs->metric);
    p.framework = rep->framework;
    p.assumptions = sized.assumptions;
    if (sc.load.arrival == serve::ArrivalKind::Offline) p.assumptions.push_back(offline_run_length(*rep));
    for (const auto& a : rep->assumptions) p.assumptions.push_back(a);
    p.explain = explain_serve(*rep);
    flag_beyond_context(row, rep->model_context, p);
  } catch (const core::InputError& e) {
    p.status = Status::Error;
    p.reason = e.diagnostics().empty() ? e.what() : e.diagnostics().front().to_string();
  }
  return p;
}

}  // namespace xpusim::validation
