#pragma once
// Hardware specifications: chips and systems. Plain data; every number carries its source and
// a confidence. Loaded from data/catalog/ by hw/catalog.h.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "xpusim/core/dtype.h"
#include "xpusim/core/units.h"

namespace xpusim::hw {

enum class Confidence { Published, Derived, Estimated, Projected };
std::string confidence_name(Confidence c);

/// A catalog number with its provenance.
template <typename T>
struct Sourced {
  T value{};
  std::string source;  ///< reference tag and/or URL, e.g. "[9] Trainium3 architecture page"
  Confidence confidence = Confidence::Published;
  std::string note;    ///< conflicts, derivations
  /// The range an estimate may take (catalog "low"/"high"), when the file gives one: a user
  /// study sweeps it, and `xpusim claims` reports which conclusions flip inside it.
  std::optional<T> low, high;
};

/// One catalog fact as written in its file, for listings and provenance reports: the dotted
/// path inside the file ("peak.bf16", "scale_up[0].bandwidth_per_chip"), the value as text
/// ("671 TFLOP/s", "8", "true") and its provenance. Every number of a file appears here, in file
/// order, including counts and flags that are stored as plain ints/bools in the structs.
struct FactRecord {
  std::string path;
  Sourced<std::string> fact;
};

/// Architecture family: selects the compute model (systolic NeuronCore or GPU SMs).
enum class ChipFamily { Trainium, NvidiaGpu };

/// NeuronCore geometry (Trainium).
struct NeuronCoreSpec {
  int cores_per_chip = 0;
  int pe_rows = 128, pe_cols = 128;           ///< TensorE systolic array
  Sourced<core::Hertz> tensor_clock;
  /// Contraction rows consumed per cycle relative to bf16: 1 (bf16), 2 (fp8 double-row),
  /// 4 (MX quad-row, NeuronCore-v4). Keyed by dtype; absent = not accelerated.
  std::map<core::Dtype, int> tensor_rate_multiplier;
  int psum_free_dim = 512;                     ///< max moving free dimension per matmul
  Sourced<core::Hertz> vector_clock;
  int vector_lanes_bf16 = 0;                   ///< elements per cycle for bf16
  /// VectorE elements per cycle for fp32 (and the other non-16-bit types): the rate at which it
  /// reads PSUM's fp32 accumulators out; 0 = not catalogued (no PSUM read-out bound).
  int vector_lanes_fp32 = 0;
  Sourced<core::Hertz> scalar_clock;
  int scalar_lanes_bf16 = 0;
  int scalar_lanes_fp32 = 0;                   ///< ScalarE elements per cycle for fp32 (PSUM reads)
  Sourced<core::Bytes> sbuf_per_core;
  Sourced<core::ByteRate> dma_per_core;
  Sourced<core::Seconds> dma_fixed_latency;
  int matmul_init_cycles = 64;
};

/// GPU geometry (NVIDIA).
struct GpuSpec {
  int sm_count = 0;
  Sourced<core::Hertz> boost_clock;
  int tensor_tile_m = 128, tensor_tile_n = 128;  ///< CTA tile used for wave quantisation
};

struct ChipSpec {
  std::string id;        ///< catalog id, e.g. "trainium3"
  std::string name;      ///< display name, e.g. "AWS Trainium3"
  std::string vendor;
  ChipFamily family = ChipFamily::NvidiaGpu;
  /// Micro-architecture generation: "ampere", "hopper", "blackwell" (NVIDIA) or
  /// "neuroncore-v2" … "neuroncore-v5" (Trainium1-4). Selects the compute calibration family.
  std::string architecture;
  bool projected = false;  ///< announced, not shipping (numbers from announced multiples)
  std::string user_file;  ///< non-empty: read from a user's --catalog-dir (this file), not shipped
  /// Dense peak math rate per dtype. A dtype the chip lacks is absent, not zero.
  std::map<core::Dtype, Sourced<core::FlopRate>> peak;
  Sourced<core::Bytes> hbm_capacity;
  Sourced<core::ByteRate> hbm_bandwidth;
  Sourced<core::Bytes> sram;  ///< total on-chip SRAM (SBUF / L2+SMEM)
  Sourced<core::Watts> tdp;
  std::optional<NeuronCoreSpec> neuron;
  std::optional<GpuSpec> gpu;
  /// Administrative power limit below the part's nominal TDP (e.g. H100 96GB at 500 W); it lowers
  /// sustained clocks. Absent when the chip runs at its nominal TDP.
  std::optional<Sourced<core::Watts>> power_cap;
  std::string description;
  std::vector<FactRecord> facts;  ///< every number of the chip file with its provenance

