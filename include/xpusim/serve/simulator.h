#pragma once
// Request-level discrete-event simulation of LLM serving. Deterministic: integer-picosecond
// time, events ordered by (time, sequence number), seeds are inputs. One StepCostModel per
// pool times each engine iteration; requests flow arrival → queue → (chunked) prefill →
// decode → done, through static batching or continuous batching with a paged KV cache
// (admission by reservation or on demand with recompute preemption), optionally split over a
// prefill pool and a decode pool with the KV cache sent over the network between them, and
// optionally with speculative decoding.

#include <initializer_list>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "xpusim/core/sim_time.h"
#include "xpusim/core/units.h"
#include "xpusim/cost/activity.h"
#include "xpusim/serve/framework.h"
#include "xpusim/serve/latency_stats.h"
#include "xpusim/serve/prefix_cache.h"
#include "xpusim/serve/step_cost.h"

namespace xpusim::serve {

/// Integer simulation time: picoseconds, the clock of the event-driven training executor too
/// (core/sim_time.h).
using core::SimTime;
using core::from_sim_time;
using core::to_sim_time;

struct Request {
  SimTime arrival = 0;
  long long in_len = 1;
  long long out_len = 1;
  /// The request's output limit (max_new_tokens): what a reserving scheduler must set aside,
  /// since the real length is unknown until the end. 0 = out_len.
  long long max_out = 0;
  /// Generated requests: the drawn length exceeded the model's context and was clipped to it.
  bool clipped = false;
  /// Trace requests: the ids of the prompt's blocks in order (the arrivals file's
  /// prefix_hashes; LoadSpec::trace_block_tokens each, the last may be partial); empty: none.
  std::vector<BlockId> prefix_blocks{};
  /// Trace requests of multi-turn sessions (the arrivals file's session_id and turn, 1 the
  /// first); -1 and 0: not part of a session.
  long long session = -1;
  long long turn = 0;
  bool operator==(const Request&) const = default;
};

/// The requests of a trace, shared and immutable: the copies of a LoadSpec (the scenario, the
/// simulation's spec, the report) hold one vector between them, so a file of 10^7 rows is held
/// once (docs/errors.md, "Limits"). Built from a vector; read like one.
class RequestTrace {
 public:
  RequestTrace() = default;
  RequestTrace(std::vector<Request> requests)  // NOLINT(google-explicit-constructor): a vector is a trace
      : requests_(std::make_shared<const std::vector<Request>>(std::move(requests))) {}
  RequestTrace(std::initializer_list<Request> requests) : RequestTrace(std::vector<Request>(requests)) {}
  const std::vector<Request>& requests() const { return requests_ ? *requests_ : no_requests(); }
  operator const std::vector<Request>&() const { return requests(); }  // NOLINT: read like a vector
  std::size_t size() const { return requests().size(); }
  bool empty() const { return requests().empty(); }
  const Request& operator[](std::size_t i) const { return requests()[i]; }
  std::vector<Request>::const_iterator begin() const { return requests().begin(); }
  std::vector<Request>::const_iterator end() const { return requests().end(); }
  bool operator==(const RequestTrace& o) const { return requests_ == o.requests_ || requests() == o.requests(); }

