// Chakra replay (engine/replay.h): the all-reduce microbenchmark costs exactly one
// net::collective_cost; a multi-layer training trace gives roofline compute, overlapped
// communication and a deterministic result; hostile graphs are InputErrors with messages.

#include "xpusim/engine/replay.h"

#include <gtest/gtest.h>

#include "../chakra_fixture.h"
#include "../shipped_data.h"
#include "xpusim/compute/chip_model.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/net/collective.h"

namespace {

using namespace xpusim;
using workload::ChakraCommType;
using workload::ChakraNode;
using workload::ChakraNodeType;
using workload::ChakraTrace;
namespace fx = xpusim::test::chakra;

struct Fixture {
  const calib::Params& params = test::shipped();
  const hw::SystemSpec& sys = test::catalog().system("h100-sxm-dgx", "--system");

  engine::ReplayResult run(std::vector<ChakraTrace> traces, engine::ReplayOptions opt = {}) {
    engine::ReplayInput in{std::move(traces), &sys, &params, std::move(opt)};
    return engine::replay(in);
  }
  net::Topology topo(long long chips) {
    net::TopologyOptions o;
    o.params = net::network_params(params);
    return net::Topology::build(sys, chips, o);
  }
};

std::string error_of(Fixture& f, std::vector<ChakraTrace> traces, engine::ReplayOptions opt = {}) {
  try {
    f.run(std::move(traces), std::move(opt));
  } catch (const core::InputError& e) {
    return e.diagnostics().at(0).to_string();
  }
  return "(no error)";
}

ChakraNode comp(std::uint64_t id, std::vector<std::uint64_t> deps, std::uint64_t us = 10) {
  ChakraNode n;
  n.id = id;
  n.name = "c" + std::to_string(id);
  n.type = ChakraNodeType::Comp;
  n.data_deps = std::move(deps);
  n.duration_us = us;
  return n;
}

ChakraNode coll(std::uint64_t id, ChakraCommType t, std::uint64_t bytes, std::vector<std::uint64_t> deps = {},
                std::string pg = "") {
  ChakraNode n;
  n.id = id;
  n.name = "coll" + std::to_string(id);
  n.type = ChakraNodeType::CommColl;
  n.comm_type = t;
  n.comm_size = bytes;
  n.data_deps = std::move(deps);
  n.pg_name = std::move(pg);
  return n;
}

ChakraTrace trace(std::string file, std::vector<ChakraNode> nodes) { return ChakraTrace{std::move(file), "0.0.4", std::move(nodes)}; }

TEST(Replay, AllReduceMicrobenchmarkIsOneCollective) {
  Fixture f;
  std::vector<ChakraTrace> traces;
  for (int r = 0; r < 4; ++r)
    traces.push_back(workload::parse_chakra(fx::all_reduce_1mb(r), "all_reduce." + std::to_string(r) + ".et"));
  const auto res = f.run(traces);
  const auto expect = net::collective_cost(f.topo(4), net::CollectiveKind::AllReduce, core::bytes(1048576), {4, 1});
  EXPECT_EQ(res.total_ps, core::to_sim_time(expect.time));
  EXPECT_GT(res.total_ps, 0);
  EXPECT_EQ(res.collectives.at("all-reduce").count, 1);
  EXPECT_EQ(res.collectives.at("all-reduce").bytes, 1048576u);
  EXPECT_EQ(res.node_counts.at("COMM_COLL_NODE"), 4);
  for (const auto& r : res.ranks) EXPECT_EQ(r.finish_ps, res.total_ps);
}

TEST(Replay, TrainingTraceOverlapsCommunicationWithCompute) {
  Fixture f;
  const fx::TrainingShape s;
  std::vector<ChakraTrace> traces;
  for (int r = 0; r < s.ranks; ++r) traces.push_back(workload::parse_chakra(fx::training_rank(s, r), "train." + std::to_string(r) + ".et"));
  const auto res = f.run(traces);
  // Compute: roofline per GEMM on the H100 (bf16), forward F and backward 2F FLOPs.
  const compute::ChipModel chip(f.sys.chip, compute::calibration_for(f.sys.chip, f.params));
  auto gemm = [&](double flop, double bytes) {
    return core::to_sim_time(core::max(core::flops(flop) / chip.achievable_flops(core::Dtype::Bf16),
                                       chip.memory_time(core::bytes(bytes))));
  };
  const core::SimTime compute = s.layers * (gemm(double(s.gemm_flop), double(s.gemm_bytes)) +
                                            gemm(2.0 * double(s.gemm_flop), 2.0 * double(s.gemm_bytes)));
  const core::SimTime ar = core::to_sim_time(
      net::collective_cost(f.topo(s.ranks), net::CollectiveKind::AllReduce, core::bytes(double(s.grad_bytes)), {s.ranks, 1}).time);
  for (const auto& r : res.ranks) {
    EXPECT_EQ(r.compute_ps, compute);
    EXPECT_EQ(r.cpu_ps, 20'000'000);  // the 20 us dataloader CPU op
    EXPECT_GE(r.comm_ps, s.layers * ar);
    EXPECT_GE(r.finish_ps, r.compute_ps + r.cpu_ps);
  }
  const auto& crit = res.ranks[static_cast<std::size_t>(res.critical_rank)];
  // All-reduces of layers L-1..1 hide under the next backward GEMM: exposed < communication.
  EXPECT_LT(engine::exposed_comm_ps(crit), crit.comm_ps);
  EXPECT_LE(res.total_ps, crit.cpu_ps + crit.compute_ps + crit.comm_ps + crit.wait_ps);
  EXPECT_EQ(res.collectives.at("all-reduce").count, s.layers);
  EXPECT_EQ(res.collectives.at("send-recv").count, 1);
  EXPECT_EQ(res.node_counts.at("COMP_NODE"), s.ranks * (2 * s.layers + 1));
  EXPECT_EQ(res.node_counts.at("METADATA_NODE"), s.ranks);
  EXPECT_EQ(res.node_counts.at("COMM_SEND_NODE"), 1);
  EXPECT_EQ(res.node_counts.at("COMM_RECV_NODE"), 1);
  // Deterministic: the same inputs, the same events.
  const auto again = f.run(traces);
  ASSERT_EQ(again.events.size(), res.events.size());
  for (std::size_t i = 0; i < res.events.size(); ++i) {
    EXPECT_EQ(again.events[i].start_ps, res.events[i].start_ps);
    EXPECT_EQ(again.events[i].node_id, res.events[i].node_id);
  }
  // By recorded durations: the GEMMs have none, the CPU op 20 us, communication 0.
  engine::ReplayOptions by_duration;
  by_duration.use_durations = true;
  EXPECT_EQ(f.run(traces, by_duration).total_ps, 20'000'000);
}

TEST(Replay, ComputeSerialisesAndCommunicationOverlaps) {
  Fixture f;
  // Two independent 10 us compute nodes run one after the other; a 1-rank collective (zero time)
  // and the CPU op run beside them.
  ChakraNode cpu = comp(3, {}, 7);
  cpu.is_cpu_op = true;
  const auto res = f.run({trace("one.0.et", {comp(1, {}), comp(2, {}), cpu})});
  EXPECT_EQ(res.total_ps, 20'000'000);
  EXPECT_EQ(res.ranks[0].compute_ps, 20'000'000);
  EXPECT_EQ(res.ranks[0].cpu_ps, 7'000'000);
}

TEST(Replay, CommGroupsSelectTheirRanks) {
  Fixture f;
  engine::ReplayOptions opt;
  opt.comm_groups["5"] = {0, 2};
  std::vector<ChakraTrace> traces;
  for (int r = 0; r < 4; ++r) {
    std::vector<ChakraNode> nodes;
    if (r % 2 == 0) nodes.push_back(coll(1, ChakraCommType::AllGather, 1 << 20, {}, "5"));
    traces.push_back(trace("g." + std::to_string(r) + ".et", nodes));
  }
  const auto res = f.run(traces, opt);
  const auto expect = net::collective_cost(f.topo(4), net::CollectiveKind::AllGather, core::bytes(1 << 20), {2, 2});
  EXPECT_EQ(res.total_ps, core::to_sim_time(expect.time));
  EXPECT_EQ(res.ranks[1].finish_ps, 0);
}

TEST(Replay, HostileGraphsAreInputErrors) {
  Fixture f;
  struct Case {
    std::vector<ChakraTrace> traces;
    std::string expect;
  };
  ChakraNode send;
  send.id = 1;
  send.name = "lonely_send";
  send.type = ChakraNodeType::CommSend;
  send.comm_dst = 1;
  send.comm_size = 64;
  ChakraNode gather = coll(1, ChakraCommType::Gather, 64);
  const std::vector<Case> cases = {
      {{trace("a.0.et", {comp(1, {99})})}, "a.0.et: node[0] (id 1 'c1').data_deps: depends on a node id that is not in the file (got '99'"},
      {{trace("a.0.et", {comp(1, {3}), comp(2, {1}), comp(3, {2})})}, "dependency cycle"},
      {{trace("a.0.et", {comp(1, {1})})}, "dependency cycle"},
      {{trace("a.0.et", {coll(1, ChakraCommType::AllReduce, 64)}), trace("a.1.et", {})},
       "group '0'"},
      {{trace("a.0.et", {coll(1, ChakraCommType::AllReduce, 64)}), trace("a.1.et", {coll(1, ChakraCommType::AllGather, 64)})},
       "does not match rank 0"},
      {{trace("a.0.et", {coll(1, ChakraCommType::AllReduce, 64, {}, "7")})}, "pg_name: process group not defined (got '7'"},
      {{trace("a.0.et", {send}), trace("a.1.et", {})}, "sends and receives do not pair up"},
      {{trace("a.0.et", {gather})}, "unsupported collective (got 'GATHER'"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(f, c.traces);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
  }
  // Two groups' collectives issued in opposite orders on ranks 0 and 1: a deadlock.
  engine::ReplayOptions opt;
  opt.comm_groups["9"] = {0, 1};
  const std::string msg = error_of(
      f,
      {trace("a.0.et", {coll(1, ChakraCommType::AllReduce, 64), coll(2, ChakraCommType::AllReduce, 64, {1}, "9")}),
       trace("a.1.et", {coll(1, ChakraCommType::AllReduce, 64, {}, "9"), coll(2, ChakraCommType::AllReduce, 64, {1})})},
      opt);
  EXPECT_NE(msg.find("deadlock"), std::string::npos) << msg;
  EXPECT_NE(msg.find("rank 1 node[0] (id 1 'coll1') waits for the other ranks of group '9'"), std::string::npos) << msg;
  opt.comm_groups["9"] = {0, 4};
  EXPECT_NE(error_of(f, {trace("a.0.et", {}), trace("a.1.et", {})}, opt).find("--comm-groups.9: a group needs distinct ranks"),
            std::string::npos);
}

}  // namespace

namespace {

TEST(Replay, SendIsEagerAndTheReceiveWaitsForTheData) {
  Fixture f;
  ChakraNode send;
  send.id = 2;
  send.type = ChakraNodeType::CommSend;
  send.comm_dst = 1;
  send.comm_tag = 3;
  send.comm_size = 1 << 20;
  send.data_deps = {1};
  ChakraNode recv;
  recv.id = 1;
  recv.type = ChakraNodeType::CommRecv;
  recv.comm_src = 0;
  recv.comm_tag = 3;
  recv.comm_size = 1 << 20;
  const auto res = f.run({trace("p.0.et", {comp(1, {}, 10), send}), trace("p.1.et", {recv, comp(2, {1}, 5)})});
  const core::SimTime p2p = core::to_sim_time(
      net::collective_cost(f.topo(2), net::CollectiveKind::SendRecv, core::bytes(1 << 20), {2, 1}).time);
  EXPECT_GT(p2p, 0);
  EXPECT_EQ(res.ranks[0].finish_ps, 10'000'000 + p2p);
  EXPECT_EQ(res.ranks[1].finish_ps, 10'000'000 + p2p + 5'000'000);
  EXPECT_EQ(res.ranks[1].wait_ps, 10'000'000);  // the receive was ready at 0, the data left at 10 us
}

TEST(Replay, MemoryBarrierAndBroadcastNodes) {
  Fixture f;
  const compute::ChipModel chip(f.sys.chip, compute::calibration_for(f.sys.chip, f.params));
  ChakraNode load;
  load.id = 1;
  load.type = ChakraNodeType::MemLoad;
  load.tensor_size = 1ULL << 30;
  EXPECT_EQ(f.run({trace("m.0.et", {load})}).total_ps, core::to_sim_time(chip.memory_time(core::gib(1))));
  // A barrier: rank 1's node after it starts when rank 0 arrives at 10 us.
  ChakraNode barrier = coll(2, ChakraCommType::Barrier, 0, {1});
  barrier.comm_size.reset();
  ChakraNode barrier1 = coll(1, ChakraCommType::Barrier, 0);
  barrier1.comm_size.reset();
  const auto b = f.run({trace("b.0.et", {comp(1, {}, 10), barrier}), trace("b.1.et", {barrier1, comp(2, {1}, 1)})});
  EXPECT_EQ(b.ranks[1].finish_ps, 11'000'000);
  EXPECT_EQ(b.collectives.at("barrier").count, 1);
  const auto bc = f.run({trace("c.0.et", {coll(1, ChakraCommType::Broadcast, 1 << 24)}),
                         trace("c.1.et", {coll(1, ChakraCommType::Broadcast, 1 << 24)})});
  EXPECT_EQ(bc.total_ps, core::to_sim_time(net::collective_cost(f.topo(2), net::CollectiveKind::Broadcast,
                                                                core::bytes(1 << 24), {2, 1}).time));
}

TEST(Replay, IrregularGroupsAreNotedAndCpuCommunicationIsRefused) {
  Fixture f;
  engine::ReplayOptions opt;
  opt.comm_groups["2"] = {0, 1, 3};
  std::vector<ChakraTrace> traces;
  for (int r = 0; r < 4; ++r)
    traces.push_back(trace("i." + std::to_string(r) + ".et",
                           r == 2 ? std::vector<ChakraNode>{} : std::vector<ChakraNode>{coll(1, ChakraCommType::AllReduce, 4096, {}, "2")}));
  const auto res = f.run(traces, opt);
  ASSERT_EQ(res.notes.size(), 1u);
  EXPECT_NE(res.notes[0].find("group '2' is not evenly strided"), std::string::npos);
  ChakraNode cpu_ar = coll(1, ChakraCommType::AllReduce, 64);
  cpu_ar.is_cpu_op = true;
  EXPECT_NE(error_of(f, {trace("x.0.et", {cpu_ar})}).find("is_cpu_op: a communication node cannot be a CPU op"),
            std::string::npos);
}

}  // namespace