  bool supports(core::Dtype d) const { return peak.count(d) != 0; }
  /// Peak rate for `d`; XS_CHECKs that the dtype is supported.
  core::FlopRate peak_for(core::Dtype d) const;
};

/// One dimension of a topology. Chips are numbered so that dimension 0 varies fastest.
/// FullyConnected: every chip has a direct link to every other chip of the dim (a full mesh,
/// e.g. an 8-way xGMI or NVLink-without-switch board); the per-chip bandwidth is split evenly
/// over its size − 1 links.
enum class DimKind { Switch, Ring, Torus, Hypercube, FatTree, FullyConnected };
std::string dim_kind_name(DimKind k);

struct TopologyDim {
  std::string name;         ///< e.g. "neuronswitch", "nvlink", "efa"
  DimKind kind = DimKind::Switch;
  int size = 1;             ///< chips (or groups of the previous level) spanned by this dim
  std::vector<int> shape;   ///< torus/hypercube shape, product = size; empty for others
  /// Per-chip injection bandwidth into this dimension, both directions added (vendor style).
  Sourced<core::ByteRate> bandwidth_per_chip;
  Sourced<core::Seconds> latency;  ///< per hop / per message start-up
  double oversubscription = 1.0;   ///< fat-tree tapering (1 = non-blocking)
  int tiers = 1;                   ///< fat-tree levels (latency grows with tiers)
  bool rail_optimized = false;     ///< NIC i of every node on its own leaf (rail) switch
  /// The catalog published the figure per direction (NIC line rate); bandwidth_per_chip holds
  /// twice that so that the both-directions convention above holds for every dimension.
  bool published_per_direction = false;

  /// One direction of the per-chip rate (bandwidth_per_chip adds both).
  core::ByteRate one_direction() const { return bandwidth_per_chip.value / 2.0; }
};

/// A system: chips joined by a scale-up fabric inside a domain and a scale-out fabric across.
struct SystemSpec {
  std::string id;         ///< e.g. "trn3-ultraserver-gen2"
  std::string name;
  std::string chip_id;
  ChipSpec chip;          ///< resolved copy of the chip
  bool projected = false;
  std::string user_file;  ///< non-empty: read from a user's --catalog-dir (this file), not shipped
  int chips_per_node = 1;          ///< chips per server/instance/tray
  int chips_per_domain = 1;        ///< chips per scale-up domain (UltraServer, NVL72, HGX)
  std::string domain_name;         ///< "UltraServer", "rack", "node"
  std::string node_name;           ///< "trn2.48xlarge", "HGX node", ...
  std::vector<TopologyDim> scale_up;  ///< dims inside a domain, fastest first
  TopologyDim scale_out;              ///< the cluster fabric across domains
  Sourced<long long> max_chips;        ///< largest cluster
  Sourced<core::DollarRate> price_per_chip_hour;
  /// Power drawn per chip by the rest of the system (host CPU, NICs, switches, fans) at load.
  Sourced<core::Watts> overhead_power_per_chip;
  /// Host-to-chip bandwidth per chip, one direction (PCIe or NVLink-C2C): what a KV block kept in
  /// host memory loads back at (docs/serving.md, "KV offload to host memory"). 0 = not stated.
  Sourced<core::ByteRate> host_link_bandwidth_per_chip;
  /// Host memory of one node (catalog node_name): the bound of its engines' host-memory KV tiers
  /// (--kv-tier host:SIZE). 0 = not stated.
  Sourced<core::Bytes> host_memory_per_node;
  /// Local NVMe data drives of one node and their read bandwidth, shared by the node's chips: the
  /// bound and the rate of its engines' local-SSD KV tiers (--kv-tier ssd:SIZE). 0 = not stated.
  Sourced<core::Bytes> local_nvme_per_node;
  Sourced<core::ByteRate> local_nvme_read_bandwidth_per_node;
  std::string description;
  /// NVLink Fusion domain this system's scale-up fabric belongs to (empty = none): systems of
  /// different chips naming the same domain share one scale-up fabric (a mixed rack), and
  /// traffic between them runs at the slower endpoint's scale-up rate (docs/fusion.md).
  std::string fusion_domain;
  std::vector<FactRecord> facts;  ///< every number of the system file with its provenance
};

}  // namespace xpusim::hw
