// Chakra execution-trace reader: length-delimited protobuf stream → plain ChakraNode structs.
// The framing (varint32 lengths) is read here so that every length is checked against the bytes
// left before anything is allocated; each message is then parsed by the generated classes.

#include "xpusim/workload/chakra.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include <zlib.h>

#include "et_def.pb.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/limits.h"

namespace xpusim::workload {

namespace pb = ChakraProtoMsg;

std::string chakra_node_type_name(ChakraNodeType t) {
  return pb::NodeType_Name(static_cast<pb::NodeType>(t));
}

std::string chakra_comm_type_name(ChakraCommType t) {
  return pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(t));
}

namespace {

[[noreturn]] void bad(const std::string& file, std::string path, std::string message, std::string value = {},
                      std::string expected = {}) {
  fail_in_trace(file, std::move(path), std::move(message), std::move(value), std::move(expected));
}

/// The framing cursor: a varint32 length, then that many bytes, never past the end.
struct Cursor {
  std::string_view bytes;
  std::size_t pos = 0;
  const std::string& file;

  bool done() const { return pos >= bytes.size(); }

  std::string_view next_message(long long index) {
    const std::size_t start = pos;
    const std::string where = "message " + std::to_string(index) + " at byte " + std::to_string(start);
    std::uint64_t len = 0;
    for (int shift = 0;; shift += 7) {
      if (pos >= bytes.size())
        bad(file, where, "truncated file: the length prefix runs past the end of the file",
            std::to_string(bytes.size()) + " bytes", "a complete varint32 length");
      if (shift > 28) bad(file, where, "bad varint32 length prefix (more than 5 bytes)", {}, "a varint32 length");
      const auto b = static_cast<unsigned char>(bytes[pos++]);
      len |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) break;
    }
    if (len > std::numeric_limits<std::uint32_t>::max())
      bad(file, where, "bad varint32 length prefix", std::to_string(len), "a length below 2^32");
    const std::size_t left = bytes.size() - pos;
    if (len > left)
      bad(file, where, "truncated file: the message length runs past the end of the file",
          std::to_string(len) + " bytes", "at most the " + std::to_string(left) + " bytes left");
    if (len > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
      bad(file, where, "message too long for protobuf", std::to_string(len) + " bytes", "at most 2^31 - 1 bytes");
    std::string_view msg = bytes.substr(pos, static_cast<std::size_t>(len));
    pos += static_cast<std::size_t>(len);
    return msg;
  }
};

/// An attribute's integer (any integer member of the oneof) as sign and magnitude.
struct Integer {
  bool negative = false;
  std::uint64_t magnitude = 0;
};

Integer from_signed(long long v) {
  return v < 0 ? Integer{true, 0ULL - static_cast<std::uint64_t>(v)} : Integer{false, static_cast<std::uint64_t>(v)};
}

std::optional<Integer> integer_of(const pb::AttributeProto& a) {
  using A = pb::AttributeProto;
  switch (a.value_case()) {
    case A::kInt32Val: return from_signed(a.int32_val());
    case A::kInt64Val: return from_signed(a.int64_val());
    case A::kSint32Val: return from_signed(a.sint32_val());
    case A::kSint64Val: return from_signed(a.sint64_val());
    case A::kSfixed32Val: return from_signed(a.sfixed32_val());
    case A::kSfixed64Val: return from_signed(a.sfixed64_val());
    case A::kUint32Val: return Integer{false, a.uint32_val()};
    case A::kUint64Val: return Integer{false, a.uint64_val()};
    case A::kFixed32Val: return Integer{false, a.fixed32_val()};
    case A::kFixed64Val: return Integer{false, a.fixed64_val()};
    default: return std::nullopt;
  }
}

const char* kIntegerMembers = "an integer member (int32/int64/uint32/uint64/sint32/sint64/fixed32/fixed64/sfixed32/sfixed64)";

/// Reads the attributes of one node; `where` names the node in diagnostics.
class AttrReader {
 public:
  AttrReader(const std::string& file, const std::string& where) : file_(file), where_(where) {}

  std::string member(const pb::AttributeProto& a) const {
    if (a.value_case() == pb::AttributeProto::VALUE_NOT_SET) return "no value";
    return pb::AttributeProto::descriptor()->FindFieldByNumber(a.value_case())->name();
  }

  std::uint64_t unsigned_of(const pb::AttributeProto& a) const {
    const auto v = integer_of(a);
    if (!v) bad(file_, path(a), "attribute holds " + member(a), member(a), kIntegerMembers);
    if (v->negative) bad(file_, path(a), "negative value", "-" + std::to_string(v->magnitude), "an integer >= 0");
    return v->magnitude;
  }

