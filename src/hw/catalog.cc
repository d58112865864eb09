// Loader for data/catalog/chips/*.json and data/catalog/systems/*.json.
//
// Every number in a catalog file is a "fact" object:
//   {"value": "4.9 TB/s", "source": "[9] ...", "confidence": "published", "note": "..."}
// Physical values are strings with units; counts are integers; flags are booleans. The schema is
// documented in docs/catalog.md. All problems in all files are collected before one InputError.

#include "xpusim/hw/catalog.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>

#include "xpusim/config/document.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"

namespace xpusim::hw {

namespace {

using config::FieldReader;
using config::Json;

const std::vector<std::string>& confidence_words() {
  static const std::vector<std::string> kWords = {"published", "derived", "estimated", "projected"};
  return kWords;
}

std::optional<Confidence> parse_confidence(const std::string& s) {
  if (s == "published") return Confidence::Published;
  if (s == "derived") return Confidence::Derived;
  if (s == "estimated") return Confidence::Estimated;
  if (s == "projected") return Confidence::Projected;
  return std::nullopt;
}

const char* kFactShape =
    "an object {\"value\": ..., \"source\": \"[n] ...\", \"confidence\": "
    "\"published|derived|estimated|projected\", \"note\": \"...\"}";

/// A FieldReader over one JSON object that also reads fact objects and records them.
class FactReader {
 public:
  FactReader(const Json& obj, std::string path, core::Diagnostics& diags,
             std::vector<FactRecord>& facts, std::string fact_prefix)
      : obj_(obj),
        r_(obj, path, diags),
        diags_(diags),
        facts_(facts),
        prefix_(std::move(fact_prefix)) {}

  FieldReader& fields() { return r_; }
  core::Diagnostics& diags() { return diags_; }
  std::string path_of(const std::string& key) const { return r_.path_of(key); }
  std::string fact_path(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }

  /// A quantity fact ("value" is a string with a unit).
  template <typename Q>
  std::optional<Sourced<Q>> quantity(const std::string& key, bool required = true) {
    const Json* o = open(key, required);
    if (!o) return std::nullopt;
    FieldReader fr(*o, r_.path_of(key), diags_);
    Sourced<Q> s;
    s.value = fr.quantity<Q>("value", true);
    const std::string text = (o->contains("value") && (*o)["value"].is_string())
                                 ? (*o)["value"].get<std::string>()
                                 : config::brief(o->value("value", Json()));
    const Sourced<std::string> range = read_range(*o, fr, s);
    auto out = finish_fact(fr, key, text, s);
    facts_.back().fact.low = range.low;
    facts_.back().fact.high = range.high;
    return out;
  }

  /// The optional "low"/"high" of a quantity fact: both or neither, low <= value <= high.
  /// Returns their texts as written.
  template <typename Q>
  Sourced<std::string> read_range(const Json& o, FieldReader& fr, Sourced<Q>& s) {
    Sourced<std::string> texts;
    if (!fr.has("low") && !fr.has("high")) return texts;
    const size_t before = diags_.items().size();
    const Q low = fr.quantity<Q>("low", true);
    const Q high = fr.quantity<Q>("high", true);
    if (diags_.items().size() != before) return texts;
    if (!(low <= s.value && s.value <= high)) {
      diags_.error(fr.path_of("low"), "the range does not hold the value",
                   o["low"].get<std::string>() + " .. " + o["high"].get<std::string>(),
                   "low <= value <= high");
      return texts;
    }
    s.low = low;
    s.high = high;
    texts.low = o["low"].get<std::string>();
    texts.high = o["high"].get<std::string>();
    return texts;
  }

