// Multi-turn sessions (docs/serving.md, "Multi-turn sessions"): each turn's prompt is the previous
// turn's prompt and answer plus a new message, its blocks repeat the previous prompt's whole
// blocks, the drawn counts and lengths have the means asked, and the written trace reads back.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "xpusim/core/diagnostics.h"
#include "xpusim/serve/sessions.h"
#include "xpusim/serve/simulator.h"
#include "xpusim/serve/trace_stats.h"

namespace xs = xpusim::serve;

namespace {

/// Each session's turns in turn order.
std::map<long long, std::vector<xs::Request>> by_session(const std::vector<xs::Request>& turns) {
  std::map<long long, std::vector<xs::Request>> out;
  for (const auto& r : turns) out[r.session].push_back(r);
  return out;
}

TEST(Sessions, EachPromptIsThePreviousPromptAndAnswerPlusAMessage) {
  const xs::Sessions s = xs::make_sessions({.sessions = 300, .turns_mean = 5, .block_tokens = 64});
  std::set<xs::BlockId> seen;
  for (const auto& r : s.turns) {  // arrival order: a block id first seen here is a new block
    ASSERT_EQ(static_cast<long long>(r.prefix_blocks.size()), (r.in_len + 63) / 64);
    for (const auto id : r.prefix_blocks) seen.insert(id);
  }
  for (const auto& [session, turns] : by_session(s.turns)) {
    for (size_t k = 0; k < turns.size(); ++k) {
      EXPECT_EQ(turns[k].turn, static_cast<long long>(k) + 1);
      if (k == 0) continue;
      const auto& prev = turns[k - 1];
      EXPECT_GT(turns[k].arrival, prev.arrival);
      EXPECT_GE(turns[k].in_len, prev.in_len + prev.out_len + 1);  // the history and a message of >= 1 token
      const size_t shared = static_cast<size_t>(prev.in_len / 64);  // the previous prompt's whole blocks
      for (size_t b = 0; b < turns[k].prefix_blocks.size(); ++b) {
        if (b < shared) EXPECT_EQ(turns[k].prefix_blocks[b], prev.prefix_blocks[b]);
        else EXPECT_NE(b < prev.prefix_blocks.size() ? prev.prefix_blocks[b] : 0, turns[k].prefix_blocks[b]);
      }
    }
  }
}

TEST(Sessions, TheSystemPromptsWholeBlocksAreSharedByEverySession) {
  xs::SessionSpec spec;
  spec.sessions = 50;
  spec.system_prompt_len = 1100;  // two whole blocks of 512 and 76 tokens of a third
  const xs::Sessions s = xs::make_sessions(spec);
  for (const auto& [session, turns] : by_session(s.turns)) {
    ASSERT_GE(turns.front().prefix_blocks.size(), 3u);
    EXPECT_EQ(turns.front().prefix_blocks[0], 1u);
    EXPECT_EQ(turns.front().prefix_blocks[1], 2u);
    EXPECT_GT(turns.front().prefix_blocks[2], 2u);  // the partial block holds the session's own tokens
    EXPECT_GT(turns.front().in_len, 1100);
  }
}

// The means asked come back: turns per session (geometric), the first message and the answers
// (lognormal, sigma 0.8) and the session start rate (Poisson), within a few standard errors.
TEST(Sessions, DrawsHaveTheMeansAsked) {
  xs::SessionSpec spec;
  spec.sessions = 20000;
  spec.session_rate_per_s = 4;
  spec.turns_mean = 3;
  spec.message_len_mean = 200;
  spec.answer_len_mean = 500;
  spec.max_context = 1 << 24;  // no session ends at the context
  const xs::Sessions s = xs::make_sessions(spec);
  EXPECT_EQ(s.ended_at_context, 0);
  const auto sessions = by_session(s.turns);
  ASSERT_EQ(static_cast<long long>(sessions.size()), spec.sessions);
  double first_message = 0, answers = 0, last_start = 0;
  for (const auto& [session, turns] : sessions) {
    first_message += static_cast<double>(turns.front().in_len);
    last_start = std::max(last_start, xpusim::core::sim_seconds(turns.front().arrival));
  }
  for (const auto& r : s.turns) answers += static_cast<double>(r.out_len);
  const double n = static_cast<double>(spec.sessions);
  EXPECT_NEAR(static_cast<double>(s.turns.size()) / n, 3.0, 0.06);   // sd sqrt(6) / sqrt(20000) = 0.017
  EXPECT_NEAR(first_message / n / 200.0, 1.0, 0.03);                  // cv sqrt(e^0.64 - 1) = 0.95, se 0.7%
  EXPECT_NEAR(answers / static_cast<double>(s.turns.size()) / 500.0, 1.0, 0.03);
  EXPECT_NEAR(n / last_start / 4.0, 1.0, 0.03);                       // se 1/sqrt(20000) = 0.7%
}

TEST(Sessions, NoTurnPassesTheContextAndTheEarlyEndsAreCounted) {
  const xs::Sessions s = xs::make_sessions({.sessions = 500, .turns_mean = 20, .max_context = 4096});
  for (const auto& r : s.turns) EXPECT_LE(r.in_len + r.out_len, 4096);
  EXPECT_GT(s.ended_at_context, 0);
  EXPECT_LE(s.without_turns, s.ended_at_context);
  EXPECT_EQ(static_cast<long long>(by_session(s.turns).size()), 500 - s.without_turns);
}

TEST(Sessions, SameSpecSameTraceAndTheSeedChangesIt) {
  xs::SessionSpec spec;
  spec.sessions = 100;
  const auto a = xs::make_sessions(spec).turns;
  EXPECT_EQ(a, xs::make_sessions(spec).turns);
  spec.seed = 2;
  EXPECT_NE(a, xs::make_sessions(spec).turns);
}

TEST(Sessions, FromATraceEachRowStartsASession) {
  std::vector<xs::Request> trace(40);
  for (size_t i = 0; i < trace.size(); ++i) {
    trace[i].arrival = xpusim::core::to_sim_time(xpusim::core::seconds(static_cast<double>(i) * 2.5));
    trace[i].in_len = 100 + static_cast<long long>(i);
    trace[i].out_len = 50 + static_cast<long long>(i);
  }
  xs::SessionSpec spec;
  spec.turns_mean = 3;
  const xs::Sessions s = xs::make_sessions_from_trace(trace, spec);
  EXPECT_EQ(s.sessions, 40);
  for (const auto& [session, turns] : by_session(s.turns)) {
    const auto& row = trace[static_cast<size_t>(session)];
    EXPECT_EQ(turns.front().arrival, row.arrival);
    EXPECT_EQ(turns.front().in_len, row.in_len);
    EXPECT_EQ(turns.front().out_len, row.out_len);
    for (size_t k = 1; k < turns.size(); ++k) {
      const long long message = turns[k].in_len - turns[k - 1].in_len - turns[k - 1].out_len;
      EXPECT_TRUE(message >= 100 && message < 140) << message;  // an in_len of the trace's rows
      EXPECT_TRUE(turns[k].out_len >= 50 && turns[k].out_len < 90) << turns[k].out_len;
    }
  }
}

// Written, read back: the same requests (times to the microsecond the file keeps).
TEST(Sessions, TheWrittenTraceReadsBack) {
  xs::SessionSpec spec;
  spec.sessions = 60;
  const auto turns = xs::make_sessions(spec).turns;
  const std::string path = ::testing::TempDir() + "xs_sessions.csv";
  {
    std::ofstream out(path);
    xs::write_sessions_csv(out, turns);
  }
  const auto back = xs::read_arrivals_file(path).requests;
  ASSERT_EQ(back.size(), turns.size());
  for (size_t i = 0; i < turns.size(); ++i) {
    EXPECT_NEAR(xpusim::core::sim_seconds(back[i].arrival), xpusim::core::sim_seconds(turns[i].arrival), 1e-6);
    EXPECT_EQ(back[i].in_len, turns[i].in_len);
    EXPECT_EQ(back[i].out_len, turns[i].out_len);
    EXPECT_EQ(back[i].prefix_blocks, turns[i].prefix_blocks);
    EXPECT_EQ(back[i].session, turns[i].session);
    EXPECT_EQ(back[i].turn, turns[i].turn);
  }
  std::remove(path.c_str());
}

// An unbounded cache serves each later turn the previous prompt's whole blocks, and each first
// turn but the trace's first the system prompt's: derived from the definition, not the replay.
TEST(Sessions, AnUnboundedCacheServesThePreviousPromptsWholeBlocks) {
  xs::SessionSpec spec;
  spec.sessions = 200;
  spec.system_prompt_len = 700;
  const xs::Sessions s = xs::make_sessions(spec);
  long long expected = 0, prompt = 0;
  bool first_of_trace = true;
  for (const auto& [session, turns] : by_session(s.turns))
    for (size_t k = 0; k < turns.size(); ++k) {
      prompt += turns[k].in_len;
      if (k > 0) expected += turns[k - 1].in_len / 512 * 512;
    }
  for (const auto& r : s.turns) {
    if (r.turn == 1 && !first_of_trace) expected += 512;  // one whole block of the 700-token system prompt
    first_of_trace = first_of_trace && r.turn != 1;
  }
  const xs::TraceStats t = xs::trace_stats(s.turns, 512, {});
  ASSERT_FALSE(t.caches.empty());
  EXPECT_EQ(t.caches.front().tally.tokens_hit, expected);
  EXPECT_EQ(t.prompt_tokens, prompt);
  EXPECT_EQ(t.sessions, 200);
}

TEST(Sessions, ASpecOutOfRangeNamesItsField) {
  auto message = [](const xs::SessionSpec& spec) {
    try {
      (void)xs::make_sessions(spec);
    } catch (const xpusim::core::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  xs::SessionSpec spec;
  spec.turns_mean = 0.5;
  EXPECT_NE(message(spec).find("turns"), std::string::npos);
  spec = {};
  spec.think_time_mean_s = -1;
  EXPECT_NE(message(spec).find("think_time_s"), std::string::npos);
  spec = {};
  spec.sessions = 0;
  EXPECT_NE(message(spec).find("sessions"), std::string::npos);
  spec = {};
  spec.system_prompt_len = spec.max_context;
  EXPECT_NE(message(spec).find("system_prompt_len"), std::string::npos);
  spec = {};
  spec.system_prompt_len = 4000;
  spec.max_context = 4001;  // no first message and answer fit beside the system prompt
  EXPECT_NE(message(spec).find("no session has a turn"), std::string::npos);
  spec = {};
  spec.block_tokens = 1;  // a 400,000-token prompt in one-token blocks: a row of 400,000 ids, past a CSV record
  spec.message_len_mean = 400000;
  spec.length_sigma = 0;
  spec.max_context = 1 << 24;
  EXPECT_NE(message(spec).find("too many blocks"), std::string::npos);
}

TEST(ArrivalsFile, SessionColumnsAreReadAndCheckedInTurnOrder) {
  auto read = [](const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    try {
      const auto r = xs::read_arrivals_file(path).requests;
      return std::to_string(r.size()) + " rows, session " + std::to_string(r.back().session) + " turn " +
             std::to_string(r.back().turn);
    } catch (const xpusim::core::InputError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(read("s1.csv", "arrival_s,in_len,out_len,session_id,turn\n0,10,5,7,1\n1,20,5,7,2\n"), "2 rows, session 7 turn 2");
  EXPECT_NE(read("s2.csv", "arrival_s,in_len,out_len,session_id\n0,10,5,7\n").find("session_id and turn come together"),
            std::string::npos);
  EXPECT_NE(read("s3.csv", "arrival_s,in_len,out_len,session_id,turn\n0,10,5,7,2\n1,20,5,7,1\n").find("comes after its turn 2"),
            std::string::npos);
  EXPECT_NE(read("s4.csv", "arrival_s,in_len,out_len,session_id,turn\n0,10,5,7,0\n").find("turn is not a whole number from 1"),
            std::string::npos);
  EXPECT_NE(read("s5.csv", "arrival_s,in_len,out_len,session_id,turn\n0,10,5,-3,1\n").find("session_id is not a whole number"),
            std::string::npos);
}

}  // namespace