  long long signed_of(const pb::AttributeProto& a) const {
    const auto v = integer_of(a);
    if (!v) bad(file_, path(a), "attribute holds " + member(a), member(a), kIntegerMembers);
    const auto max = static_cast<std::uint64_t>(std::numeric_limits<long long>::max());
    if (v->magnitude > max) bad(file_, path(a), "value out of range", std::to_string(v->magnitude), "a 64-bit signed integer");
    const auto m = static_cast<long long>(v->magnitude);
    return v->negative ? -m : m;
  }

  bool bool_of(const pb::AttributeProto& a) const {
    if (a.value_case() == pb::AttributeProto::kBoolVal) return a.bool_val();
    return unsigned_of(a) != 0;  // STG writes is_cpu_op as int32_val 0
  }

  std::string string_of(const pb::AttributeProto& a) const {
    if (a.value_case() == pb::AttributeProto::kStringVal) return a.string_val();
    if (integer_of(a)) return std::to_string(signed_of(a));  // a numeric group id written as an integer
    bad(file_, path(a), "attribute holds " + member(a), member(a), "string_val");
  }

  std::vector<bool> bool_list_of(const pb::AttributeProto& a) const {
    if (a.value_case() != pb::AttributeProto::kBoolList) bad(file_, path(a), "attribute holds " + member(a), member(a), "bool_list");
    return {a.bool_list().values().begin(), a.bool_list().values().end()};
  }

  ChakraCommType comm_type_of(const pb::AttributeProto& a) const {
    const long long v = signed_of(a);
    if (!pb::CollectiveCommType_IsValid(static_cast<int>(v)) || v < 0 || v > 9)
      bad(file_, path(a), "unknown CollectiveCommType value", std::to_string(v),
          "0..9 (ALL_REDUCE=0, REDUCE, ALL_GATHER, GATHER, SCATTER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER, "
          "REDUCE_SCATTER_BLOCK, BARRIER=9)");
    return static_cast<ChakraCommType>(v);
  }

 private:
  std::string path(const pb::AttributeProto& a) const { return where_ + ".attr." + a.name(); }
  const std::string& file_;
  const std::string& where_;
};

void read_attributes(const pb::Node& msg, const std::string& file, const std::string& where, ChakraNode& n) {
  const AttrReader r(file, where);
  for (const pb::AttributeProto& a : msg.attr()) {
    const std::string& k = a.name();
    if (k == "is_cpu_op") n.is_cpu_op = r.bool_of(a);
    else if (k == "num_ops") n.num_ops = r.unsigned_of(a);
    else if (k == "tensor_size") n.tensor_size = r.unsigned_of(a);
    else if (k == "comm_type") n.comm_type = r.comm_type_of(a);
    else if (k == "comm_size") n.comm_size = r.unsigned_of(a);
    else if (k == "comm_src") n.comm_src = r.signed_of(a);
    else if (k == "comm_dst") n.comm_dst = r.signed_of(a);
    else if (k == "comm_tag") n.comm_tag = r.signed_of(a);
    else if (k == "pg_name") n.pg_name = r.string_of(a);
    else if (k == "involved_dim") n.involved_dim = r.bool_list_of(a);
    else if (k == "dtype") n.dtype = r.string_of(a);
    // Every other attribute (comm_priority, PyTorch's rf_id, op_schema, ...) is not used.
  }
}

ChakraNode to_node(const pb::Node& msg, const std::string& file, long long index) {
  ChakraNode n;
  n.id = msg.id();
  n.name = msg.name();
  const std::string where = "node[" + std::to_string(index) + "] (id " + std::to_string(n.id) + " '" + n.name + "')";
  const int type = static_cast<int>(msg.type());
  if (!pb::NodeType_IsValid(type))
    bad(file, where + ".type", "unknown NodeType value", std::to_string(type),
        "0..7 (INVALID_NODE, METADATA_NODE, MEM_LOAD_NODE, MEM_STORE_NODE, COMP_NODE, COMM_SEND_NODE, "
        "COMM_RECV_NODE, COMM_COLL_NODE)");
  n.type = static_cast<ChakraNodeType>(type);
  n.data_deps.assign(msg.data_deps().begin(), msg.data_deps().end());
  n.ctrl_deps.assign(msg.ctrl_deps().begin(), msg.ctrl_deps().end());
  n.start_time_us = msg.start_time_micros();
  n.duration_us = msg.duration_micros();
  const auto longest = static_cast<std::uint64_t>(core::limits::kTraceNodeMicros);
  if (n.duration_us > longest)
    bad(file, where + ".duration_micros", "a node longer than the simulation clock's range allows",
        std::to_string(n.duration_us), "at most " + std::to_string(longest) + " us (30 days)");
  read_attributes(msg, file, where, n);
  return n;
}

}  // namespace

void fail_in_trace(const std::string& file, std::string path, std::string message, std::string value,
                   std::string expected) {
  core::Diagnostic d;
  d.file = file;
  d.path = std::move(path);
  d.message = std::move(message);
  d.value = std::move(value);
  d.expected = std::move(expected);
  throw core::InputError(std::move(d));
}