  /// An integer fact (a count), from `min` to the largest int (every count is held as an int).
  /// A value that is missing, malformed or out of range is a diagnostic and no fact: the
  /// cross-field checks then never see a placeholder (a chips_per_node of 0 was a division by
  /// zero, fuzz finding).
  std::optional<Sourced<long long>> integer(const std::string& key, long long min,
                                            bool required = true) {
    const Json* o = open(key, required);
    if (!o) return std::nullopt;
    FieldReader fr(*o, r_.path_of(key), diags_);
    Sourced<long long> s;
    const size_t before = diags_.items().size();
    s.value = fr.integer("value");
    constexpr long long kMax = std::numeric_limits<int>::max();
    if (diags_.items().size() == before && (s.value < min || s.value > kMax)) {
      diags_.error(fr.path_of("value"), "out of range", std::to_string(s.value),
                   "an integer from " + std::to_string(min) + " to " + std::to_string(kMax));
    }
    const bool valid = diags_.items().size() == before;
    auto fact = finish_fact(fr, key, std::to_string(s.value), s);
    if (!valid) return std::nullopt;
    return fact;
  }

  /// A plain-number fact (a ratio), at least `min`.
  std::optional<Sourced<double>> number(const std::string& key, double min, bool required) {
    const Json* o = open(key, required);
    if (!o) return std::nullopt;
    FieldReader fr(*o, r_.path_of(key), diags_);
    Sourced<double> s;
    const size_t before = diags_.items().size();
    s.value = fr.number("value");
    if (diags_.items().size() == before && s.value < min) {
      diags_.error(fr.path_of("value"), "out of range", core::fmt_num(s.value),
                   "a number >= " + core::fmt_num(min));
    }
    return finish_fact(fr, key, core::fmt_num(s.value), s);
  }

  std::optional<Sourced<bool>> boolean(const std::string& key, bool required) {
    const Json* o = open(key, required);
    if (!o) return std::nullopt;
    FieldReader fr(*o, r_.path_of(key), diags_);
    Sourced<bool> s;
    fr.ignore("value");
    if (!o->contains("value") || (*o)["value"].is_null()) {
      diags_.error(fr.path_of("value"), "missing required field", "", "true or false");
    } else if (!(*o)["value"].is_boolean()) {
      diags_.error(fr.path_of("value"), "wrong type", config::brief((*o)["value"]),
                   "true or false");
    } else {
      s.value = (*o)["value"].get<bool>();
    }
    return finish_fact(fr, key, s.value ? "true" : "false", s);
  }

  /// Opens a fact whose value is an arbitrary JSON value; the caller reads "value" with the
  /// returned reader and must call close().
  const Json* open(const std::string& key, bool required) {
    if (!r_.has(key)) {
      if (required) {
        r_.object(key, true);  // reports the missing field
      } else {
        r_.ignore(key);
      }
      return nullptr;
    }
    r_.ignore(key);
    const Json& v = obj_.at(key);
    if (!v.is_object()) {
      diags_.error(r_.path_of(key),
                   v.is_number() ? "a catalog number needs a unit and its provenance"
                                 : "a catalog number needs its provenance",
                   config::brief(v), kFactShape);
      return nullptr;
    }
    return &v;
  }

  /// Reads source/confidence/note of an opened fact and records it.
  template <typename T>
  std::optional<Sourced<T>> finish_fact(FieldReader& fr, const std::string& key,
                                        const std::string& text, Sourced<T>& s) {
    read_provenance(fr, s);
    fr.finish();
    facts_.push_back(FactRecord{fact_path(key), Sourced<std::string>{text, s.source,
                                                                     s.confidence, s.note, {}, {}}});
    return s;
  }

  template <typename T>
  void read_provenance(FieldReader& fr, Sourced<T>& s) {
    s.source = fr.str("source");
    if (fr.has("source") && s.source.empty()) {
      diags_.error(fr.path_of("source"), "empty source", "",
                   "a reference tag and URL, e.g. \"[9] Trainium3 architecture: https://...\"");
    }
    const std::string c = fr.str("confidence");
    if (fr.has("confidence") && !c.empty()) {
      auto conf = parse_confidence(c);
      if (!conf) {
        diags_.error(fr.path_of("confidence"), "unknown confidence '" + c + "'", c,
                     "one of: " + core::join(confidence_words()),
                     core::did_you_mean(c, confidence_words()));
      } else {
        s.confidence = *conf;
      }
    }
    s.note = fr.str_or("note", "");
  }

  void record(const std::string& key, const std::string& text, const Sourced<std::string>& p) {
    facts_.push_back(FactRecord{fact_path(key), Sourced<std::string>{text, p.source,
                                                                     p.confidence, p.note, {}, {}}});
  }