 private:
  static const std::vector<Request>& no_requests() {
    static const std::vector<Request> none;
    return none;
  }
  std::shared_ptr<const std::vector<Request>> requests_;
};

enum class ArrivalKind { Offline, Poisson, ClosedLoop, Trace };
std::string arrival_name(ArrivalKind k);

/// Length distribution of generated requests.
enum class LengthDist {
  Fixed,          ///< every request in_len / out_len
  OpenOrcaLike    ///< MLPerf-like: inputs and outputs log-normal with means in_len and
                  ///< out_len (spreads: LengthSpread); no cap unless the load states the data
                  ///< set's limits (docs/serving.md)
};

/// Log-space standard deviations of the OpenOrca-like length distributions
/// (data/calibration/serving.yaml, serving.lengths.*).
struct LengthSpread {
  double input_sigma = 0;
  double output_sigma = 0;
  bool operator==(const LengthSpread&) const = default;
};

struct LoadSpec {
  ArrivalKind arrival = ArrivalKind::Offline;
  double rate_per_s = 1.0;     ///< Poisson rate (requests per second)
  long long concurrency = 1;   ///< closed-loop clients (each sends its next request at once)
  /// Closed loop: the clients' first requests start spread over this many times one request's
  /// estimated end-to-end time (seeded, one client per slot), as benchmark clients that have
  /// drifted apart are; 0 = all at once, in lock-step (docs/serving.md, "Closed loops").
  double start_spread = 0;
  /// Closed loop: each client's first requests (warm-up) are left out of the latency statistics;
  /// at least one request per client is kept.
  long long warmup_per_client = 0;
  /// Fixed-length requests: the chance per generated token that an output ends before its cap
  /// (EOS, when a benchmark client does not force ignore_eos); each output's length is drawn
  /// (seeded) as min(out_len, 1 + Exp(1/h)), its KV reservation still the cap. 0: every output
  /// runs to out_len (what a user's --out-len means); < 0: the calibration's
  /// serving.closed_loop.output_stop_hazard (validation rows of a closed-loop benchmark).
  double output_stop_hazard = 0;
  long long requests = 1000;   ///< requests in the run
  long long in_len = 1024, out_len = 128;
  LengthDist lengths = LengthDist::Fixed;
  long long max_out_len = 0;   ///< max_new_tokens of every request (0 = its out_len)
  LengthSpread spread;         ///< OpenOrcaLike: the log-normal spreads (from calibration)
  /// OpenOrcaLike: the output spread the load's own data set implies (its stated mean over
  /// median), which replaces the calibration's OpenOrca value; empty: the calibration's.
  std::optional<double> stated_output_sigma;
  /// OpenOrcaLike: the data set's own length limits (0 = none), e.g. MLPerf's OpenOrca subset
  /// keeps prompts and outputs within 1,024 tokens; the drawn means still match in_len/out_len.
  long long max_drawn_in_len = 0, max_drawn_out_len = 0;
  /// The model's context (max positions; 0 = no limit): an OpenOrcaLike request is clipped so
  /// that prompt + output fit in it, and marked `clipped`.
  long long max_context = 0;
  /// in_len or out_len came from the user (flags, scenario keys): a prompt plus output beyond the
  /// context the model's config states is bad input, not a clipped request.
  bool lengths_stated = false;
  std::uint64_t seed = 1;
  RequestTrace trace;  ///< ArrivalKind::Trace: the requests (arrival order), shared by copies
  /// ArrivalKind::Trace: the tokens of each hashed block (the file's block size: 512 in the
  /// Mooncake traces).
  long long trace_block_tokens = 512;
  bool operator==(const LoadSpec&) const = default;
};

/// The requests of a load one at a time (arrival times and lengths), so that a run never holds
/// them all: the simulator draws each when it is due. Closed-loop loads get their lengths here
/// and their arrival times from the simulation. OpenOrca-like lengths are scaled so that the
/// means match the load's, fitted on the first kFitDraws draws.
class RequestStream {
 public:
  static constexpr long long kFitDraws = 1'000'000;
  explicit RequestStream(const LoadSpec& load);
  ~RequestStream();
  long long total() const { return total_; }
  bool more() const { return issued_ < total_; }
  /// The next request (call only while more()).
  Request next();

