#pragma once
// MLCommons Chakra execution traces (one protobuf stream per rank, `<prefix>.<rank>.et`): a
// reader that turns each file into plain structs, so that no protobuf type leaks above this
// layer. Stream: varint32 length + GlobalMetadata, then varint32 length + Node until the end of
// the file; a gzip-compressed file (magic 1f 8b) is inflated first (format:
// ../shared/reference/formats.md Part 2; docs/replay.md). Every malformed
// input (truncated file, bad varint, length past the end, unknown enum value, attribute of the
// wrong kind, duplicate node id) is an InputError naming the file, the node and the value.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xpusim::workload {

/// Chakra NodeType, current numbering (et_def.proto).
enum class ChakraNodeType { Invalid = 0, Metadata = 1, MemLoad = 2, MemStore = 3, Comp = 4, CommSend = 5, CommRecv = 6, CommColl = 7 };
/// "INVALID_NODE", "METADATA_NODE", ... as in the schema.
std::string chakra_node_type_name(ChakraNodeType t);

/// Chakra CollectiveCommType, current numbering (ALL_REDUCE = 0).
enum class ChakraCommType {
  AllReduce = 0, Reduce = 1, AllGather = 2, Gather = 3, Scatter = 4, Broadcast = 5, AllToAll = 6,
  ReduceScatter = 7, ReduceScatterBlock = 8, Barrier = 9
};
/// "ALL_REDUCE", "REDUCE", ... as in the schema.
std::string chakra_comm_type_name(ChakraCommType t);

/// One node with the attributes a simulator reads (any integer member of the attribute's oneof
/// is accepted; absent attributes are nullopt). Sizes are bytes, times microseconds.
struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::Invalid;
  std::vector<std::uint64_t> data_deps;
  std::vector<std::uint64_t> ctrl_deps;
  std::uint64_t start_time_us = 0;  ///< informational
  std::uint64_t duration_us = 0;    ///< duration_micros
  std::optional<std::uint64_t> num_ops;      ///< FLOPs of a COMP node
  std::optional<std::uint64_t> tensor_size;  ///< bytes touched (COMP) or moved (MEM_LOAD/STORE)
  std::optional<ChakraCommType> comm_type;
  std::optional<std::uint64_t> comm_size;    ///< bytes per rank (collective) or message (send/recv)
  std::optional<long long> comm_src, comm_dst, comm_tag;
  std::string pg_name;                       ///< process group; "" or "0" = all ranks
  std::vector<bool> involved_dim;
  bool is_cpu_op = false;
  std::string dtype;                         ///< optional string attribute `dtype` ("bf16", "fp8", ...)
};

/// One rank's file.
struct ChakraTrace {
  std::string file;     ///< path (or label) used in diagnostics
  std::string version;  ///< GlobalMetadata.version (informational: it does not select the numbering)
  std::vector<ChakraNode> nodes;  ///< in file order
};

/// Throws an InputError with one diagnostic about trace file `file` (the engine's replay reports
/// graph errors the same way).
[[noreturn]] void fail_in_trace(const std::string& file, std::string path, std::string message, std::string value = {},
                                std::string expected = {});

/// Parses a whole file's bytes; `file` names it in diagnostics. InputError on malformed input.
ChakraTrace parse_chakra(std::string_view bytes, const std::string& file);
/// Reads and parses one file. InputError when it cannot be read or is malformed.
ChakraTrace read_chakra(const std::string& path);

/// The per-rank files `prefix.0.et`, `prefix.1.et`, ... : with `ranks` unset, every file found
/// contiguous from 0 (at least one); with `ranks` set, exactly that many (a missing file, or a
/// `prefix.<ranks>.et` beyond them, is an InputError naming the path and `--chips`).
std::vector<std::string> chakra_rank_files(const std::string& prefix, std::optional<long long> ranks);

}  // namespace xpusim::workload