  void finish() { r_.finish(); }

 private:
  const Json& obj_;
  FieldReader r_;
  core::Diagnostics& diags_;
  std::vector<FactRecord>& facts_;
  std::string prefix_;
};

template <typename T>
T value_or(const std::optional<Sourced<T>>& s, T fallback) {
  return s ? s->value : fallback;
}

template <typename Q>
Sourced<Q> sourced_or_empty(const std::optional<Sourced<Q>>& s) {
  return s ? *s : Sourced<Q>{};
}

int as_int(const std::optional<Sourced<long long>>& s, int fallback) {
  return s ? static_cast<int>(s->value) : fallback;
}

/// Reads {"bf16": 1, "fp8": 2, ...} inside a fact's "value".
std::map<core::Dtype, int> read_multipliers(FactReader& r, const std::string& key) {
  std::map<core::Dtype, int> out;
  const Json* o = r.open(key, true);
  if (!o) return out;
  FieldReader fr(*o, r.path_of(key), r.diags());
  const Json* m = fr.object("value", true);
  std::string text;
  if (m) {
    for (auto it = m->begin(); it != m->end(); ++it) {
      const std::string path = fr.path_of("value") + "." + it.key();
      auto d = core::parse_dtype(it.key());
      if (!d) {
        r.diags().error(path, "unknown dtype '" + it.key() + "'", it.key(),
                        "one of: " + core::join(core::all_dtype_names()),
                        core::did_you_mean(it.key(), core::all_dtype_names()));
        continue;
      }
      if (!it.value().is_number_integer() || it.value().get<long long>() < 1) {
        r.diags().error(path, "wrong type", config::brief(it.value()), "an integer >= 1");
        continue;
      }
      out[*d] = static_cast<int>(it.value().get<long long>());
      text += (text.empty() ? "" : ", ") + it.key() + " x" + std::to_string(out[*d]);
    }
  }
  Sourced<std::string> s;
  r.read_provenance(fr, s);
  fr.finish();
  r.record(key, text, s);
  return out;
}

NeuronCoreSpec parse_neuron(const Json& obj, const std::string& path, core::Diagnostics& diags,
                            std::vector<FactRecord>& facts) {
  FactReader r(obj, path, diags, facts, "neuron_core");
  NeuronCoreSpec n;
  n.cores_per_chip = as_int(r.integer("cores_per_chip", 1), 0);
  n.pe_rows = as_int(r.integer("pe_rows", 1), 128);
  n.pe_cols = as_int(r.integer("pe_cols", 1), 128);
  n.tensor_clock = sourced_or_empty(r.quantity<core::Hertz>("tensor_clock"));
  n.tensor_rate_multiplier = read_multipliers(r, "tensor_rate_multiplier");
  n.psum_free_dim = as_int(r.integer("psum_free_dim", 1), 512);
  n.vector_clock = sourced_or_empty(r.quantity<core::Hertz>("vector_clock"));
  n.vector_lanes_bf16 = as_int(r.integer("vector_lanes_bf16", 1), 0);
  n.scalar_clock = sourced_or_empty(r.quantity<core::Hertz>("scalar_clock"));
  n.scalar_lanes_bf16 = as_int(r.integer("scalar_lanes_bf16", 1), 0);
  // Optional (a user's own Neuron chip may leave them out): PSUM read-out rates.
  n.vector_lanes_fp32 = as_int(r.integer("vector_lanes_fp32", 1, false), 0);
  n.scalar_lanes_fp32 = as_int(r.integer("scalar_lanes_fp32", 1, false), 0);
  n.sbuf_per_core = sourced_or_empty(r.quantity<core::Bytes>("sbuf_per_core"));
  n.dma_per_core = sourced_or_empty(r.quantity<core::ByteRate>("dma_per_core"));
  n.dma_fixed_latency = sourced_or_empty(r.quantity<core::Seconds>("dma_fixed_latency"));
  n.matmul_init_cycles = as_int(r.integer("matmul_init_cycles", 0), 64);
  r.finish();
  return n;
}

GpuSpec parse_gpu(const Json& obj, const std::string& path, core::Diagnostics& diags,
                  std::vector<FactRecord>& facts) {
  FactReader r(obj, path, diags, facts, "gpu");
  GpuSpec g;
  g.sm_count = as_int(r.integer("sm_count", 1), 0);
  g.boost_clock = sourced_or_empty(r.quantity<core::Hertz>("boost_clock"));
  g.tensor_tile_m = as_int(r.integer("tensor_tile_m", 1, false), 128);
  g.tensor_tile_n = as_int(r.integer("tensor_tile_n", 1, false), 128);
  r.finish();
  return g;
}

std::string file_stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

/// The chip's family and architecture words, each checked against the known ones; returns the
/// family word as written.
std::string read_chip_family(FieldReader& f, ChipSpec& c, core::Diagnostics& diags) {
  const std::string family = f.str("family");
  const std::vector<std::string> families = {"trainium", "nvidia-gpu"};
  if (family == "trainium") {
    c.family = ChipFamily::Trainium;
  } else if (family == "nvidia-gpu") {
    c.family = ChipFamily::NvidiaGpu;
  } else if (f.has("family")) {
    diags.error("family", "unknown chip family '" + family + "'", family, "one of: " + core::join(families),
                core::did_you_mean(family, families));
  }
  c.architecture = f.str("architecture");
  const std::vector<std::string> archs =
      c.family == ChipFamily::Trainium
          ? std::vector<std::string>{"neuroncore-v2", "neuroncore-v3", "neuroncore-v4", "neuroncore-v5"}
          : std::vector<std::string>{"ampere", "hopper", "blackwell"};
  if (f.has("architecture") && std::find(archs.begin(), archs.end(), c.architecture) == archs.end())
    diags.error("architecture", "unknown architecture '" + c.architecture + "' for a " + family + " chip",
                c.architecture, "one of: " + core::join(archs), core::did_you_mean(c.architecture, archs));
  return family;
}

/// `peak`: one sourced math rate per dtype name.
void read_chip_peaks(FieldReader& f, ChipSpec& c, core::Diagnostics& diags) {
  const Json* peak = f.object("peak", true);
  if (!peak) return;
  FactReader pr(*peak, "peak", diags, c.facts, "peak");
  for (auto it = peak->begin(); it != peak->end(); ++it) {
    auto d = core::parse_dtype(it.key());
    if (!d) {
      pr.fields().ignore(it.key());
      diags.error(pr.path_of(it.key()), "unknown dtype '" + it.key() + "'", it.key(),
                  "one of: " + core::join(core::all_dtype_names()), core::did_you_mean(it.key(), core::all_dtype_names()));
      continue;
    }
    if (auto q = pr.quantity<core::FlopRate>(it.key())) c.peak[*d] = *q;
  }
  pr.finish();
  if (peak->empty()) diags.error("peak", "no dtype listed", "{}", "at least one dtype");
}

/// The family's micro-architecture block (`neuron_core` or `gpu`); the other one is an error.
void read_chip_core(FieldReader& f, const std::string& family, ChipSpec& c, core::Diagnostics& diags) {
  const bool trainium = c.family == ChipFamily::Trainium;
  const char* needed = trainium ? "neuron_core" : "gpu";
  const char* other = trainium ? "gpu" : "neuron_core";
  if (f.has(other)) {
    f.ignore(other);
    diags.error(other, std::string("not allowed for family '") + family + "'", "",
                std::string("'") + needed + "'");
  }
  if (trainium) {
    if (const Json* n = f.object("neuron_core", true)) c.neuron = parse_neuron(*n, "neuron_core", diags, c.facts);
  } else {
    if (const Json* g = f.object("gpu", true)) c.gpu = parse_gpu(*g, "gpu", diags, c.facts);
  }
}

ChipSpec parse_chip_json(const Json& root, const std::string& file, core::Diagnostics& diags) {
  ChipSpec c;
  if (!root.is_object()) {
    diags.error("", "a chip file must hold a JSON object", config::brief(root), "an object");
    return c;
  }
  FactReader r(root, "", diags, c.facts, "");
  FieldReader& f = r.fields();
  c.id = f.str("id");
  if (!file.empty() && !c.id.empty() && c.id != file_stem(file)) {
    diags.error("id", "id does not match the file name", c.id, "'" + file_stem(file) + "'");
  }
  c.name = f.str("name");
  c.vendor = f.str("vendor");
  const std::string family = read_chip_family(f, c, diags);
  c.projected = f.boolean_or("projected", false);
  c.description = f.str_or("description", "");
  read_chip_peaks(f, c, diags);
  c.hbm_capacity = sourced_or_empty(r.quantity<core::Bytes>("hbm_capacity"));
  c.hbm_bandwidth = sourced_or_empty(r.quantity<core::ByteRate>("hbm_bandwidth"));
  c.sram = sourced_or_empty(r.quantity<core::Bytes>("sram"));
  c.tdp = sourced_or_empty(r.quantity<core::Watts>("tdp"));
  if (auto cap = r.quantity<core::Watts>("power_cap", false)) c.power_cap = *cap;
  read_chip_core(f, family, c, diags);
  r.finish();
  return c;
}

const std::vector<std::string>& dim_kind_words() {
  static const std::vector<std::string> kWords = {"switch", "ring", "torus", "hypercube",
                                                  "fat-tree", "fully-connected"};
  return kWords;
}

std::optional<DimKind> parse_dim_kind(const std::string& s) {
  if (s == "switch") return DimKind::Switch;
  if (s == "ring") return DimKind::Ring;
  if (s == "torus") return DimKind::Torus;
  if (s == "hypercube") return DimKind::Hypercube;
  if (s == "fat-tree") return DimKind::FatTree;
  if (s == "fully-connected") return DimKind::FullyConnected;
  return std::nullopt;
}

TopologyDim parse_dim(const Json& obj, const std::string& path, bool scale_out,
                      core::Diagnostics& diags, std::vector<FactRecord>& facts) {
  TopologyDim d;
  FactReader r(obj, path, diags, facts, path);
  FieldReader& f = r.fields();
  d.name = f.str("name");
  const std::string kind = f.str("kind");
  if (auto k = parse_dim_kind(kind)) {
    d.kind = *k;
  } else if (f.has("kind")) {
    diags.error(f.path_of("kind"), "unknown dimension kind '" + kind + "'", kind,
                "one of: " + core::join(dim_kind_words()),
                core::did_you_mean(kind, dim_kind_words()));
  }
  if (!scale_out) d.size = as_int(r.integer("size", 1), 1);

  const bool shaped = d.kind == DimKind::Torus || d.kind == DimKind::Hypercube;
  if (const Json* shape = f.array("shape", shaped && !scale_out)) {
    if (!shaped) {
      diags.error(f.path_of("shape"), "a shape is only allowed for torus and hypercube", "",
                  "no 'shape' for kind '" + kind + "'");
    }
    bool ok = true;
    long long product = 1;
    std::string text;
    for (size_t i = 0; i < shape->size(); ++i) {
      const Json& e = (*shape)[i];
      if (!e.is_number_integer() || e.get<long long>() < 2) {
        diags.error(f.path_of("shape") + "[" + std::to_string(i) + "]", "wrong type",
                    config::brief(e), "an integer >= 2");
        ok = false;
        continue;
      }
      d.shape.push_back(static_cast<int>(e.get<long long>()));
      product *= e.get<long long>();
      text += (text.empty() ? "" : " x ") + std::to_string(e.get<long long>());
    }
    if (ok && shaped && !scale_out && product != d.size) {
      diags.error(f.path_of("shape"),
                  "torus shape product " + text + " = " + std::to_string(product) +
                      " does not equal size " + std::to_string(d.size),
                  config::brief(*shape),
                  "dimensions whose product is " + std::to_string(d.size));
    }
  }

  const std::string direction = f.str("bandwidth_direction");
  const std::vector<std::string> directions = {"bidirectional", "per-direction"};
  if (f.has("bandwidth_direction") && direction != directions[0] &&
      direction != directions[1]) {
    diags.error(f.path_of("bandwidth_direction"), "unknown bandwidth direction '" + direction + "'",
                direction, "one of: " + core::join(directions),
                core::did_you_mean(direction, directions));
  }
  auto bw = r.quantity<core::ByteRate>("bandwidth_per_chip");
  d.bandwidth_per_chip = sourced_or_empty(bw);
  if (bw && direction == "per-direction") {
    // Stored as both directions added, like every other dimension (see spec.h).
    d.published_per_direction = true;
    d.bandwidth_per_chip.value = d.bandwidth_per_chip.value * 2.0;
    facts.back().fact.value += " per direction";
  }
  d.latency = sourced_or_empty(r.quantity<core::Seconds>("latency"));
  d.tiers = as_int(r.integer("tiers", 1, false), 1);
  if (auto o = r.number("oversubscription", 1.0, false)) d.oversubscription = o->value;
  if (auto b = r.boolean("rail_optimized", false)) d.rail_optimized = b->value;
  r.finish();
  return d;
}

/// `scale_up`: the dimensions of one domain, innermost first; returns their sizes as "a x b".
std::string read_scale_up(FieldReader& f, SystemSpec& s, core::Diagnostics& diags) {
  std::string text;
  const Json* dims = f.array("scale_up", true);
  if (!dims) return text;
  if (dims->empty()) diags.error("scale_up", "no scale-up dimension", "[]", "at least one dimension");
  for (size_t i = 0; i < dims->size(); ++i) {
    const std::string path = "scale_up[" + std::to_string(i) + "]";
    if (!(*dims)[i].is_object()) {
      diags.error(path, "wrong type", config::brief((*dims)[i]), "an object");
      continue;
    }
    s.scale_up.push_back(parse_dim((*dims)[i], path, false, diags, s.facts));
    text += (text.empty() ? "" : " x ") + std::to_string(s.scale_up.back().size);
  }
  return text;
}

/// Cross-field checks: the scale-up sizes multiply to the domain, a domain is whole nodes, the
/// largest cluster is at least one domain. The flags say which counts were read.
void check_system_sizes(const SystemSpec& s, const std::string& dims_text, bool per_node, bool per_domain,
                        bool max_chips, core::Diagnostics& diags) {
  long long product = 1;
  for (const auto& d : s.scale_up) product *= d.size;
  if (per_domain && !s.scale_up.empty() && product != s.chips_per_domain) {
    diags.error("scale_up",
                "product of scale-up dimension sizes " + dims_text + " = " + std::to_string(product) +
                    " does not equal chips_per_domain " + std::to_string(s.chips_per_domain),
                dims_text, "sizes whose product is " + std::to_string(s.chips_per_domain));
  }
  if (per_node && per_domain && s.chips_per_domain % s.chips_per_node != 0) {
    diags.error("chips_per_domain",
                "chips_per_domain is not a multiple of chips_per_node (" + std::to_string(s.chips_per_node) + ")",
                std::to_string(s.chips_per_domain), "a multiple of " + std::to_string(s.chips_per_node));
  }
  if (max_chips && per_domain && s.max_chips.value < s.chips_per_domain) {
    diags.error("max_chips", "smaller than one scale-up domain", std::to_string(s.max_chips.value),
                "at least chips_per_domain = " + std::to_string(s.chips_per_domain));
  }
}

SystemSpec parse_system_json(const Json& root, const std::string& file, core::Diagnostics& diags) {
  SystemSpec s;
  if (!root.is_object()) {
    diags.error("", "a system file must hold a JSON object", config::brief(root), "an object");
    return s;
  }
  FactReader r(root, "", diags, s.facts, "");
  FieldReader& f = r.fields();
  s.id = f.str("id");
  if (!file.empty() && !s.id.empty() && s.id != file_stem(file)) {
    diags.error("id", "id does not match the file name", s.id, "'" + file_stem(file) + "'");
  }
  s.name = f.str("name");
  s.chip_id = f.str("chip");
  s.projected = f.boolean_or("projected", false);
  s.description = f.str_or("description", "");
  s.fusion_domain = f.str_or("fusion_domain", "");
  s.node_name = f.str("node_name");
  s.domain_name = f.str("domain_name");
  auto per_node = r.integer("chips_per_node", 1);
  auto per_domain = r.integer("chips_per_domain", 1);
  s.chips_per_node = as_int(per_node, 1);
  s.chips_per_domain = as_int(per_domain, 1);
  const std::string dims_text = read_scale_up(f, s, diags);
  if (const Json* so = f.object("scale_out", true)) s.scale_out = parse_dim(*so, "scale_out", true, diags, s.facts);
  auto max_chips = r.integer("max_chips", 1);
  if (max_chips) s.max_chips = *max_chips;
  s.price_per_chip_hour = sourced_or_empty(r.quantity<core::DollarRate>("price_per_chip_hour"));
  s.overhead_power_per_chip = sourced_or_empty(r.quantity<core::Watts>("overhead_power_per_chip"));
  s.host_link_bandwidth_per_chip =
      sourced_or_empty(r.quantity<core::ByteRate>("host_link_bandwidth_per_chip", false));
  s.host_memory_per_node = sourced_or_empty(r.quantity<core::Bytes>("host_memory_per_node", false));
  s.local_nvme_per_node = sourced_or_empty(r.quantity<core::Bytes>("local_nvme_per_node", false));
  s.local_nvme_read_bandwidth_per_node =
      sourced_or_empty(r.quantity<core::ByteRate>("local_nvme_read_bandwidth_per_node", false));
  r.finish();
  check_system_sizes(s, dims_text, per_node.has_value(), per_domain.has_value(), max_chips.has_value(), diags);
  // The scale-out dimension spans the domains of the largest cluster.
  if (s.chips_per_domain > 0 && s.max_chips.value > 0) {
    s.scale_out.size = static_cast<int>((s.max_chips.value + s.chips_per_domain - 1) / s.chips_per_domain);
  }
  return s;
}

template <typename Spec, typename Parse>
Spec parse_file(const std::string& path, Parse parse) {
  const Json root = config::load_json_file(path);
  core::Diagnostics diags;
  Spec spec = parse(root, path, diags);
  diags.set_file(path);
  diags.throw_if_any();
  return spec;
}

std::vector<std::string> json_files(const std::string& dir, core::Diagnostics& diags) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    diags.error("", "catalog directory not found", dir, "a directory of *.json files");
    return out;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());  // deterministic order
  return out;
}

