#pragma once
// Upper limits on sizes read from any input: model config.json fields, tensor files, flags,
// scenario files and validation rows. They are far above every real model and system, and low
// enough that no size product derived from them overflows int64 or exhausts memory before a
// diagnostic. docs/errors.md lists each one with its value; a value above a limit is a
// diagnostic naming the field, the value and the limit (exit 2).

namespace xpusim::core::limits {

// Model shape (config.json).
inline constexpr long long kLayers = 10'000;
inline constexpr long long kHeads = 65'536;             ///< attention and KV heads
inline constexpr long long kExperts = 65'536;           ///< routed and shared experts, experts per token
inline constexpr long long kVocab = 16'777'216;         ///< 2^24 tokens
inline constexpr long long kHidden = 1'048'576;         ///< 2^20: hidden size, head_dim, LoRA ranks
inline constexpr long long kIntermediate = 4'194'304;   ///< 2^22: FFN and expert FFN sizes
inline constexpr long long kPositions = 1LL << 30;      ///< max positions, sliding window
// Systems and plans (flags, scenarios, validation rows).
inline constexpr long long kChips = 1LL << 24;          ///< chips, parallel degrees
inline constexpr long long kBatch = 1LL << 30;          ///< global/micro batch, sequences per engine
inline constexpr long long kSequence = 1LL << 30;       ///< sequence length, prompt/output lengths, tokens per step
inline constexpr long long kRequests = 1'000'000'000;   ///< serve requests (streamed)
/// A KV page (`--block-size`, scenario block_size): the range of the calibration key
/// serving.frameworks.*.block_size; engines page 1 to 256 tokens (Neuron up to a bucket).
inline constexpr long long kKvBlockTokens = 4096;
/// Simulated span of a serving load: the expected last arrival (requests / rate) or a trace's last
/// arrival, in seconds. 30 days; the integer clock (core/sim_time.h) reaches about 106 days,
/// which leaves the drain after the last arrival room.
inline constexpr double kArrivalSpanSeconds = 30.0 * 86'400.0;
/// Checkpoint intervals a Monte Carlo of the whole run simulates, over all its runs (`train
/// --train-tokens N --runs R`): R × (time to train / checkpoint interval). A million-chip,
/// 15-trillion-token run checkpoints every few minutes for months (tens of thousands of
/// intervals), so 10^8 leaves a thousand runs of it; past the limit the loop would not end.
inline constexpr double kMonteCarloIntervals = 1e8;
/// A straggling chip's compute slowdown (`train --straggler`): 100× slower is a failed chip,
/// which goodput's recovery prices instead.
inline constexpr double kStragglerSlowdown = 100.0;
/// Rows of one validation or calibration CSV: each is simulated, and cross-validation refits
/// over all of them (the public file has 144).
inline constexpr long long kValidationRows = 100'000;
/// Rows of a validation CSV that `validate` streams (without --cv or --html: each row is
/// predicted and written out, only its error is kept for the summary: 8 bytes a row).
inline constexpr long long kValidationStreamRows = 10'000'000;
/// Bytes of one CSV record (a row with its quoted notes) while streaming.
inline constexpr long long kCsvRecordBytes = 1LL << 20;
/// Diagnostics one file of rows reports before its reader stops (a file of garbage would
/// otherwise list every line).
inline constexpr int kDiagnosticsPerFile = 20;
/// An arrivals CSV (`serve --arrivals FILE`): its size, read before any byte, and its rows, held
/// in memory as requests (about 40 bytes each: 10^7 rows take 0.4 GB).
inline constexpr long long kArrivalsFileBytes = 2LL << 30;
inline constexpr long long kArrivalsRows = 10'000'000;
/// Block ids of a generated trace (`xpusim sessions`), all rows together: 8 bytes each, 0.4 GB.
inline constexpr long long kTraceBlockIds = 50'000'000;
// Quantities from flags and scenario keys: far above any real run, low enough that every time,
// energy and cost derived from them stays finite.
inline constexpr double kTrainTokens = 1e17;         ///< tokens to train (Llama 3: 1.5e13)
inline constexpr double kBatchTokens = 1e15;         ///< tokens in one global batch
inline constexpr double kChipWatts = 100'000.0;      ///< a chip's TDP (--tdp; GB300: 1,400 W)
inline constexpr double kChipHourUsd = 10'000.0;     ///< a chip-hour's price (--price)
inline constexpr double kCollectiveBytes = 1125899906842624.0;  ///< 1 PiB per chip (collective --bytes)
inline constexpr double kKvTierBytes = 1125899906842624.0;      ///< 1 PiB per offload tier per engine (--kv-tier)
inline constexpr double kKvPoolBytes = 1152921504606846976.0;   ///< 1 EiB of remote pool in all (--kv-pool)
/// A Chakra node's duration_micros: 30 days, within the simulation clock's range with room for
/// the nodes after it.
inline constexpr double kTraceNodeMicros = 30.0 * 86'400.0 * 1e6;
/// `mx gemm`: the products of the float32 reference (M x K x N multiply-adds, a few seconds) and
/// the output elements (M x N, held twice: 2 GiB).
inline constexpr double kGemmMultiplyAdds = 1e10;
inline constexpr double kGemmOutputElements = 268'435'456.0;  // 2^28
/// Runners-up `train --top N` lists.
inline constexpr long long kRunnersUp = 100;
// Tensor files (.npy, .safetensors).
inline constexpr long long kTensorFileBytes = 16LL << 30;   ///< 16 GiB read into memory
inline constexpr long long kTensorRank = 32;
inline constexpr long long kTensorElements = 1LL << 32;     ///< elements of one tensor
/// Tensors in one safetensors file (a sharded checkpoint's file holds a few thousand; 10^5 take
/// about 0.3 GB of header while read).
inline constexpr long long kTensorCount = 100'000;
inline constexpr long long kSafetensorsHeaderBytes = 100LL << 20;  ///< as the format specifies

}  // namespace xpusim::core::limits