 private:
  struct State;  // the random number generators
  const LoadSpec& load_;
  long long total_ = 0, issued_ = 0;
  std::pair<double, double> scales_{1.0, 1.0};
  std::unique_ptr<State> state_;
};

/// A closed loop's client start times as fractions of the start spread: client 0 at 0, client i
/// drawn (seeded) within [i/c, (i+1)/c).
std::vector<double> client_start_fractions(const LoadSpec& load, long long clients);

/// Every request of a load (a RequestStream drained; for tests and small runs).
std::vector<Request> generate_requests(const LoadSpec& load);
/// Reads an arrivals CSV (header `arrival_s,in_len,out_len[,prefix_hashes][,session_id,turn]`,
/// rows in arrival order, a session's turns in order; src/serve/arrivals_file.cc); InputError
/// with line numbers.
struct ArrivalsFile {
  std::vector<Request> requests;
};
/// Requests of a trace that carry prefix blocks.
long long rows_with_prefix_blocks(const std::vector<Request>& trace);
/// A trace's offered rate: its requests over its span (first to last arrival); 0 when it has no span.
double trace_rate_per_s(const std::vector<Request>& trace);
ArrivalsFile read_arrivals_file(const std::string& path);
/// How a trace is cut and scaled before it runs, in this order: the rows whose arrival lies in
/// [window_from_s, window_to_s) of the file's own clock (times then counted from window_from_s),
/// every (n / sample)-th of those rows (evenly spaced by position, the first kept; 0 = all), and
/// arrival times divided by speedup (2 = the same requests at twice the rate). Deterministic.
struct TraceShaping {
  double window_from_s = 0, window_to_s = std::numeric_limits<double>::infinity();
  long long sample = 0;
  double speedup = 1;
};
/// The trace shaped; InputError when no request is left (naming the window and the file's span).
std::vector<Request> shape_trace(std::vector<Request> trace, const TraceShaping& shaping, const std::string& path);

/// A trace's prefix blocks against its lengths: a row that carries ids carries ceil(in_len /
/// load.trace_block_tokens) of them (the last block may be partial); InputError naming the
/// first such rows that do not (their number in the file's requests) and the block size.
void check_prefix_blocks(const std::string& path, const LoadSpec& load);

/// Compiled static shapes (Neuron; docs/serving.md "Static shapes"). A prompt runs the
/// context-encoding graph of the smallest bucket that holds it (padded), and a decode step runs
/// the token-generation graph for the whole compiled batch over the bucket that holds its
/// context. Buckets: 2^i from min_bucket up to 2^round(log2(max_len)) exclusive, then max_len
/// (NxD Inference's generate_buckets); without a compiled length, the next power of two.
struct StaticShapes {
  long long min_bucket = 0;  ///< 0 = dynamic shapes (every other stack)
  long long max_len = 0;     ///< compiled sequence length (0 = not stated)
  bool on() const { return min_bucket > 0; }
  /// The bucket a sequence of `len` tokens runs in (len itself with dynamic shapes, or beyond
  /// the compiled length).
  long long bucket(long long len) const;
};

/// A whole prompt of `tokens` added to a step as the engine runs it: padded to its bucket with
/// static shapes; `key_cap` is sparse attention's top-k (0 = none).
void add_whole_prompt(const StaticShapes& shapes, long long tokens, long long key_cap, StepWork& w);
/// A decode step as the compiled graph runs it: with static shapes every line of the compiled
/// batch attends over the bucket of the batch's (mean) context; unchanged otherwise.
StepWork compiled_decode(const StaticShapes& shapes, long long compiled_batch, StepWork w);

struct SchedulerSpec {
  SchedulerKind kind = SchedulerKind::DecodePriority;
  KvPolicy kv_policy = KvPolicy::Reserve;
  bool chunked_prefill = true;
  long long max_num_seqs = 256;        ///< running sequences per engine
  long long max_batched_tokens = 8192; ///< tokens per step per engine
  long long static_batch = 0;          ///< StaticBatch: batch size (0 = max_num_seqs)
  long long block_size = 32;           ///< KV page in tokens
  /// OnDemand admission also leaves room for this share of the remaining output limit of every
  /// running sequence and of the request itself (SGLang's new_token_ratio): without it a
  /// prefill-first scheduler re-admits the sequence it just preempted, step after step.
  double new_token_ratio = 0;
  /// Overlap (schedule-ahead) scheduler: the host forms step n+1 when step n starts, so a
  /// request queued while step n runs joins step n+2 at the earliest (an idle engine admits at
  /// once). TensorRT-LLM and SGLang default to it (docs/serving.md, "Saturation").
  bool schedule_ahead = false;
  /// Prompts per step (0 = any number): a compiled context-encoding graph of batch 1 (NxDI
  /// with continuous batching) runs one prompt per step.
  long long max_prefill_seqs = 0;
  /// Tokens of KV capacity per engine (0 = from memory); tests set it to pin admission.
  long long kv_tokens_override = 0;
  /// Prefix caching (docs/serving.md, "Prefix caching"): a prompt's leading blocks that an
  /// earlier prompt on the same engine already prefilled are not prefilled again (its attention
  /// still spans them). Needs requests with prefix blocks (a trace's prefix_hashes).
  bool prefix_caching = false;
  /// The cache's capacity per engine in tokens (0 = the engine's KV cache: cached blocks live in
  /// what the running sequences leave free), evicted least recently used first.
  long long prefix_cache_tokens = 0;
  /// KV offload to host memory (docs/serving.md, "KV offload to host memory"): blocks the
  /// engine's prefix cache evicts move to a host tier of this many tokens per engine (0 = none,
  /// they are dropped), evicted least recently used first. A prompt's leading blocks found there
  /// are loaded back instead of prefilled, at host_load_seconds_per_token each.
  long long host_cache_tokens = 0;
  /// Time to load one token's KV of every layer back to each chip of the engine (the chips load
  /// their shards in parallel over their own host links); loads run before the step's compute.
  double host_load_seconds_per_token = 0;
  /// KV offload to local SSD: the tier below host memory (below the prefix cache when there is no
  /// host tier), which takes the blocks the tier above evicts; a hit loads at
  /// ssd_load_seconds_per_token (the node's NVMe drives shared by its chips).
  long long ssd_cache_tokens = 0;
  double ssd_load_seconds_per_token = 0;
  /// KV offload to a remote pool shared by every engine (0 = none): every finished prompt writes
  /// its blocks to it; a run of blocks no local tier holds continues there and loads over the
  /// scale-out network, one start-up latency per request plus the per-token time.
  long long remote_cache_tokens = 0;
  double remote_load_seconds_per_token = 0, remote_load_latency_s = 0;
  /// The offload tiers' loads run layer by layer beside the step's compute, over the model's
  /// layers: the step takes max(compute, load) + min(compute, load) / layers, not their sum.
  bool layerwise_kv_load = false;
  /// Compiled static shapes; the compiled decode batch is batch_size().
  StaticShapes static_shapes;
  /// Sequences an engine batches: static_batch under StaticBatch when set, else max_num_seqs.
  long long batch_size() const {
    return kind == SchedulerKind::StaticBatch && static_batch > 0 ? static_batch : max_num_seqs;
  }
};

struct SpecDecodeSpec {
  int draft_len = 0;           ///< 0 = off; tokens drafted per step
  double acceptance = 0.7;     ///< per-token acceptance probability
  /// Cost of one draft-model step relative to the target's decode step at the same batch
  /// (0 when the draft shares the target's forward: Medusa/EAGLE heads). Set from a draft
  /// model by the caller (draft_step_cost) or left 0.
  const StepCostModel* draft = nullptr;  ///< draft model engine (optional)
  /// Expected tokens emitted per verification step: (1 − α^(k+1)) / (1 − α).
  double tokens_per_step() const;
  /// Tokens one decoding sequence runs per step: 1, or k + 1 when verifying k drafted tokens.
  long long verified_tokens() const { return draft_len > 0 ? draft_len + 1 : 1; }
  /// Recurrent states one running sequence holds: its own, and under speculative decoding the
  /// state after each verified token as well (the rollback points).
  long long states_per_sequence() const { return draft_len > 0 ? verified_tokens() + 1 : 1; }
};

/// What the serving timeline (SimResult::trace) records; off by default. Bounded so that a
/// long run does not produce gigabytes: the first `max_steps` engine steps and the first
/// `max_requests` requests (by request index).
struct TraceSpec {
  bool enabled = false;
  long long max_steps = 200000;
  long long max_requests = 1000;
};

/// One engine step in the timeline.
struct StepRecord {
  int engine = 0;
  int pool = 0;                 ///< 0 colocated / prefill pool, 1 decode pool
  SimTime start = 0, end = 0;
  long long decode_seqs = 0;    ///< sequences decoding in the step
  long long prefill_tokens = 0; ///< prompt tokens in the step (all chunks)
  long long prefill_chunks = 0; ///< prompts (or chunks of them) in the step
  std::string kind() const;     ///< "prefill", "decode" or "mixed"
};

/// One request's phases in the timeline: queued [arrival, prefill_start), prefill
/// [prefill_start, first_token), decode [first_token, finish). Preempted requests keep their
/// first admission as prefill_start.
struct RequestRecord {
  int id = 0;
  int engine = 0;               ///< the engine that prefilled it
  SimTime arrival = 0, prefill_start = 0, first_token = 0, finish = 0;
  long long in_len = 0, out_len = 0;
};

struct ServeTrace {
  std::vector<StepRecord> steps;
  std::vector<RequestRecord> requests;
  long long steps_total = 0;     ///< steps in the run (steps.size() may be fewer)
  long long requests_total = 0;  ///< requests in the run
};

/// One pool of identical engines.
struct PoolSpec {
  const StepCostModel* cost = nullptr;
  int engines = 1;
};

struct SimSpec {
  PoolSpec pool;               ///< colocated engines (or the prefill pool when disaggregated)
  bool disaggregated = false;
  PoolSpec decode_pool;        ///< disaggregated: the decode engines
  core::Seconds kv_transfer_per_token;  ///< disaggregated: KV send time per prompt token
  core::Seconds kv_transfer_latency;    ///< disaggregated: fixed start-up per transfer
  core::Bytes kv_transfer_scale_up_per_token;   ///< disaggregated: bytes per prompt token per chip
  core::Bytes kv_transfer_scale_out_per_token;  ///< (scale-up and scale-out links)
  /// Disaggregated, models with recurrent layers: each request's state is sent too, whatever its
  /// length (send time and bytes per chip on the two kinds of link).
  core::Seconds kv_transfer_per_sequence;
  core::Bytes kv_transfer_scale_up_per_sequence, kv_transfer_scale_out_per_sequence;
  SchedulerSpec scheduler;
  SpecDecodeSpec spec;
  LoadSpec load;
  core::Seconds timeout = core::seconds(0);  ///< endpoint timeout (0 = none) for the count
  /// Goodput's SLOs: requests with TTFT ≤ ttft_slo and TPOT ≤ tpot_slo count (0 = no SLO).
  core::Seconds ttft_slo = core::seconds(0), tpot_slo = core::seconds(0);
  int timeline_samples = 200;  ///< samples of KV use and batch size over time
  TraceSpec trace;             ///< the serving timeline (off by default)
  /// Every step's end goes through the event queue, quiet decode steps too (they are otherwise
  /// run back to back, their runs timed from a line; docs/serving.md "Speed"): the reference
  /// run the tests compare with.
  bool queue_every_step = false;
};

struct TimelinePoint {
  double time_s = 0;
  double kv_utilisation = 0;   ///< fraction of KV capacity in use (mean over engines)
  double batch = 0;            ///< running sequences per engine (mean over engines)
};

struct SimResult {
  long long requests = 0;           ///< completed
  long long preemptions = 0;
  long long steps = 0;
  /// Of `steps`, the quiet decode steps timed from the line through their run's first and last
  /// step (the step cost is affine in the context there) rather than costed one by one.
  long long interpolated_steps = 0;
  long long input_tokens = 0, output_tokens = 0;
  core::Seconds duration;           ///< first arrival to last completion
  core::Seconds busy_time;          ///< Σ over engines of time spent in steps
  /// Σ over engines of the activity of one chip of the engine in each of its steps (the
  /// engine's chips do the same work): FLOPs in the math dtype, HBM bytes, link bytes
  /// (including disaggregated KV transfers). cost/ turns it into energy.
  cost::Activity activity;
  /// The same per pool (0: colocated or prefill, 1: decode), for pools of different chips.
  cost::Activity pool_activity[2];
  core::Seconds pool_busy_time[2];  ///< Σ over the pool's engines of time spent in steps
  long long kv_transfers = 0;       ///< disaggregated: KV caches sent prefill → decode
  double kv_transfer_tokens = 0;    ///< prompt tokens whose KV was sent
  core::Seconds kv_transfer_time;   ///< Σ over transfers of the send time
  long long clipped_requests = 0;   ///< requests clipped to the model's context
  /// Prefix caching: the requests' prefix blocks against their engines' caches (each request's
  /// first admission) and the prompt tokens not prefilled for it.
  PrefixTally prefix;
  /// Closed loop: the span its clients' first requests started over (0: all at once) and the
  /// warm-up requests left out of the latency statistics.
  core::Seconds client_start_span;
  long long warmup_requests = 0;
  /// Throughput. Open-loop Poisson runs (≥ 100 requests): completions between the arrival of
  /// the 10th-percentile request and the last arrival over that window (steady state, no
  /// ramp-up or drain); otherwise completions over `duration`.
  double requests_per_s = 0, output_tokens_per_s = 0, input_tokens_per_s = 0;
  /// The rate the drawn arrivals actually offered over the same window (a finite Poisson
  /// sample's rate differs from the nominal one); 0 for offline and closed-loop runs.
  double offered_requests_per_s = 0;
  Percentiles ttft_ms, tpot_ms, itl_ms, e2e_s;  ///< TPOT/ITL over requests with out_len > 1
  double mean_batch = 0;            ///< time-weighted running sequences per engine
  double mean_kv_utilisation = 0;   ///< time-weighted
  double mean_in_system = 0;        ///< time-average requests in the system (Little's L)
  long long timed_out = 0;          ///< requests with end-to-end latency above the timeout
  long long met_slos = 0;           ///< requests within SimSpec::ttft_slo and tpot_slo
  std::vector<TimelinePoint> timeline;
  /// Per-request figures in completion order (seconds), for the CDF charts and tests: kept
  /// for runs of up to LatencyStats::kExactValues requests, empty beyond (the percentiles
  /// above then come from LatencyStats' histogram).
  std::vector<double> ttft_each_s, tpot_each_s, e2e_each_s;
  ServeTrace trace;                 ///< SimSpec::trace.enabled: the timeline
};

/// Runs the simulation. The caller guarantees the StepCostModels outlive the call.
SimResult simulate(const SimSpec& spec);

/// Chrome trace-event JSON of a result's timeline (opens in Perfetto): one track per engine
/// with an event per step (args: step kind, decode sequences, prefill tokens and chunks), and
/// one track per recorded request with its queue, prefill and decode phases.
std::string chrome_trace_json(const SimResult& r);

/// Requests per second that met both SLOs of the run (SimSpec::ttft_slo and tpot_slo).
double goodput(const SimResult& r);

}  // namespace xpusim::serve