template <typename T>
std::vector<std::string> keys_of(const std::map<std::string, T>& m) {
  std::vector<std::string> out;
  for (const auto& [k, v] : m) out.push_back(k);
  return out;
}

}  // namespace

ChipSpec parse_chip(const std::string& path) {
  return parse_file<ChipSpec>(path, parse_chip_json);
}

SystemSpec parse_system(const std::string& path) {
  return parse_file<SystemSpec>(path, parse_system_json);
}

struct Catalog::Layer {
  std::string dir;
  bool user = false;
};

namespace {

/// The files of one kind ("chips" or "systems") of a layer: a user directory may lack either.
std::vector<std::string> layer_files(const std::string& dir, const std::string& kind, bool user,
                                     core::Diagnostics& diags) {
  std::error_code ec;
  if (user && !std::filesystem::is_directory(dir + "/" + kind, ec)) return {};
  return json_files(dir + "/" + kind, diags);
}

void check_user_dir(const std::string& dir, core::Diagnostics& diags) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    diags.error("--catalog-dir", "catalog directory not found", dir,
                "a directory holding chips/*.json and/or systems/*.json (docs/catalog.md)");
  } else if (!std::filesystem::is_directory(dir + "/chips", ec) &&
             !std::filesystem::is_directory(dir + "/systems", ec)) {
    diags.error("--catalog-dir", "no chips/ or systems/ directory in the catalog directory", dir,
                "a directory holding chips/*.json and/or systems/*.json (docs/catalog.md)");
  }
}