namespace {

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F && static_cast<unsigned char>(bytes[1]) == 0x8B;
}

/// A gzip file's contents (every member of it), at most kMaxInflatedBytes (a bound against
/// decompression bombs). Corrupt or truncated data is an InputError.
std::string gunzip(std::string_view bytes, const std::string& file) {
  constexpr std::size_t kMaxInflatedBytes = std::size_t{16} << 30;  // 16 GiB
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) bad(file, "file", "cannot start zlib", {}, {});
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (out.size() > kMaxInflatedBytes) break;
    if (rc == Z_STREAM_END && z.avail_in > 0 && inflateReset(&z) == Z_OK) continue;  // another member
    if (rc != Z_OK) break;
  }
  const std::string why = z.msg ? z.msg : (rc == Z_BUF_ERROR ? "unexpected end of data" : "zlib code " + std::to_string(rc));
  inflateEnd(&z);
  if (out.size() > kMaxInflatedBytes)
    bad(file, "file", "gzip-compressed trace inflates past the 16 GiB limit", std::to_string(out.size()) + " bytes",
        "at most 16 GiB of trace");
  if (rc != Z_STREAM_END) bad(file, "file", "corrupt or truncated gzip data", why, "a complete gzip file");
  return out;
}

}  // namespace

ChakraTrace parse_chakra(std::string_view bytes, const std::string& file) {
  if (is_gzip(bytes)) {
    if (bytes.size() > std::numeric_limits<uInt>::max())
      bad(file, "file", "gzip-compressed trace over 4 GiB", std::to_string(bytes.size()) + " bytes", "a smaller file, or decompress it first");
    const std::string inflated = gunzip(bytes, file);
    if (is_gzip(inflated)) bad(file, "file", "gzip inside gzip", {}, "one level of compression");
    return parse_chakra(inflated, file);
  }
  if (bytes.empty()) bad(file, "file", "empty file", "0 bytes", "a GlobalMetadata message, then Node messages");
  ChakraTrace t;
  t.file = file;
  Cursor c{bytes, 0, file};
  const std::string_view meta = c.next_message(0);
  pb::GlobalMetadata gm;
  if (!gm.ParseFromArray(meta.data(), static_cast<int>(meta.size())))
    bad(file, "message 0 (GlobalMetadata)", "not a valid GlobalMetadata message", std::to_string(meta.size()) + " bytes",
        "a protobuf GlobalMetadata");
  t.version = gm.version();
  std::unordered_set<std::uint64_t> ids;
  for (long long index = 0; !c.done(); ++index) {
    const std::size_t at = c.pos;
    const std::string_view msg = c.next_message(index + 1);
    pb::Node node;
    if (!node.ParseFromArray(msg.data(), static_cast<int>(msg.size())))
      bad(file, "node[" + std::to_string(index) + "] at byte " + std::to_string(at), "not a valid Chakra Node message",
          std::to_string(msg.size()) + " bytes", "a protobuf Node");
    ChakraNode n = to_node(node, file, index);
    if (!ids.insert(n.id).second)
      bad(file, "node[" + std::to_string(index) + "] (id " + std::to_string(n.id) + " '" + n.name + "').id",
          "duplicate node id", std::to_string(n.id), "ids unique within one file");
    t.nodes.push_back(std::move(n));
  }
  return t;
}

ChakraTrace read_chakra(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, "file", "cannot open the trace file", path, "a readable Chakra .et file");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) bad(path, "file", "error while reading the trace file", path, "a readable Chakra .et file");
  const std::string bytes = ss.str();
  return parse_chakra(bytes, path);
}

std::vector<std::string> chakra_rank_files(const std::string& prefix, std::optional<long long> ranks) {
  namespace fs = std::filesystem;
  auto path_of = [&](long long r) { return prefix + "." + std::to_string(r) + ".et"; };
  std::vector<std::string> files;
  if (ranks) {
    for (long long r = 0; r < *ranks; ++r) {
      if (!fs::is_regular_file(path_of(r)))
        core::fail("--chips", "missing rank file " + path_of(r), std::to_string(*ranks),
                   "one file PREFIX.<rank>.et for every rank 0.." + std::to_string(*ranks - 1));
      files.push_back(path_of(r));
    }
    if (fs::exists(path_of(*ranks)))
      core::fail("--chips", "the trace has more ranks than --chips: " + path_of(*ranks) + " exists",
                 std::to_string(*ranks), "the number of rank files PREFIX.0.et, PREFIX.1.et, ...");
    return files;
  }
  for (long long r = 0; fs::is_regular_file(path_of(r)); ++r) files.push_back(path_of(r));
  if (files.empty())
    core::fail("PREFIX", "no trace file " + path_of(0), prefix, "files PREFIX.0.et, PREFIX.1.et, ... (one per rank)");
  return files;
}

}  // namespace xpusim::workload
