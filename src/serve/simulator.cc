#include "xpusim/serve/simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <span>

#include "xpusim/core/check.h"
#include "xpusim/core/format.h"

namespace xpusim::serve {

double SpecDecodeSpec::tokens_per_step() const {
  if (draft_len <= 0) return 1.0;
  const double a = std::clamp(acceptance, 0.0, 0.999999);
  return (1.0 - std::pow(a, draft_len + 1)) / (1.0 - a);
}

double goodput(const SimResult& r) {
  if (r.duration.base() <= 0) return 0;
  return static_cast<double>(r.met_slos) / r.duration.base();
}

namespace {

/// The latest event time a run may reach: 2^62 ps (about 53 days), so that adding any step
/// time to it stays within int64.
constexpr SimTime kClockLimit = static_cast<SimTime>(core::kMaxSimTimePs);

struct ReqState {
  SimTime arrival = 0, first = -1, finish = -1;
  SimTime prefill_start = -1;  ///< first admission to a prefill (the timeline's queue end)
  SimTime queued_at = 0;       ///< when it joined its engine's queue (-1: preempted, re-admit at once)
  long long in_len = 1, out_len = 1;
  long long max_out = 1;     ///< output limit the reserving scheduler sets aside
  long long prompt = 1;      ///< tokens to prefill (prompt + regenerated tokens after preemption)
  long long generated = 0;   ///< output tokens produced so far (incl. the first)
  long long reserved = 0;    ///< KV tokens reserved (Reserve policy)
  long long dec_start = 0;   ///< engine decode-step counter when it joined decode
  long long gen_at_start = 0;
  double ctx_at_start = 0;
  int engine = -1;
  int client = -1;           ///< closed loop: the client that sent it
  int stamp = 0;             ///< invalidates stale heap entries after preemption
  bool prefilled = false;    ///< disaggregated: KV arrived, decode only
  bool released = false;     ///< finished and no longer referenced (a static batch keeps its own)
  bool looked_up = false;    ///< its prefix blocks were counted against a cache (once per request)
  long long host_tokens = 0;  ///< prompt tokens found in the host tier, to load before its first chunk
  long long ssd_tokens = 0;   ///< prompt tokens found in the local-SSD tier, likewise
  long long remote_tokens = 0;  ///< prompt tokens found in the remote pool, likewise
  std::vector<BlockId> blocks;  ///< the prompt's prefix blocks (a trace's), empty without
};

struct PrefillJob { int req; long long done; };
struct Chunk { int req; long long tokens; };

/// A step's time and what it charges the chips: the served model's step and its draft's steps.
struct StepCharge {
  double seconds = 0;
  StepCost step, draft;
  double draft_steps = 0;
};

struct HeapItem {
  long long finish_step;
  long long order;
  int req;
  int stamp;
  bool operator>(const HeapItem& o) const {
    return finish_step != o.finish_step ? finish_step > o.finish_step : order > o.order;
  }
};

struct Engine {
  int pool = 0;
  const StepCostModel* cost = nullptr;
  long long kv_cap = 0;
  long long state_tokens = 0;  ///< cache units each sequence's recurrent state takes (else 0)
  long long token_units = 1;   ///< cache units a token of context takes (0 without attention)
  std::deque<int> waiting;
  std::vector<PrefillJob> prefilling;
  long long n_dec = 0;
  double ctx_sum = 0;
  double dec_span = 0;  ///< Σ over decoding sequences of prompt + output limit (their final context)
  long long dec_steps = 0;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<HeapItem>> heap;
  std::vector<std::pair<int, int>> dec_stack;  // (req, stamp) in admission order
  long long reserved = 0;
  bool busy = false;
  // Current step.
  std::vector<Chunk> chunks;
  bool step_decodes = false;
  SimTime step_start = 0;
  /// Requests queued after this time wait for a later step (schedule-ahead: the start of the
  /// step that just ended, when the host formed the one starting now).
  SimTime cutoff = 0;
  // Static batching.
  std::vector<int> static_batch;
  long long static_step = -1;  // -1: prefill pending; k ≥ 0: decode steps done
  long long static_len = 0;
  long long outstanding = 0;   // waiting + running
  PrefixCache prefix;          // the prompts' blocks this engine prefilled (prefix caching)
  PrefixCache host;            // blocks the prefix cache evicted, kept in host memory (KV offload)
  PrefixCache ssd;             // blocks the tier above evicted, kept on local NVMe (KV offload)
};

enum class EvKind { StepDone = 0, KvArrive = 1, Arrival = 2 };
struct Event {
  SimTime t;
  long long seq;
  EvKind kind;
  int id;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Sim {
 public:
  explicit Sim(const SimSpec& s) : s_(s), a_(s.spec.tokens_per_step()), stream_(s.load) {}
  SimResult run();

 private:
  // Set-up and the requests' lifetime: drawn from the stream when due, retired when done.
  int materialize();
  void set_window();
  void add_pool(const PoolSpec& p, int pool);
  void start_arrivals();
  void start_clients();
  double one_request_seconds() const;
  void top_up_offline();
  void retire();
  void event_loop();
  void handle(const Event& ev);
  // Requests and engines.
  void arrive(int req, SimTime t);
  int route(int pool) const;
  void try_start(int e, SimTime t, bool after_step = false);
  bool quiet_step(const Engine& en, SimTime end) const;
  SimTime next_event_time() const;
  void enqueue(int e, int req, SimTime t);
  bool form_continuous(Engine& en);
  bool admissible(const Engine& en, bool has_work) const;
  long long continue_prefills(Engine& en, long long budget);
  void admit_waiting(Engine& en, long long budget, bool decode_pool);
  std::span<const BlockId> shared_blocks(const ReqState& q) const;
  long long cached_tokens(Engine& en, ReqState& q, bool count);
  void order_offload_tiers();
  double tier_load_seconds(const Engine& en);
  double with_tier_loads(const Engine& en, double compute);
  void cache_prompt(Engine& en, const ReqState& q);
  bool form_static(Engine& en);
  StepWork static_step_work(const Engine& en) const;
  StepWork continuous_step_work(const Engine& en) const;
  StepCharge charge(const Engine& en, const StepWork& w) const;
  double step_seconds(const Engine& en, const StepWork& w);
  SimTime skip_quiet_steps(int e, SimTime t);
  bool kv_grows_past_cap(const Engine& en) const;
  bool decodes_alone(const Engine& en) const;
  void record_step(int e, const StepWork& w, SimTime t, SimTime dt);
  void step_done(int e, SimTime t);
  void static_step_done(Engine& en, SimTime t);
  void count_emitted(const Engine& en, SimTime t);
  void finish_decodes(Engine& en, SimTime t);
  void finish_prefills(Engine& en, SimTime t);
  void finish(int req, SimTime t);
  void join_decode(Engine& en, int req);
  bool kv_admits(const Engine& en, const ReqState& r) const;
  void preempt_for_growth(Engine& en);
  void push(SimTime t, EvKind k, int id) {
    if (t > kClockLimit) clock_overrun(t);
    ev_.push(Event{t, seq_++, k, id});
  }
  [[noreturn]] static void clock_overrun(SimTime t);
  void advance_clock(SimTime t);
  // Results.
  void add_activity(const StepCost& c, core::Dtype math, double times, int pool);
  void summarise();
  Percentiles ttft_ms() const;
  long long pool_engines(int pool) const {
    return std::count_if(eng_.begin(), eng_.end(), [pool](const Engine& en) { return en.pool == pool; });
  }
  void record_latency(const ReqState& q, SimTime t);
  void record_request(int r, const ReqState& q);
  double running(const Engine& en) const {
    return static_cast<double>(en.n_dec + static_cast<long long>(en.prefilling.size()) +
                               static_cast<long long>(en.static_batch.size()));
  }
  double kv_used(const Engine& en) const;
  double outputs_left(const Engine& en) const;
  bool is_static() const { return s_.scheduler.kind == SchedulerKind::StaticBatch && !s_.disaggregated; }
  long long decode_q() const { return s_.spec.verified_tokens(); }
  /// Sparse attention's top-k of the served model (0 = dense attention): caps a prompt's pairs.
  long long key_cap() const { return s_.pool.cost ? s_.pool.cost->model().dsa.topk : 0; }
  ReqState& req(int r) { return req_[static_cast<size_t>(r - base_)]; }
  const ReqState& req(int r) const { return req_[static_cast<size_t>(r - base_)]; }
  /// Retired requests (finished, released and dropped from memory) are done too.
  bool finished(int r) const { return r < base_ || req(r).finish >= 0; }
  Engine& engine(int e) { return eng_[static_cast<size_t>(e)]; }

  const SimSpec& s_;
  double a_;
  RequestStream stream_;
  std::deque<ReqState> req_;       ///< requests base_, base_ + 1, … not yet retired
  long long base_ = 0;
  long long offline_next_ = 0;     ///< offline: requests handed to the engines so far
  LatencyStats ttft_s_, tpot_ms_, e2e_s_;
  std::vector<Engine> eng_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> ev_;
  long long seq_ = 0;
  long long order_ = 0;
  SimResult res_;
  SimTime now_ = 0, first_arrival_ = -1, last_finish_ = 0;
  SimTime last_arrival_ = -1;  ///< open loops: the latest arrival so far
  long long in_system_ = 0;
  double area_in_system_ = 0;
  double area_batch_ = 0, area_kv_ = 0;
  long long issued_ = 0, total_ = 0;
  std::vector<long long> client_done_;  ///< closed loop: requests each client has finished
  long long warmup_ = 0;                ///< closed loop: requests per client left out as warm-up
  std::vector<BlockId> evicted_;        ///< scratch: blocks the prefix cache just evicted (to the host tier)
  std::vector<BlockId> evicted_host_;   ///< scratch: blocks the host tier just evicted (to the SSD)
  /// KV offload to a remote pool (Mooncake Store, LMCache's remote backend): one cache shared by
  /// every engine, which every finished prompt writes its blocks to.
  PrefixCache remote_;
  /// The offload tiers (host memory, local SSD, remote pool) in lookup order: fastest first.
  enum OffloadTier : size_t { kHostTier, kSsdTier, kRemoteTier, kOffloadTiers };
  std::array<size_t, kOffloadTiers> offload_order_ = {kHostTier, kSsdTier, kRemoteTier};
  bool arrivals_done_ = false;
  int next_arrival_ = -1;  ///< open loops: the next arrival, drawn but not yet arrived (-1: none)
  long long stride_ = 1, sample_count_ = 0;
  // Steady-state window of an open-loop (Poisson) run: from the arrival of the 10th-percentile
  // request to the last arrival; completions inside it measure the sustained rate without the
  // start-up ramp and the drain after the last arrival.
  SimTime win_lo_ = 0, win_hi_ = -1;  ///< kNever until the request that sets it is drawn
  long long win_req_ = 0, win_in_ = 0;
  double emitted_ = 0;             ///< output tokens emitted so far (all engines)
  SimTime mark_lo_ = -1, mark_hi_ = -1;
  double emitted_lo_ = 0, emitted_hi_ = 0;
  void mark(SimTime t) {
    if (win_hi_ <= win_lo_) return;
    if (mark_lo_ < 0 && t >= win_lo_) { mark_lo_ = t; emitted_lo_ = emitted_; }
    if (mark_hi_ < 0 && t >= win_hi_) { mark_hi_ = t; emitted_hi_ = emitted_; }
  }
};

constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

void Sim::clock_overrun(SimTime t) {
  core::fail("serve", "the simulated run outlasts the simulation clock", core::fmt_num(core::sim_seconds(t) / core::kSecondsPerDay) + " days",
             "at most about 53 days of simulated time",
             "the system cannot drain this load: fewer requests, a lower rate, or more chips");
}

double Sim::kv_used(const Engine& en) const {
  if (s_.scheduler.kv_policy == KvPolicy::Reserve) return static_cast<double>(en.reserved);
  double u = en.ctx_sum;
  for (const auto& p : en.prefilling) u += static_cast<double>(p.done);
  u *= static_cast<double>(en.token_units);
  // A recurrent model's running sequences each hold their state, whatever their length.
  if (en.state_tokens > 0) u += static_cast<double>(en.state_tokens) * running(en);
  return u;
}

// Output tokens the running sequences may still produce (up to their limits): the decoding ones'
// final contexts less their current ones, and the prompts being prefilled.
double Sim::outputs_left(const Engine& en) const {
  if (s_.scheduler.new_token_ratio <= 0) return 0;
  double left = std::max(0.0, en.dec_span - en.ctx_sum);
  for (const auto& p : en.prefilling) left += static_cast<double>(req(p.req).max_out - req(p.req).generated);
  return left;
}

void Sim::advance_clock(SimTime t) {
  if (t > now_) {
    area_in_system_ += static_cast<double>(in_system_) * static_cast<double>(t - now_) * core::kSecondsPerPicosecond;
    now_ = t;
  }
}

int Sim::route(int pool) const {
  int best = -1;
  for (size_t i = 0; i < eng_.size(); ++i) {
    if (eng_[i].pool != pool) continue;
    if (best < 0 || eng_[i].outstanding < eng_[static_cast<size_t>(best)].outstanding)
      best = static_cast<int>(i);
  }
  return best;
}

void Sim::arrive(int r, SimTime t) {
  if (first_arrival_ < 0) first_arrival_ = t;
  last_arrival_ = t;
  ++in_system_;
  const int e = route(0);
  req(r).engine = e;
  enqueue(e, r, t);
}

void Sim::enqueue(int e, int r, SimTime t) {
  auto& en = eng_[static_cast<size_t>(e)];
  req(r).queued_at = t;
  en.waiting.push_back(r);
  ++en.outstanding;
  try_start(e, t);
}

bool Sim::kv_admits(const Engine& en, const ReqState& r) const {
  const long long blk = std::max<long long>(1, s_.scheduler.block_size);
  const long long cap = en.kv_cap;
  if (s_.scheduler.kv_policy == KvPolicy::Reserve) {
    const long long need =
        en.token_units * (((r.prompt + (r.max_out - r.generated) + blk - 1) / blk) * blk) + en.state_tokens;
    // A request larger than the whole cache is admitted alone (it would be rejected by a real
    // engine; running it keeps the simulation going and shows up as KV utilisation > 1).
    return en.reserved + need <= cap || (en.reserved == 0);
  }
  if (running(en) == 0) return true;
  const double tu = static_cast<double>(en.token_units);
  const double b = static_cast<double>(blk);
  const double newcomer = tu * static_cast<double>(r.prompt + blk) + static_cast<double>(en.state_tokens);
  const double used = kv_used(en) + tu * b * running(en) +
                      tu * s_.scheduler.new_token_ratio * (outputs_left(en) + static_cast<double>(r.max_out - r.generated));
  // Never admit what the next decode step would have to preempt (preempt_for_growth's test with
  // the newcomer running): else a scheduler that admits optimistically (SGLang's new-token
  // ratio) re-admits the request it has just preempted, every step, and decodes nothing.
  const double next_step = kv_used(en) + tu * (a_ * static_cast<double>(en.n_dec + 1) + b * (running(en) + 1.0));
  return used + newcomer <= static_cast<double>(cap) && next_step + newcomer <= static_cast<double>(cap);
}

void Sim::join_decode(Engine& en, int r) {
  auto& q = req(r);
  const long long rem = q.out_len - q.generated;
  q.dec_start = en.dec_steps;
  q.gen_at_start = q.generated;
  q.ctx_at_start = static_cast<double>(q.prompt + 1);
  const long long steps = static_cast<long long>(std::ceil(static_cast<double>(rem) / a_ - 1e-9));
  en.heap.push(HeapItem{en.dec_steps + std::max<long long>(1, steps), order_++, r, q.stamp});
  en.dec_stack.emplace_back(r, q.stamp);
  ++en.n_dec;
  en.ctx_sum += q.ctx_at_start;
  en.dec_span += static_cast<double>(q.in_len + q.max_out);
}

void Sim::preempt_for_growth(Engine& en) {
  if (s_.scheduler.kv_policy != KvPolicy::OnDemand) return;
  while (kv_grows_past_cap(en)) {
    // Newest running decode sequence goes back to the front of the queue (recompute).
    while (!en.dec_stack.empty()) {
      auto [r, st] = en.dec_stack.back();
      en.dec_stack.pop_back();
      if (finished(r)) continue;
      auto& q = req(r);
      if (q.stamp != st) continue;
      const double k = static_cast<double>(en.dec_steps - q.dec_start);
      en.ctx_sum -= q.ctx_at_start + k * a_;
      en.dec_span -= static_cast<double>(q.in_len + q.max_out);
      --en.n_dec;
      q.generated = std::min(q.out_len, q.gen_at_start + static_cast<long long>(std::floor(k * a_)));
      q.prompt = q.in_len + q.generated;
      q.queued_at = -1;
      ++q.stamp;
      en.waiting.push_front(r);
      ++res_.preemptions;
      break;
    }
  }
}

bool Sim::form_static(Engine& en) {
  en.chunks.clear();
  en.step_decodes = false;
  if (en.static_batch.empty()) {
    long long b = s_.scheduler.batch_size();
    // Wait for a full batch unless no more requests can arrive.
    if (static_cast<long long>(en.waiting.size()) < b && !arrivals_done_) return false;
    if (en.waiting.empty()) return false;
    long long need = 0;
    while (!en.waiting.empty() && static_cast<long long>(en.static_batch.size()) < b) {
      const auto& q = req(en.waiting.front());
      const long long n = en.token_units * (q.in_len + q.out_len) + en.state_tokens;
      if (!en.static_batch.empty() && need + n > en.kv_cap) break;  // KV caps the batch
      need += n;
      en.static_batch.push_back(en.waiting.front());
      en.waiting.pop_front();
    }
    en.static_step = -1;
    en.static_len = 0;
    for (int r : en.static_batch)
      en.static_len = std::max(en.static_len, req(r).out_len);
    en.reserved = need;
  }
  return true;
}

// Schedule-ahead: a request queued after the cut-off waits for the next step, unless this step
// would otherwise run nothing (an idle engine admits at once).
bool Sim::admissible(const Engine& en, bool has_work) const {
  const auto& sc = s_.scheduler;
  if (en.waiting.empty()) return false;
  if (running(en) >= static_cast<double>(sc.max_num_seqs)) return false;
  const auto& head = req(en.waiting.front());
  if (sc.schedule_ahead && has_work && head.queued_at > en.cutoff) return false;
  if (sc.max_prefill_seqs > 0 && !head.prefilled && en.pool == 0 &&
      static_cast<long long>(en.chunks.size()) >= sc.max_prefill_seqs)
    return false;
  return kv_admits(en, head);
}

// The running chunked prefills take their next chunks; returns the token budget left.
long long Sim::continue_prefills(Engine& en, long long budget) {
  const auto& sc = s_.scheduler;
  for (auto& p : en.prefilling) {
    if (budget <= 0) break;
    const long long left = req(p.req).prompt - p.done;
    long long c = sc.chunked_prefill ? std::min(left, budget) : left;
    if (!sc.chunked_prefill && c > budget && !en.chunks.empty()) continue;
    en.chunks.push_back(Chunk{p.req, c});
    budget -= c;
  }
  return budget;
}

// Waiting requests join while the budget, the batch and the KV cache allow: a prefilled one (or
// any, in a decode pool) straight into decode, others as a prompt chunk.
void Sim::admit_waiting(Engine& en, long long budget, bool decode_pool) {
  const auto& sc = s_.scheduler;
  while (admissible(en, en.step_decodes || !en.chunks.empty()) && (budget > 0 || decode_pool)) {
    const int r = en.waiting.front();
    auto& rq = req(r);
    if (decode_pool || rq.prefilled) {
      en.waiting.pop_front();
      if (sc.kv_policy == KvPolicy::Reserve) {
        rq.reserved = en.token_units * (rq.prompt + rq.max_out - rq.generated) + en.state_tokens;
        en.reserved += rq.reserved;
      }
      join_decode(en, r);
      continue;
    }
    const long long cached = cached_tokens(en, rq, false);
    const long long uncached = rq.prompt - cached;
    long long c = sc.chunked_prefill ? std::min(uncached, budget) : uncached;
    // Without chunking a prompt runs whole: the first prompt of a step may exceed what the
    // decodes leave of the budget (rather than wait for the running batch to drain).
    if (!sc.chunked_prefill && c > budget && !en.chunks.empty()) break;
    en.waiting.pop_front();
    cached_tokens(en, rq, true);
    if (sc.kv_policy == KvPolicy::Reserve) {
      const long long blk = std::max<long long>(1, sc.block_size);
      rq.reserved = en.token_units * (((rq.prompt + rq.max_out - rq.generated + blk - 1) / blk) * blk) + en.state_tokens;
      en.reserved += rq.reserved;
    }
    en.prefilling.push_back(PrefillJob{r, cached});
    en.chunks.push_back(Chunk{r, c});
    budget -= c;
  }
}

// The blocks of a prompt a cache may share: its whole blocks (a partial last block is not shared).
std::span<const BlockId> Sim::shared_blocks(const ReqState& q) const {
  const long long whole = q.in_len / std::max<long long>(1, s_.load.trace_block_tokens);
  return std::span<const BlockId>(q.blocks).first(static_cast<size_t>(std::min<long long>(whole, static_cast<long long>(q.blocks.size()))));
}

// Prompt tokens the engine's prefix cache already holds: its leading cached blocks, less the
// last token, which is always computed (its logits give the first output token). With `count`
// the blocks become the most recently used and the request's first lookup is tallied.
long long Sim::cached_tokens(Engine& en, ReqState& q, bool count) {
  if (q.blocks.empty() || en.prefix.capacity() <= 0) return 0;
  const std::span<const BlockId> blocks = shared_blocks(q);
  auto run_in = [&](PrefixCache& tier, std::span<const BlockId> from) -> long long {
    return tier.capacity() <= 0 || from.empty() ? 0 : count ? tier.match(from) : tier.held(from);
  };
  const long long hit = run_in(en.prefix, blocks);
  // The run continues in the offload tiers, the fastest to load from first (offload_order_).
  const std::array<PrefixCache*, kOffloadTiers> tiers = {&en.host, &en.ssd, &remote_};
  std::array<long long, kOffloadTiers> tier_hit{};
  long long found = hit;
  for (const size_t i : offload_order_) {
    tier_hit[i] = run_in(*tiers[i], blocks.subspan(static_cast<size_t>(found)));
    found += tier_hit[i];
  }
  const long long block_tokens = s_.load.trace_block_tokens;
  const long long tokens = std::min(found * block_tokens, q.prompt - 1);
  if (count && !q.looked_up) {
    q.looked_up = true;
    // The last token is computed: it comes off the last tier that served any.
    const std::array<long long*, kOffloadTiers> loaded = {&q.host_tokens, &q.ssd_tokens, &q.remote_tokens};
    long long left = std::max<long long>(0, tokens - hit * block_tokens);
    for (const size_t i : offload_order_) {
      *loaded[i] = std::min(left, tier_hit[i] * block_tokens);
      left -= *loaded[i];
    }
    res_.prefix.count(static_cast<long long>(q.blocks.size()), found, q.in_len, std::min(tokens, q.in_len));
    res_.prefix.blocks_hit_host += tier_hit[kHostTier];
    res_.prefix.tokens_hit_host += q.host_tokens;
    res_.prefix.blocks_hit_ssd += tier_hit[kSsdTier];
    res_.prefix.tokens_hit_ssd += q.ssd_tokens;
    res_.prefix.blocks_hit_remote += tier_hit[kRemoteTier];
    res_.prefix.tokens_hit_remote += q.remote_tokens;
  }
  return tokens;
}

// The offload tiers in the order a prompt's run of blocks is looked up: by the time to load one
// block from each (the remote pool's start-up latency included), fastest first; ties keep host
// memory, local SSD, remote pool.
void Sim::order_offload_tiers() {
  const auto& sc = s_.scheduler;
  const double block = static_cast<double>(std::max<long long>(1, s_.load.trace_block_tokens));
  const std::array<double, kOffloadTiers> seconds = {
      sc.host_load_seconds_per_token * block, sc.ssd_load_seconds_per_token * block,
      sc.remote_load_latency_s + sc.remote_load_seconds_per_token * block};
  std::stable_sort(offload_order_.begin(), offload_order_.end(),
                   [&](size_t a, size_t b) { return seconds[a] < seconds[b]; });
}

// A prompt's KV is complete: its whole blocks join the engine's prefix cache and the remote pool
// every engine shares; the blocks the prefix cache evicts move down to the host tier, and what
// that evicts to the local SSD (without a host tier, the prefix cache's evictions go to the SSD).
void Sim::cache_prompt(Engine& en, const ReqState& q) {
  if (q.blocks.empty() || en.prefix.capacity() <= 0) return;
  // Written through to the shared pool (no-op without one): the blocks it did not hold go out over
  // each chip's link, its shard each, in the background (outbound; the loads come in).
  if (const long long written = remote_.insert(shared_blocks(q)); written > 0) {
    const long long tokens = written * s_.load.trace_block_tokens;
    res_.prefix.blocks_written_remote += written;
    res_.prefix.tokens_written_remote += tokens;
    res_.prefix.remote_write_s += static_cast<double>(tokens) * s_.scheduler.remote_load_seconds_per_token;
  }
  if (en.host.capacity() <= 0 && en.ssd.capacity() <= 0) {
    en.prefix.insert(shared_blocks(q));
    return;
  }
  evicted_.clear();
  en.prefix.insert(shared_blocks(q), &evicted_);
  if (en.host.capacity() > 0) {
    evicted_host_.clear();
    en.host.insert(evicted_, en.ssd.capacity() > 0 ? &evicted_host_ : nullptr);
    evicted_.swap(evicted_host_);
  }
  if (en.ssd.capacity() > 0) en.ssd.insert(evicted_);
}

// Offload-tier loads of the step's first chunks: each request's blocks found in host memory, on
// the local SSD or in the remote pool come back before its prompt runs (the engine's chips load
// their shards in parallel).
double Sim::tier_load_seconds(const Engine& en) {
  const auto& sc = s_.scheduler;
  double host = 0, ssd = 0, remote = 0;
  for (const auto& c : en.chunks) {
    auto& q = req(c.req);
    host += static_cast<double>(q.host_tokens) * sc.host_load_seconds_per_token;
    ssd += static_cast<double>(q.ssd_tokens) * sc.ssd_load_seconds_per_token;
    if (q.remote_tokens > 0)
      remote += sc.remote_load_latency_s + static_cast<double>(q.remote_tokens) * sc.remote_load_seconds_per_token;
    q.host_tokens = q.ssd_tokens = q.remote_tokens = 0;
  }
  res_.prefix.host_load_s += host;
  res_.prefix.ssd_load_s += ssd;
  res_.prefix.remote_load_s += remote;
  return host + ssd + remote;
}

// The step's time with the offload-tier loads of its first chunks: after them, or overlapped
// with its compute layer by layer (the load of layer i + 1 beside the compute of layer i).
double Sim::with_tier_loads(const Engine& en, double compute) {
  const double load = tier_load_seconds(en);
  if (load <= 0) return compute;
  if (!s_.scheduler.layerwise_kv_load) return compute + load;
  const double layers = static_cast<double>(std::max(1, en.cost->model().layers));
  return std::max(compute, load) + std::min(compute, load) / layers;
}

bool Sim::form_continuous(Engine& en) {
  const auto& sc = s_.scheduler;
  en.chunks.clear();
  en.step_decodes = false;
  preempt_for_growth(en);
  const long long q = decode_q();
  const bool prefill_only = sc.kind == SchedulerKind::PrefillPriority &&
                            (!en.prefilling.empty() || admissible(en, en.n_dec > 0));
  long long budget = sc.max_batched_tokens;
  if (!prefill_only && en.n_dec > 0) {
    en.step_decodes = true;
    budget -= en.n_dec * q;
  }
  const bool decode_pool = s_.disaggregated && en.pool == 1;
  admit_waiting(en, continue_prefills(en, budget), decode_pool);
  if (decode_pool && en.n_dec > 0) en.step_decodes = true;
  return en.step_decodes || !en.chunks.empty();
}

StepWork Sim::static_step_work(const Engine& en) const {
  StepWork w;
  const double b = static_cast<double>(en.static_batch.size());
  if (en.static_step < 0) {
    for (int r : en.static_batch) add_whole_prompt(s_.scheduler.static_shapes, req(r).in_len, key_cap(), w);
    w.prefill_seqs = w.sampled_prefills = static_cast<long long>(b);
    return w;
  }
  double ctx = 0;
  for (int r : en.static_batch) ctx += static_cast<double>(req(r).in_len + 1 + en.static_step);
  w.decode_seqs = static_cast<long long>(b);
  w.decode_context = ctx;
  return w;
}

StepWork Sim::continuous_step_work(const Engine& en) const {
  StepWork w;
  for (const auto& c : en.chunks) {
    long long done = 0;
    for (const auto& p : en.prefilling) if (p.req == c.req) done = p.done;
    if (done == 0 && c.tokens >= req(c.req).prompt)
      add_whole_prompt(s_.scheduler.static_shapes, c.tokens, key_cap(), w);
    else
      add_prefill_chunk(static_cast<double>(done), static_cast<double>(c.tokens), key_cap(), w);
    ++w.prefill_seqs;
    if (done + c.tokens >= req(c.req).prompt) ++w.sampled_prefills;
  }
  if (en.step_decodes) {
    w.decode_seqs = en.n_dec;
    w.decode_context = en.ctx_sum;
    w.decode_q = decode_q();
  }
  return w;
}

void Sim::add_activity(const StepCost& c, core::Dtype math, double times, int pool) {
  for (cost::Activity* a : {&res_.activity, &res_.pool_activity[pool]}) {
    a->add_flops(math, c.flops * times);
    a->hbm_bytes += c.hbm_bytes * times;
    a->scale_up_bytes += c.scale_up_bytes * times;
    a->scale_out_bytes += c.scale_out_bytes * times;
  }
}

// The step's time and activity (per chip of the engine).
StepCharge Sim::charge(const Engine& en, const StepWork& work) const {
  const auto& shapes = s_.scheduler.static_shapes;
  StepWork compiled;
  if (shapes.on()) compiled = compiled_decode(shapes, s_.scheduler.batch_size(), work);
  const StepWork& w = shapes.on() ? compiled : work;
  StepCharge c;
  c.step = en.cost->cost(w);
  c.seconds = c.step.total.base();
  if (w.decode_seqs > 0 && s_.spec.draft_len > 0 && s_.spec.draft) {
    // Draft model: draft_len sequential single-token steps at the same batch and context.
    StepWork d;
    d.decode_seqs = w.decode_seqs;
    d.decode_context = w.decode_context;
    c.draft = s_.spec.draft->cost(d);
    c.draft_steps = s_.spec.draft_len;
    c.seconds += s_.spec.draft_len * c.draft.total.base();
  }
  return c;
}

// The step's time, with its activity added to the run's.
double Sim::step_seconds(const Engine& en, const StepWork& work) {
  const StepCharge c = charge(en, work);
  add_activity(c.step, en.cost->plan().plan.math_dtype, 1.0, en.pool);
  if (c.draft_steps > 0) add_activity(c.draft, s_.spec.draft->plan().plan.math_dtype, c.draft_steps, en.pool);
  return c.seconds;
}

// Time-weighted batch and KV use, the sampled timeline of engine 0, and the trace.
void Sim::record_step(int e, const StepWork& w, SimTime t, SimTime dt) {
  const Engine& en = engine(e);
  const double cap = static_cast<double>(std::max<long long>(1, en.kv_cap));
  area_batch_ += running(en) * static_cast<double>(dt) * core::kSecondsPerPicosecond;
  area_kv_ += std::min(1.0, kv_used(en) / cap) * static_cast<double>(dt) * core::kSecondsPerPicosecond;
  res_.busy_time += from_sim_time(dt);
  res_.pool_busy_time[en.pool] += from_sim_time(dt);
  ++res_.steps;
  if (s_.trace.enabled && static_cast<long long>(res_.trace.steps.size()) < s_.trace.max_steps)
    res_.trace.steps.push_back(StepRecord{e, en.pool, t, t + dt, w.decode_seqs, w.prefill_tokens, w.prefill_seqs});
  if (e != 0) return;
  if (sample_count_ % stride_ == 0) {
    res_.timeline.push_back(TimelinePoint{core::sim_seconds(t), std::min(1.0, kv_used(en) / cap), running(en)});
    if (static_cast<int>(res_.timeline.size()) >= 2 * std::max(1, s_.timeline_samples)) {
      std::vector<TimelinePoint> half;
      for (size_t i = 0; i < res_.timeline.size(); i += 2) half.push_back(res_.timeline[i]);
      res_.timeline.swap(half);
      stride_ *= 2;
    }
  }
  ++sample_count_;
}

// Forms and starts the engine's next step. A quiet step (quiet_step) ends here rather than
// through the event queue, and the next one is formed at its end: the same steps, in the same
// order, as the queue would give.
void Sim::try_start(int e, SimTime t, bool after_step) {
  auto& en = engine(e);
  if (en.busy) return;
  while (true) {
    en.cutoff = after_step ? en.step_start : t;
    if (!(is_static() ? form_static(en) : form_continuous(en))) return;
    const StepWork w = is_static() ? static_step_work(en) : continuous_step_work(en);
    for (const auto& c : en.chunks)
      if (req(c.req).prefill_start < 0) req(c.req).prefill_start = t;
    if (is_static() && en.static_step < 0)
      for (int r : en.static_batch)
        if (req(r).prefill_start < 0) req(r).prefill_start = t;
    const double secs = with_tier_loads(en, step_seconds(en, w));
    en.step_start = t;
    const SimTime dt = std::max<SimTime>(1, to_sim_time(core::seconds(secs)));
    record_step(e, w, t, dt);
    if (!quiet_step(en, t + dt)) {
      en.busy = true;
      push(t + dt, EvKind::StepDone, e);
      return;
    }
    t += dt;  // what step_done does at the step's end, less what a quiet step cannot change
    advance_clock(t);
    count_emitted(en, t);
    finish_decodes(en, t);
    en.chunks.clear();
    after_step = true;
    t = skip_quiet_steps(e, t);
  }
}

// A step that decodes only, finishes no sequence and ends before any other event: its end
// changes no other engine, no request's state and nothing the next step's admission reads
// (nothing waits, or the batch is full), so the event queue would hand it straight back.
bool Sim::quiet_step(const Engine& en, SimTime end) const {
  if (!en.step_decodes || !en.chunks.empty() || !decodes_alone(en)) return false;
  if (!en.heap.empty() && en.heap.top().finish_step <= en.dec_steps + 1) return false;
  return end <= kClockLimit && end < next_event_time();
}

// Whether the engine's next steps can only decode its running batch: quiet steps are on, no
// prompt is in flight, and nothing waits or the batch is full (what the admission reads).
bool Sim::decodes_alone(const Engine& en) const {
  if (s_.queue_every_step || is_static() || !en.prefilling.empty()) return false;
  return en.waiting.empty() || running(en) >= static_cast<double>(s_.scheduler.max_num_seqs);
}

// Whether a step formed now would preempt a decoding sequence to make room for the batch's
// growth (on-demand KV: the cache, its next token per sequence and a block per sequence).
bool Sim::kv_grows_past_cap(const Engine& en) const {
  if (s_.scheduler.kv_policy != KvPolicy::OnDemand || en.n_dec <= 1) return false;
  const double blk = static_cast<double>(std::max<long long>(1, s_.scheduler.block_size));
  const double tu = static_cast<double>(en.token_units);
  const double need = kv_used(en) + tu * (a_ * static_cast<double>(en.n_dec) + blk * running(en));
  return need > static_cast<double>(en.kv_cap);
}

namespace {

/// Whether `mid`, taken at `share` of the way from `a` to `b`, lies on their line (to 1e-9).
bool on_the_line(double a, double b, double mid, double share) {
  const double line = a + (b - a) * share;
  return std::fabs(mid - line) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

/// What `steps` steps charge whose costs lie on the line from `a` (share 0) to `b` (share 1),
/// `share` being the sum of their places on it.
StepCost along_the_line(const StepCost& a, const StepCost& b, double steps, double share) {
  auto sum = [&](auto first, auto last) { return first * steps + (last - first) * share; };
  StepCost s;
  s.flops = sum(a.flops, b.flops);
  s.hbm_bytes = sum(a.hbm_bytes, b.hbm_bytes);
  s.scale_up_bytes = sum(a.scale_up_bytes, b.scale_up_bytes);
  s.scale_out_bytes = sum(a.scale_out_bytes, b.scale_out_bytes);
  return s;
}

/// Whether the charges of the steps between 0 and `last` (`at(i)`, the step i steps on) lie on
/// the line from `first` to `end`: three trial steps at the quartiles, on time, bytes and FLOPs.
template <class At>
bool charges_on_the_line(At& at, const StepCharge& first, const StepCharge& end, long long last) {
  for (long long i : {last / 4, last / 2, 3 * last / 4}) {
    const StepCharge mid = at(i);
    const double f = static_cast<double>(i) / static_cast<double>(last);
    if (!on_the_line(first.seconds, end.seconds, mid.seconds, f) ||
        !on_the_line(first.step.hbm_bytes.base(), end.step.hbm_bytes.base(), mid.step.hbm_bytes.base(), f) ||
        !on_the_line(first.step.flops.base(), end.step.flops.base(), mid.step.flops.base(), f))
      return false;
  }
  return true;
}

}  // namespace

// The quiet steps (quiet_step) that follow from `t`, run without forming and costing each: at a
// fixed batch each adds the same tokens of context, and the step's cost is affine in the context
// (the KV cache read grows with it) unless a roofline bound, the host's exposed work or an
// attention window changes sides within the run, which three trial steps test. Each step then
// takes its time from the line between the run's first and last step; the steps, their order
// and their bookkeeping are those of the queue. Returns the end of the last step run.
SimTime Sim::skip_quiet_steps(int e, SimTime t) {
  constexpr long long kShortestRun = 16;  // below this the trial steps cost more than they save
  Engine& en = engine(e);
  if (!decodes_alone(en) || s_.scheduler.static_shapes.on() || en.n_dec <= 0 || en.heap.empty()) return t;
  StepWork w;
  w.decode_seqs = en.n_dec;
  w.decode_q = decode_q();
  const double ctx0 = en.ctx_sum, grow = a_ * static_cast<double>(en.n_dec);
  auto at = [&](long long i) {
    w.decode_context = ctx0 + grow * static_cast<double>(i);
    return charge(en, w);
  };
  const StepCharge first = at(0);
  // Steps that finish no sequence (the heap's first finishes at its finish_step) and, at the
  // first step's pace (steps only grow), end before the next event.
  const SimTime next = next_event_time();
  const double pace = std::max(1.0, first.seconds * core::kPicosecondsPerSecond);
  const double by_time = static_cast<double>(std::min(next, kClockLimit) - t) / pace;
  const long long run = std::min<long long>(en.heap.top().finish_step - 1 - en.dec_steps,
                                            static_cast<long long>(std::min(by_time, 1e15)) + 1);
  if (run < kShortestRun) return t;
  const long long last = run - 1;
  const StepCharge end = at(last);
  if (!charges_on_the_line(at, first, end, last)) return t;
  double share = 0, steps = 0;
  for (long long i = 0; i < run && !kv_grows_past_cap(en); ++i) {
    const double f = static_cast<double>(i) / static_cast<double>(last);
    const SimTime dt =
        std::max<SimTime>(1, to_sim_time(core::seconds(first.seconds + (end.seconds - first.seconds) * f)));
    if (t + dt > kClockLimit || t + dt >= next) break;
    w.decode_context = en.ctx_sum;
    en.cutoff = en.step_start;
    en.step_start = t;
    record_step(e, w, t, dt);
    t += dt;
    advance_clock(t);
    count_emitted(en, t);
    finish_decodes(en, t);
    share += f;
    steps += 1;
  }
  res_.interpolated_steps += static_cast<long long>(steps);
  add_activity(along_the_line(first.step, end.step, steps, share), en.cost->plan().plan.math_dtype, 1.0, en.pool);
  if (first.draft_steps > 0)
    add_activity(along_the_line(first.draft, end.draft, steps, share), s_.spec.draft->plan().plan.math_dtype,
                 first.draft_steps, en.pool);
  return t;
}

// The time of the next queued event or open-loop arrival (kNever: none).
SimTime Sim::next_event_time() const {
  SimTime t = ev_.empty() ? kNever : ev_.top().t;
  if (next_arrival_ >= 0) t = std::min(t, req(next_arrival_).arrival);
  return t;
}

void Sim::finish(int r, SimTime t) {
  auto& q = req(r);
  q.finish = t;
  --in_system_;
  last_finish_ = std::max(last_finish_, t);
  ++res_.requests;
  res_.output_tokens += q.out_len;
  res_.input_tokens += q.in_len;
  if (t >= win_lo_ && t <= win_hi_) {
    ++win_req_;
    win_in_ += q.in_len;
  }
  record_latency(q, t);
  if (s_.trace.enabled && r < s_.trace.max_requests) record_request(r, q);
  q.released = !is_static();  // a static batch still reads its finished members
  // Closed loop: the client sends its next request at once.
  if (s_.load.arrival == ArrivalKind::ClosedLoop && issued_ < total_) {
    ++issued_;
    const int nr = materialize();
    req(nr).arrival = t;
    req(nr).client = q.client;
    push(t, EvKind::Arrival, nr);
  }
}

// TTFT, TPOT and end-to-end latency of a finished request, the timeout and SLO counts.
void Sim::record_latency(const ReqState& q, SimTime t) {
  const double ttft = core::sim_seconds(q.first - q.arrival);
  const double e2e = core::sim_seconds(t - q.arrival);
  const double tpot = q.out_len > 1 ? core::sim_seconds(t - q.first) / static_cast<double>(q.out_len - 1) : 0.0;
  if (s_.timeout.base() > 0 && e2e > s_.timeout.base()) ++res_.timed_out;
  if ((s_.ttft_slo.base() <= 0 || ttft <= s_.ttft_slo.base()) && (s_.tpot_slo.base() <= 0 || tpot <= s_.tpot_slo.base()))
    ++res_.met_slos;
  if (q.client >= 0 && client_done_[static_cast<size_t>(q.client)]++ < warmup_) {  // a client's warm-up
    ++res_.warmup_requests;
    return;
  }
  ttft_s_.add(ttft);
  e2e_s_.add(e2e);
  if (q.out_len > 1) tpot_ms_.add(tpot * 1e3);
  if (res_.requests <= LatencyStats::kExactValues) {
    res_.ttft_each_s.push_back(ttft);
    res_.tpot_each_s.push_back(tpot);
    res_.e2e_each_s.push_back(e2e);
  } else if (!res_.ttft_each_s.empty()) {
    for (auto* v : {&res_.ttft_each_s, &res_.tpot_each_s, &res_.e2e_each_s}) std::vector<double>().swap(*v);
  }
}

void Sim::static_step_done(Engine& en, SimTime t) {
  long long live = 0;
  for (int r : en.static_batch) live += finished(r) ? 0 : 1;
  emitted_ += static_cast<double>(live);
  mark(t);
  if (en.static_step < 0) {
    for (int r : en.static_batch) {
      auto& q = req(r);
      q.first = t;
      q.generated = 1;
      if (q.out_len <= 1) { finish(r, t); --en.outstanding; }
    }
    en.static_step = 0;
  } else {
    ++en.static_step;
    for (int r : en.static_batch) {
      auto& q = req(r);
      if (q.finish < 0 && q.out_len - 1 == en.static_step) { finish(r, t); --en.outstanding; }
    }
  }
  if (en.static_step >= en.static_len - 1) {
    for (int r : en.static_batch) req(r).released = true;
    en.static_batch.clear();
    en.reserved = 0;
  }
}

// Output tokens of the step that ended at `t` (decode tokens and the first token of every
// prompt it completes), for the steady-state throughput window.
void Sim::count_emitted(const Engine& en, SimTime t) {
  if (en.step_decodes) emitted_ += a_ * static_cast<double>(en.n_dec);
  for (const auto& c : en.chunks) {
    const auto& q = req(c.req);
    long long done = 0;
    for (const auto& p : en.prefilling) if (p.req == c.req) done = p.done;
    if (done + c.tokens >= q.prompt && q.first < 0) emitted_ += 1.0;
  }
  mark(t);
}

// A decode step ended: every sequence whose last token it produced finishes.
void Sim::finish_decodes(Engine& en, SimTime t) {
  ++en.dec_steps;
  en.ctx_sum += a_ * static_cast<double>(en.n_dec);
  while (!en.heap.empty() && en.heap.top().finish_step <= en.dec_steps) {
    const HeapItem h = en.heap.top();
    en.heap.pop();
    if (finished(h.req)) continue;
    auto& q = req(h.req);
    if (q.stamp != h.stamp) continue;
    en.ctx_sum -= q.ctx_at_start + a_ * static_cast<double>(en.dec_steps - q.dec_start);
    en.dec_span -= static_cast<double>(q.in_len + q.max_out);
    --en.n_dec;
    en.reserved -= q.reserved;
    q.generated = q.out_len;
    --en.outstanding;
    finish(h.req, t);
  }
  if (en.n_dec == 0) en.ctx_sum = en.dec_span = 0;  // drop rounding residue
}

// Prefill chunks ended: completed prompts finish, go to a decode engine, or start decoding.
void Sim::finish_prefills(Engine& en, SimTime t) {
  for (const auto& c : en.chunks) {
    auto it = std::find_if(en.prefilling.begin(), en.prefilling.end(),
                           [&](const PrefillJob& p) { return p.req == c.req; });
    XS_CHECK(it != en.prefilling.end(), "chunk without a prefill job");
    it->done += c.tokens;
    auto& q = req(c.req);
    if (it->done < q.prompt) continue;
    en.prefilling.erase(it);
    cache_prompt(en, q);
    if (q.first < 0) q.first = t;
    if (q.generated == 0) q.generated = 1;
    if (q.generated >= q.out_len) {
      en.reserved -= q.reserved;
      --en.outstanding;
      finish(c.req, t);
    } else if (s_.disaggregated) {
      // The KV cache goes to a decode engine over the network.
      en.reserved -= q.reserved;
      --en.outstanding;
      q.reserved = 0;
      q.prefilled = true;
      const double prompt = static_cast<double>(q.prompt);
      const double secs = s_.kv_transfer_latency.base() + s_.kv_transfer_per_token.base() * prompt +
                          s_.kv_transfer_per_sequence.base();
      for (cost::Activity* a : {&res_.activity, &res_.pool_activity[0]}) {
        a->scale_up_bytes += s_.kv_transfer_scale_up_per_token * prompt + s_.kv_transfer_scale_up_per_sequence;
        a->scale_out_bytes += s_.kv_transfer_scale_out_per_token * prompt + s_.kv_transfer_scale_out_per_sequence;
      }
      ++res_.kv_transfers;
      res_.kv_transfer_tokens += prompt;
      res_.kv_transfer_time += core::seconds(secs);
      push(t + to_sim_time(core::seconds(secs)), EvKind::KvArrive, c.req);
    } else {
      join_decode(en, c.req);
    }
  }
  en.chunks.clear();
}

void Sim::step_done(int e, SimTime t) {
  auto& en = engine(e);
  en.busy = false;
  if (is_static()) {
    static_step_done(en, t);
  } else {
    count_emitted(en, t);
    if (en.step_decodes) finish_decodes(en, t);
    finish_prefills(en, t);
  }
  try_start(e, t, true);
}

// Draws the next request of the stream into memory; returns its id.
int Sim::materialize() {
  Request r = stream_.next();
  const int id = static_cast<int>(base_ + static_cast<long long>(req_.size()));
  ReqState q;
  q.arrival = r.arrival;
  q.in_len = r.in_len;
  q.out_len = r.out_len;
  q.max_out = std::max(q.out_len, r.max_out);
  q.prompt = q.in_len;
  if (s_.scheduler.prefix_caching) q.blocks = std::move(r.prefix_blocks);
  req_.push_back(std::move(q));
  if (r.clipped) ++res_.clipped_requests;
  // The steady-state window of a Poisson run opens at the 10th-percentile arrival and closes
  // at the last one; each is known once that request is drawn (before it arrives).
  if (s_.load.arrival == ArrivalKind::Poisson && total_ >= 100) {
    if (id == total_ / 10) win_lo_ = q.arrival;
    if (id == total_ - 1) win_hi_ = q.arrival;
  }
  return id;
}

void Sim::set_window() {
  total_ = stream_.total();
  if (s_.load.arrival == ArrivalKind::Poisson && total_ >= 100) win_lo_ = win_hi_ = kNever;
}

// Drops finished requests from the front of memory (ids stay: req(r) is req_[r - base_]).
void Sim::retire() {
  while (!req_.empty() && req_.front().released) {
    req_.pop_front();
    ++base_;
  }
}

void Sim::add_pool(const PoolSpec& p, int pool) {
  XS_CHECK(p.cost != nullptr, "pool without a cost model");
  for (int i = 0; i < p.engines; ++i) {
    Engine en;
    en.pool = pool;
    en.cost = p.cost;
    en.kv_cap = s_.scheduler.kv_tokens_override > 0 ? s_.scheduler.kv_tokens_override : p.cost->memory().kv_tokens;
    // With speculative decoding a recurrent model's sequence also holds the states after each of
    // its draft_len + 1 verified tokens (the rollback points).
    en.state_tokens = p.cost->memory().state_tokens * s_.spec.states_per_sequence();
    en.token_units = p.cost->memory().token_units;
    if (s_.scheduler.prefix_caching && en.token_units > 0 && pool == 0) {
      const long long tokens = s_.scheduler.prefix_cache_tokens > 0 ? s_.scheduler.prefix_cache_tokens
                                                                    : en.kv_cap / en.token_units;
      en.prefix = PrefixCache(tokens / std::max<long long>(1, s_.load.trace_block_tokens));
      en.host = PrefixCache(s_.scheduler.host_cache_tokens / std::max<long long>(1, s_.load.trace_block_tokens));
      en.ssd = PrefixCache(s_.scheduler.ssd_cache_tokens / std::max<long long>(1, s_.load.trace_block_tokens));
      remote_ = PrefixCache(s_.scheduler.remote_cache_tokens / std::max<long long>(1, s_.load.trace_block_tokens));
    }
    eng_.push_back(std::move(en));
  }
}

// Closed loop starts `concurrency` clients (start_clients); offline queues every request at 0, before any
// engine starts, round-robin over the engines (the router's choice when all are idle), and
// hands them out as the engines' queues run low; open-loop arrivals are drawn in order by the
// event loop.
void Sim::start_arrivals() {
  if (s_.load.arrival == ArrivalKind::ClosedLoop) start_clients();
  arrivals_done_ = s_.load.arrival == ArrivalKind::Offline;
  if (s_.load.arrival != ArrivalKind::Offline) return;
  if (total_ > 0) first_arrival_ = 0;
  in_system_ = total_;
  const long long engines = pool_engines(0);
  for (long long e = 0; e < engines; ++e) engine(static_cast<int>(e)).outstanding = total_ / engines + (e < total_ % engines);
  top_up_offline();
  for (size_t e = 0; e < eng_.size(); ++e) try_start(static_cast<int>(e), 0);
}

// A closed loop's clients: each sends its first request at its start time, spread over
// LoadSpec::start_spread times one request's estimated end-to-end time (all at 0 without a
// spread); each client's first warmup_per_client requests stay out of the latency statistics,
// as long as every client keeps one.
void Sim::start_clients() {
  const long long c = std::min<long long>(std::max<long long>(1, s_.load.concurrency), total_);
  warmup_ = std::clamp<long long>(s_.load.warmup_per_client, 0, std::max<long long>(0, total_ / std::max<long long>(1, c) - 1));
  client_done_.assign(static_cast<size_t>(std::max<long long>(0, c)), 0);
  const double span = s_.load.start_spread > 0 ? s_.load.start_spread * one_request_seconds() : 0.0;
  res_.client_start_span = core::seconds(span);
  const std::vector<double> at = client_start_fractions(s_.load, c);
  for (long long i = 0; i < c; ++i) {
    ++issued_;
    const int r = materialize();
    req(r).client = static_cast<int>(i);
    push(to_sim_time(core::seconds(span * at[static_cast<size_t>(i)])), EvKind::Arrival, r);
  }
}

// One request's end-to-end time at the load's mean lengths: its prompt alone, then its output
// at the batch the clients put on each engine, over the mean context.
double Sim::one_request_seconds() const {
  const long long c = std::max<long long>(1, s_.load.concurrency);
  const Engine& pre = eng_.front();
  const Engine& dec = eng_.back();
  const long long engines = pool_engines(dec.pool);
  StepWork p;
  add_whole_prompt(s_.scheduler.static_shapes, std::max<long long>(1, s_.load.in_len), key_cap(), p);
  p.prefill_seqs = p.sampled_prefills = 1;
  StepWork d;
  d.decode_seqs = std::clamp<long long>((c + engines - 1) / std::max<long long>(1, engines), 1,
                                        std::max<long long>(1, s_.scheduler.batch_size()));
  d.decode_q = decode_q();
  d.decode_context = static_cast<double>(d.decode_seqs) * static_cast<double>(s_.load.in_len + s_.load.out_len / 2);
  const StepWork dw = compiled_decode(s_.scheduler.static_shapes, s_.scheduler.batch_size(), d);
  const double steps = static_cast<double>(std::max<long long>(0, s_.load.out_len - 1)) / a_;
  return pre.cost->cost(p).total.base() + steps * dec.cost->cost(dw).total.base();
}

// Offline: hands out queued requests in id order (request i to engine i mod engines) until every
// engine's queue holds more than one step can admit, or none is left.
void Sim::top_up_offline() {
  const long long engines = pool_engines(0);
  const long long want = std::max(s_.scheduler.max_num_seqs, s_.scheduler.static_batch) + 1;
  auto low = [&] {
    for (long long e = 0; e < engines; ++e)
      if (static_cast<long long>(engine(static_cast<int>(e)).waiting.size()) < want) return true;
    return false;
  };
  while (offline_next_ < total_ && low()) {
    for (long long k = 0; k < engines && offline_next_ < total_; ++k) {  // one round
      const int e = static_cast<int>(offline_next_ % engines);
      ++offline_next_;
      const int r = materialize();
      req(r).engine = e;
      engine(e).waiting.push_back(r);
    }
  }
}

void Sim::handle(const Event& ev) {
  switch (ev.kind) {
    case EvKind::StepDone: step_done(ev.id, ev.t); break;
    case EvKind::Arrival:
      arrive(ev.id, ev.t);
      if (issued_ >= total_) arrivals_done_ = true;
      break;
    case EvKind::KvArrive: {
      enqueue(route(1), ev.id, ev.t);
      break;
    }
  }
  if (arrivals_done_ && s_.scheduler.kind == SchedulerKind::StaticBatch)
    for (size_t e = 0; e < eng_.size(); ++e) try_start(static_cast<int>(e), ev.t);
}

// Open-loop arrivals (drawn in order) interleaved with the event queue, arrivals first at
// equal times. Finished requests are retired between events.
void Sim::event_loop() {
  const bool open_loop = s_.load.arrival == ArrivalKind::Poisson || s_.load.arrival == ArrivalKind::Trace;
  int& next = next_arrival_;
  next = open_loop && stream_.more() ? materialize() : -1;
  while (true) {
    const bool have_ev = !ev_.empty();
    const bool have_arr = next >= 0;
    if (!have_ev && !have_arr) break;
    if (have_arr && (!have_ev || req(next).arrival <= ev_.top().t)) {
      const SimTime t = req(next).arrival;
      advance_clock(t);
      const int r = next;
      next = stream_.more() ? materialize() : -1;
      arrive(r, t);
      if (next < 0) arrivals_done_ = true;
    } else {
      const Event ev = ev_.top();
      ev_.pop();
      advance_clock(ev.t);
      handle(ev);
    }
    if (s_.load.arrival == ArrivalKind::Offline) top_up_offline();
    retire();
  }
}

void Sim::summarise() {
  const double dur = first_arrival_ < 0 ? 0.0 : core::sim_seconds(last_finish_ - first_arrival_);
  res_.duration = core::seconds(dur);
  if (dur > 0) {
    res_.requests_per_s = static_cast<double>(res_.requests) / dur;
    res_.output_tokens_per_s = static_cast<double>(res_.output_tokens) / dur;
    res_.input_tokens_per_s = static_cast<double>(res_.input_tokens) / dur;
    if (win_hi_ > win_lo_ && win_req_ > 0 && mark_hi_ > mark_lo_ && mark_lo_ >= 0) {
      const double w = core::sim_seconds(win_hi_ - win_lo_);
      res_.requests_per_s = static_cast<double>(win_req_) / w;
      res_.offered_requests_per_s = static_cast<double>(total_ - 1 - total_ / 10) / w;
      res_.input_tokens_per_s = static_cast<double>(win_in_) / w;
      res_.output_tokens_per_s = (emitted_hi_ - emitted_lo_) / core::sim_seconds(mark_hi_ - mark_lo_);
    } else if (s_.load.arrival == ArrivalKind::Poisson && res_.requests > 1 && last_arrival_ > first_arrival_) {
      // A run too short for the window: the rate its drawn arrivals offered (a sample of 60 at
      // 1 req/s can span 72 s), against which its whole-run rate is judged.
      res_.offered_requests_per_s =
          static_cast<double>(res_.requests - 1) / core::sim_seconds(last_arrival_ - first_arrival_);
    }
    const double ne = static_cast<double>(eng_.size());
    res_.mean_batch = area_batch_ / (dur * ne);
    res_.mean_kv_utilisation = area_kv_ / (dur * ne);
    res_.mean_in_system = area_in_system_ / dur;
  }
  res_.ttft_ms = ttft_ms();
  res_.tpot_ms = tpot_ms_.summary();
  res_.itl_ms = res_.tpot_ms;
  res_.e2e_s = e2e_s_.summary();
}

// TTFT percentiles in ms. While exact, from the values scaled to ms first (as the figures
// always were: the same rounding).
Percentiles Sim::ttft_ms() const {
  if (!ttft_s_.exact()) {
    Percentiles p = ttft_s_.summary();
    for (double* x : {&p.mean, &p.p50, &p.p90, &p.p99}) *x *= 1e3;
    return p;
  }
  std::vector<double> ms(ttft_s_.values());
  for (double& x : ms) x *= 1e3;
  return percentiles(std::move(ms));
}

// A finished request's phases for the timeline (the first max_requests requests by id).
void Sim::record_request(int r, const ReqState& q) {
  const SimTime start = q.prefill_start >= 0 ? q.prefill_start : q.arrival;
  res_.trace.requests.push_back(
      RequestRecord{r, q.engine, q.arrival, start, q.first >= 0 ? q.first : q.finish, q.finish, q.in_len, q.out_len});
}

SimResult Sim::run() {
  set_window();
  order_offload_tiers();
  add_pool(s_.pool, 0);
  if (s_.disaggregated) add_pool(s_.decode_pool, 1);
  start_arrivals();
  event_loop();
  summarise();
  if (s_.trace.enabled) {
    res_.trace.steps_total = res_.steps;
    res_.trace.requests_total = total_;
    std::sort(res_.trace.requests.begin(), res_.trace.requests.end(),
              [](const RequestRecord& x, const RequestRecord& y) { return x.id < y.id; });
  }
  return std::move(res_);
}

}  // namespace

void add_whole_prompt(const StaticShapes& shapes, long long tokens, long long key_cap, StepWork& w) {
  add_prefill_chunk(0.0, static_cast<double>(shapes.bucket(tokens)), key_cap, w);
}

// The bucket is taken at the mean context (NxD Inference takes the longest sequence's: the same
// for one sequence and for identical requests, below it otherwise).
StepWork compiled_decode(const StaticShapes& shapes, long long compiled_batch, StepWork w) {
  if (!shapes.on() || w.decode_seqs <= 0) return w;
  const double seqs = static_cast<double>(w.decode_seqs);
  const long long mean_context = static_cast<long long>(std::ceil(w.decode_context / seqs));
  const long long lines = std::max(w.decode_seqs, compiled_batch);
  w.decode_context = static_cast<double>(lines) * static_cast<double>(shapes.bucket(mean_context));
  w.decode_seqs = lines;
  return w;
}

long long StaticShapes::bucket(long long len) const {
  if (!on() || len <= 0 || (max_len > 0 && len > max_len)) return len;
  // 2^i from min_bucket below 2^round(log2(max_len)), then max_len itself; without a compiled
  // length, the next power of two.
  constexpr long long kNoTop = std::numeric_limits<long long>::max() >> 2;
  const long long top =
      max_len > 0 ? 1LL << std::lround(std::log2(static_cast<double>(max_len))) : kNoTop;
  long long b = min_bucket;
  while (b < len && b < top) b *= 2;
  if (b < top) return b;
  return max_len > 0 ? max_len : len;
}

std::string StepRecord::kind() const {
  if (prefill_tokens > 0 && decode_seqs > 0) return "mixed";
  return prefill_tokens > 0 ? "prefill" : "decode";
}

SimResult simulate(const SimSpec& spec) {
  XS_CHECK(spec.pool.cost != nullptr, "simulate: no cost model");
  Sim sim(spec);
  return sim.run();
}

}  // namespace xpusim::serve