/// Records `id` as read from `path` in one layer; a second file of the layer with that id is an
/// error (across layers, a later one replaces it).
bool first_in_layer(std::map<std::string, std::string>& file_of, const std::string& kind, const std::string& id,
                    const std::string& path, core::Diagnostics& diags) {
  if (file_of.count(id)) {
    diags.add(core::Diagnostic{path, 0, "id", "duplicate " + kind + " id '" + id + "'", id,
                               "an id not already used by " + file_of[id], ""});
    return false;
  }
  file_of[id] = path;
  return true;
}

}  // namespace

void Catalog::load_chips(const Layer& layer, core::Diagnostics& diags) {
  std::map<std::string, std::string> file_of;  // ids seen in this layer
  for (const auto& path : layer_files(layer.dir, "chips", layer.user, diags)) {
    try {
      ChipSpec c = parse_chip(path);
      if (!first_in_layer(file_of, "chip", c.id, path, diags)) continue;
      if (layer.user) {
        user_entries_.push_back({"chip", c.id, path, chips_.count(c.id) > 0});
        c.user_file = path;
      }
      std::string id = c.id;
      chips_.insert_or_assign(id, std::move(c));
    } catch (const core::InputError& e) {
      for (const auto& d : e.diagnostics()) diags.add(d);
    }
  }
}

