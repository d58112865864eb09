// The Chakra reader: the worked byte examples of formats.md §2.2 parse to exactly their fields;
// every integer oneof member and unpacked deps are accepted; malformed input is an InputError
// whose message names the file, the node and the value.

#include "xpusim/workload/chakra.h"

#include <gtest/gtest.h>

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstring>
#include <filesystem>

#include "../chakra_fixture.h"
#include "xpusim/core/diagnostics.h"

namespace {

using namespace xpusim;
using workload::ChakraCommType;
using workload::ChakraNodeType;
namespace fx = xpusim::test::chakra;

std::string error_of(const std::string& bytes) {
  try {
    workload::parse_chakra(bytes, "bad.0.et");
  } catch (const core::InputError& e) {
    return e.diagnostics().at(0).to_string();
  }
  return "(no error)";
}

TEST(Chakra, VerifiedAllReduceMicrobenchmarkParses) {
  const std::string rank0 = fx::all_reduce_1mb(0);
  ASSERT_EQ(rank0.size(), 81u);  // the size of astra-sim's all_reduce.0.et
  for (int r = 0; r < 4; ++r) {
    const auto t = workload::parse_chakra(fx::all_reduce_1mb(r), "all_reduce." + std::to_string(r) + ".et");
    EXPECT_EQ(t.version, "0.0.4");
    ASSERT_EQ(t.nodes.size(), 1u);
    const auto& n = t.nodes[0];
    EXPECT_EQ(n.id, static_cast<std::uint64_t>(r));
    EXPECT_EQ(n.name, "all_reduce_4npus_1MB");
    EXPECT_EQ(n.type, ChakraNodeType::CommColl);
    EXPECT_FALSE(n.is_cpu_op);
    EXPECT_EQ(n.comm_type, ChakraCommType::AllReduce);
    EXPECT_EQ(n.comm_size, 1048576u);
    EXPECT_TRUE(n.data_deps.empty() && n.ctrl_deps.empty());
    EXPECT_EQ(n.pg_name, "");
  }
}

TEST(Chakra, DerivedGemmAndAllReduceParsesToEveryField) {
  const std::string bytes = fx::gemm_and_ar();
  ASSERT_EQ(bytes.size(), 158u);
  const auto t = workload::parse_chakra(bytes, "derived.0.et");
  EXPECT_EQ(t.version, "0.0.4");
  ASSERT_EQ(t.nodes.size(), 2u);
  const auto& g = t.nodes[0];
  EXPECT_EQ(g.id, 5u);
  EXPECT_EQ(g.name, "gemm");
  EXPECT_EQ(g.type, ChakraNodeType::Comp);
  EXPECT_EQ(g.data_deps, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_TRUE(g.ctrl_deps.empty());
  EXPECT_EQ(g.duration_us, 12u);
  EXPECT_EQ(g.num_ops, 67108864u);
  EXPECT_EQ(g.tensor_size, 196608u);
  EXPECT_FALSE(g.is_cpu_op);
  EXPECT_FALSE(g.comm_type.has_value());
  const auto& a = t.nodes[1];
  EXPECT_EQ(a.id, 6u);
  EXPECT_EQ(a.name, "ar");
  EXPECT_EQ(a.type, ChakraNodeType::CommColl);
  EXPECT_EQ(a.data_deps, (std::vector<std::uint64_t>{5}));
  EXPECT_EQ(a.comm_type, ChakraCommType::AllReduce);
  EXPECT_EQ(a.comm_size, 1048576u);
  EXPECT_EQ(a.involved_dim, (std::vector<bool>{true, false}));
  EXPECT_EQ(a.pg_name, "1");
  EXPECT_FALSE(a.num_ops.has_value());
}

TEST(Chakra, EveryIntegerMemberIsAccepted) {
  using Setter = void (*)(fx::pb::AttributeProto*);
  const std::vector<Setter> setters = {
      [](fx::pb::AttributeProto* a) { a->set_int32_val(42); },    [](fx::pb::AttributeProto* a) { a->set_int64_val(42); },
      [](fx::pb::AttributeProto* a) { a->set_uint32_val(42); },   [](fx::pb::AttributeProto* a) { a->set_uint64_val(42); },
      [](fx::pb::AttributeProto* a) { a->set_sint32_val(42); },   [](fx::pb::AttributeProto* a) { a->set_sint64_val(42); },
      [](fx::pb::AttributeProto* a) { a->set_fixed32_val(42); },  [](fx::pb::AttributeProto* a) { a->set_fixed64_val(42); },
      [](fx::pb::AttributeProto* a) { a->set_sfixed32_val(42); }, [](fx::pb::AttributeProto* a) { a->set_sfixed64_val(42); }};
  for (std::size_t k = 0; k < setters.size(); ++k) {
    fx::pb::Node n;
    n.set_id(1);
    n.set_type(fx::pb::COMP_NODE);
    for (const char* name : {"num_ops", "tensor_size", "comm_size", "comm_tag"}) setters[k](fx::attr(n, name));
    const auto t = workload::parse_chakra(fx::metadata() + fx::frame(n), "ints.0.et");
    EXPECT_EQ(t.nodes[0].num_ops, 42u) << k;
    EXPECT_EQ(t.nodes[0].tensor_size, 42u) << k;
    EXPECT_EQ(t.nodes[0].comm_size, 42u) << k;
    EXPECT_EQ(t.nodes[0].comm_tag, 42) << k;
  }
}

TEST(Chakra, UnpackedDepsAreAccepted) {
  // Node{id 9, type COMP, data_deps 3 and 4 as two unpacked varint fields (tag 0x28), ctrl_deps 2 (0x20)}.
  const std::string node = fx::from_hex("08 09 18 04 28 03 28 04 20 02");
  const std::string bytes = fx::metadata() + std::string(1, static_cast<char>(node.size())) + node;
  const auto t = workload::parse_chakra(bytes, "unpacked.0.et");
  EXPECT_EQ(t.nodes.at(0).data_deps, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(t.nodes.at(0).ctrl_deps, (std::vector<std::uint64_t>{2}));
}

TEST(Chakra, MalformedInputsNameFileNodeAndValue) {
  const std::string good = fx::all_reduce_1mb(0);
  struct Case {
    std::string bytes, expect;
  };
  fx::pb::Node unknown_type;
  unknown_type.set_id(3);
  unknown_type.set_name("odd");
  unknown_type.set_type(static_cast<fx::pb::NodeType>(42));
  fx::pb::Node bad_comm;
  bad_comm.set_id(4);
  bad_comm.set_type(fx::pb::COMM_COLL_NODE);
  fx::attr(bad_comm, "comm_type")->set_int64_val(12);
  fx::pb::Node string_ops;
  string_ops.set_id(5);
  string_ops.set_type(fx::pb::COMP_NODE);
  fx::attr(string_ops, "num_ops")->set_string_val("lots");
  fx::pb::Node dup;
  dup.set_id(0);
  dup.set_type(fx::pb::COMP_NODE);
  fx::pb::Node forever;  // 2^64 - 1 us made a negative compute time (issue 48)
  forever.set_id(6);
  forever.set_name("forever");
  forever.set_type(fx::pb::COMP_NODE);
  forever.set_duration_micros(~0ULL);
  const std::vector<Case> cases = {
      {good.substr(0, 50), "truncated file: the message length runs past the end"},
      {good.substr(0, 8), "(no error)"},  // the metadata alone is a valid, empty trace
      {fx::metadata() + fx::from_hex("ff ff ff ff 0f"), "the message length runs past the end"},
      {fx::metadata() + fx::from_hex("ff ff ff ff 7f"), "bad varint32 length prefix"},
      {fx::metadata() + fx::from_hex("80 80"), "the length prefix runs past the end"},
      {fx::metadata() + fx::from_hex("ff ff ff ff ff 01"), "bad varint32 length prefix"},
      {fx::metadata() + fx::frame(unknown_type), "node[0] (id 3 'odd').type: unknown NodeType value (got '42'"},
      {fx::metadata() + fx::frame(bad_comm), "attr.comm_type: unknown CollectiveCommType value (got '12'"},
      {fx::metadata() + fx::frame(string_ops), "attr.num_ops: attribute holds string_val"},
      {good + fx::frame(dup), "duplicate node id (got '0'"},
      {fx::metadata() + fx::frame(forever), "duration_micros: a node longer than the simulation clock's range allows"},
      {fx::from_hex("1f 8b 08 00"), "corrupt or truncated gzip data"},
      {"", "empty file"},
      {fx::metadata() + fx::from_hex("02 ff ff"), "not a valid Chakra Node message"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.bytes);
    EXPECT_NE(msg.find(c.expect), std::string::npos) << msg;
    if (c.expect != "(no error)") {
      EXPECT_EQ(msg.rfind("bad.0.et", 0), 0u) << msg;
    }
  }
}

TEST(Chakra, GzipCompressedTracesAreInflated) {
  // gzip -9n of the VERIFIED rank-0 microbenchmark file, written with protobuf's GzipOutputStream.
  std::string gz;
  {
    google::protobuf::io::StringOutputStream raw(&gz);
    google::protobuf::io::GzipOutputStream out(&raw);
    const std::string plain = fx::all_reduce_1mb(0);
    void* data = nullptr;
    int size = 0;
    ASSERT_TRUE(out.Next(&data, &size));
    ASSERT_GE(size, static_cast<int>(plain.size()));
    std::memcpy(data, plain.data(), plain.size());
    out.BackUp(size - static_cast<int>(plain.size()));
    ASSERT_TRUE(out.Close());
  }
  ASSERT_EQ(static_cast<unsigned char>(gz[0]), 0x1F);
  const auto t = workload::parse_chakra(gz, "all_reduce.0.et.gz");
  ASSERT_EQ(t.nodes.size(), 1u);
  EXPECT_EQ(t.nodes[0].comm_size, 1048576u);
  EXPECT_NE(error_of(gz.substr(0, gz.size() / 2)).find("corrupt or truncated gzip data"), std::string::npos);
}

TEST(Chakra, RankFilesAreFoundContiguousFromZero) {
  const std::string dir = testing::TempDir() + "xs_chakra_files/";
  std::filesystem::create_directories(dir);
  for (int r = 0; r < 3; ++r) fx::write_file(dir + "t." + std::to_string(r) + ".et", fx::all_reduce_1mb(r));
  EXPECT_EQ(workload::chakra_rank_files(dir + "t", std::nullopt).size(), 3u);
  EXPECT_EQ(workload::chakra_rank_files(dir + "t", 3).size(), 3u);
  auto message = [&](std::optional<long long> n, const std::string& prefix) {
    try {
      workload::chakra_rank_files(prefix, n);
    } catch (const core::InputError& e) {
      return e.diagnostics().at(0).to_string();
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message(4, dir + "t").find("missing rank file " + dir + "t.3.et"), std::string::npos);
  EXPECT_NE(message(2, dir + "t").find("more ranks than --chips"), std::string::npos);
  EXPECT_NE(message(std::nullopt, dir + "none").find("no trace file " + dir + "none.0.et"), std::string::npos);
  EXPECT_NE(message(std::nullopt, dir + "t.0.et").find("no trace file"), std::string::npos);
}

}  // namespace
