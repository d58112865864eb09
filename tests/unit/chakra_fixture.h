#pragma once
// Chakra trace fixtures shared by the workload, engine and CLI tests: the bytes of the worked
// examples of ../shared/reference/formats.md §2.2, and a multi-layer data-parallel training
// trace written through the generated protobuf classes (et_def.pb.h).

#include <cctype>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "et_def.pb.h"

namespace xpusim::test::chakra {

namespace pb = ChakraProtoMsg;

/// varint32 length + the serialized message (the Chakra stream framing).
inline std::string frame(const google::protobuf::Message& m) {
  std::string body = m.SerializeAsString();
  std::string out;
  auto n = static_cast<std::uint32_t>(body.size());
  do {
    unsigned char b = n & 0x7F;
    n >>= 7;
    if (n) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (n);
  return out + body;
}

inline std::string from_hex(const std::string& hex) {
  std::string out;
  std::string digits;
  for (char c : hex)
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) out.push_back(static_cast<char>(std::stoi(digits.substr(i, 2), nullptr, 16)));
  return out;
}

/// VERIFIED worked example 1: astra-sim's all_reduce/4npus_1MB/all_reduce.<rank>.et (81 bytes for
/// rank 0; ranks 1..3 carry their rank as the node id, 83 bytes).
inline std::string all_reduce_1mb(int rank) {
  std::string meta = from_hex("07 0a 05") + "0.0.4";
  std::string node_body = from_hex("12 14") + "all_reduce_4npus_1MB" + from_hex("18 07") +
                          from_hex("52 0e 0a 09") + "is_cpu_op" + from_hex("d8 01 00") +
                          from_hex("52 0d 0a 09") + "comm_type" + from_hex("48 00") +
                          from_hex("52 0f 0a 09") + "comm_size" + from_hex("48 80 80 40");
  if (rank == 0) return meta + from_hex("48") + node_body;
  return meta + from_hex("4a 08") + std::string(1, static_cast<char>(rank)) + node_body;
}

/// DERIVED worked example 2 (158 bytes): gemm + ar.
inline std::string gemm_and_ar() {
  return from_hex(
      "07 0a 05 30 2e 30 2e 34"
      "43 08 05 12 04 67 65 6d 6d 18 04 2a 02 03 04 38 0c"
      "52 0e 0a 07 6e 75 6d 5f 6f 70 73 48 80 80 80 20"
      "52 11 0a 0b 74 65 6e 73 6f 72 5f 73 69 7a 65 68 80 80 0c"
      "52 0e 0a 09 69 73 5f 63 70 75 5f 6f 70 d8 01 00"
      "51 08 06 12 02 61 72 18 07 2a 01 05"
      "52 0d 0a 09 63 6f 6d 6d 5f 74 79 70 65 48 00"
      "52 0f 0a 09 63 6f 6d 6d 5f 73 69 7a 65 48 80 80 40"
      "52 15 0a 0c 69 6e 76 6f 6c 76 65 64 5f 64 69 6d e2 01 04 0a 02 01 00"
      "52 0d 0a 07 70 67 5f 6e 61 6d 65 ea 01 01 31");
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string metadata() {
  pb::GlobalMetadata m;
  m.set_version("0.0.4");
  return frame(m);
}

inline pb::AttributeProto* attr(pb::Node& n, const std::string& name) {
  pb::AttributeProto* a = n.add_attr();
  a->set_name(name);
  return a;
}

/// Sizes of the training fixture.
struct TrainingShape {
  int ranks = 4;
  int layers = 4;
  std::uint64_t gemm_flop = 4ULL << 40;       ///< per forward GEMM (backward: twice)
  std::uint64_t gemm_bytes = 96ULL << 20;     ///< bytes touched per forward GEMM
  std::uint64_t grad_bytes = 64ULL << 20;     ///< all-reduced gradient per layer
  std::uint64_t message_bytes = 8ULL << 20;   ///< rank 0 → rank 1 send
};

/// One rank of a data-parallel training step: a metadata node, a CPU op, forward GEMMs in a
/// chain, backward GEMMs in reverse (twice the FLOPs), one gradient all-reduce per layer after
/// its backward GEMM (overlapping the next backward GEMM), and a message from rank 0 to rank 1
/// that rank 1's first backward GEMM waits for. Integer attributes use several oneof members.
inline std::string training_rank(const TrainingShape& s, int rank) {
  std::string out = metadata();
  std::uint64_t id = 100;
  auto node = [&](const std::string& name, pb::NodeType t) {
    pb::Node n;
    n.set_id(id++);
    n.set_name(name);
    n.set_type(t);
    return n;
  };
  pb::Node meta = node("process_group_info", pb::METADATA_NODE);
  out += frame(meta);
  pb::Node cpu = node("dataloader", pb::COMP_NODE);
  cpu.set_duration_micros(20);
  attr(cpu, "is_cpu_op")->set_bool_val(true);
  out += frame(cpu);
  std::uint64_t prev = cpu.id();
  for (int l = 0; l < s.layers; ++l) {
    pb::Node f = node("fwd_gemm_" + std::to_string(l), pb::COMP_NODE);
    f.add_data_deps(prev);
    attr(f, "num_ops")->set_int64_val(static_cast<std::int64_t>(s.gemm_flop));
    attr(f, "tensor_size")->set_uint64_val(s.gemm_bytes);
    attr(f, "is_cpu_op")->set_int32_val(0);  // as STG writes it
    out += frame(f);
    prev = f.id();
  }
  std::uint64_t recv_id = 0;
  if (rank == 0 && s.ranks > 1) {
    pb::Node send = node("send_act", pb::COMM_SEND_NODE);
    send.add_data_deps(prev);
    attr(send, "comm_dst")->set_int32_val(1);
    attr(send, "comm_tag")->set_int32_val(7);
    attr(send, "comm_size")->set_uint64_val(s.message_bytes);
    out += frame(send);
  } else if (rank == 1) {
    pb::Node recv = node("recv_act", pb::COMM_RECV_NODE);
    attr(recv, "comm_src")->set_sint32_val(0);
    attr(recv, "comm_tag")->set_fixed32_val(7);
    attr(recv, "comm_size")->set_int64_val(static_cast<std::int64_t>(s.message_bytes));
    out += frame(recv);
    recv_id = recv.id();
  }
  for (int l = s.layers - 1; l >= 0; --l) {
    pb::Node b = node("bwd_gemm_" + std::to_string(l), pb::COMP_NODE);
    b.add_data_deps(prev);
    if (recv_id && l == s.layers - 1) b.add_ctrl_deps(recv_id);
    attr(b, "num_ops")->set_uint64_val(2 * s.gemm_flop);
    attr(b, "tensor_size")->set_fixed64_val(2 * s.gemm_bytes);
    out += frame(b);
    prev = b.id();
    pb::Node ar = node("grad_all_reduce_" + std::to_string(l), pb::COMM_COLL_NODE);
    ar.add_data_deps(b.id());
    attr(ar, "comm_type")->set_int64_val(pb::ALL_REDUCE);
    attr(ar, "comm_size")->set_int64_val(static_cast<std::int64_t>(s.grad_bytes));
    attr(ar, "pg_name")->set_string_val("0");
    attr(ar, "involved_dim")->mutable_bool_list()->add_values(true);
    out += frame(ar);
  }
  return out;
}

/// Writes `dir/prefix.<rank>.et` for every rank; returns dir/prefix.
inline std::string write_training(const std::string& dir, const std::string& prefix, const TrainingShape& s) {
  const std::string p = dir + prefix;
  for (int r = 0; r < s.ranks; ++r) write_file(p + "." + std::to_string(r) + ".et", training_rank(s, r));
  return p;
}

}  // namespace xpusim::test::chakra