void Catalog::load_systems(const Layer& layer, core::Diagnostics& diags) {
  const std::vector<std::string> chip_ids = keys_of(chips_);
  std::map<std::string, std::string> file_of;  // ids seen in this layer
  for (const auto& path : layer_files(layer.dir, "systems", layer.user, diags)) {
    try {
      SystemSpec s = parse_system(path);
      if (!first_in_layer(file_of, "system", s.id, path, diags)) continue;
      auto it = chips_.find(s.chip_id);
      if (it == chips_.end()) {
        diags.add(core::Diagnostic{path, 0, "chip", "unknown chip '" + s.chip_id + "'",
                                   s.chip_id, "one of: " + core::join(chip_ids),
                                   core::did_you_mean(s.chip_id, chip_ids)});
        continue;
      }
      s.chip = it->second;
      s.projected = s.projected || s.chip.projected;
      if (layer.user) {
        user_entries_.push_back({"system", s.id, path, systems_.count(s.id) > 0});
        s.user_file = path;
      }
      std::string id = s.id;
      systems_.insert_or_assign(id, std::move(s));
    } catch (const core::InputError& e) {
      for (const auto& d : e.diagnostics()) diags.add(d);
    }
  }
}

Catalog Catalog::load(const std::string& dir) { return load(dir, {}); }

Catalog Catalog::load(const std::string& shipped_dir, const std::vector<std::string>& user_dirs) {
  core::Diagnostics diags;
  std::vector<Layer> layers{{shipped_dir, false}};
  for (const auto& d : user_dirs) {
    check_user_dir(d, diags);
    layers.push_back({d, true});
  }
  diags.throw_if_any();
  Catalog cat;
  // Every layer's chips first, so that systems (shipped ones included) resolve the final chip.
  for (const auto& layer : layers) cat.load_chips(layer, diags);
  for (const auto& layer : layers) cat.load_systems(layer, diags);
  diags.throw_if_any();
  return cat;
}

const SystemSpec& Catalog::system(const std::string& id, const std::string& path) const {
  auto it = systems_.find(id);
  if (it == systems_.end()) {
    const auto ids = system_ids();
    core::fail(path, "unknown system '" + id + "'", id, "one of: " + core::join(ids),
               core::did_you_mean(id, ids));
  }
  return it->second;
}

const ChipSpec& Catalog::chip(const std::string& id, const std::string& path) const {
  auto it = chips_.find(id);
  if (it == chips_.end()) {
    const auto ids = chip_ids();
    core::fail(path, "unknown chip '" + id + "'", id, "one of: " + core::join(ids),
               core::did_you_mean(id, ids));
  }
  return it->second;
}

std::vector<std::string> Catalog::system_ids() const { return keys_of(systems_); }
std::vector<std::string> Catalog::chip_ids() const { return keys_of(chips_); }

void Catalog::add_chip(ChipSpec c) {
  std::string id = c.id;
  chips_.insert_or_assign(id, std::move(c));
}

void Catalog::add_system(SystemSpec s) {
  s.chip = chip(s.chip_id, "chip");
  s.projected = s.projected || s.chip.projected;
  std::string id = s.id;
  systems_.insert_or_assign(id, std::move(s));
}

void Catalog::replace_system(SystemSpec s) {
  std::string id = s.id;
  systems_.insert_or_assign(id, std::move(s));
}

}  // namespace xpusim::hw
