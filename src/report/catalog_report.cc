#include "xpusim/report/catalog_report.h"

#include <nlohmann/json.hpp>
#include <algorithm>
#include <sstream>

#include "xpusim/core/dtype.h"
#include "xpusim/core/format.h"
#include "xpusim/core/suggest.h"
#include "xpusim/core/units.h"

namespace xpusim::report {

namespace {

using core::fmt_num;
using core::strformat;

std::string family_name(hw::ChipFamily f) {
  return f == hw::ChipFamily::Trainium ? "trainium" : "nvidia-gpu";
}

std::string pad(const std::string& s, size_t w) {
  // Pads by bytes; catalog ids and names are ASCII.
  return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' ');
}

/// "torus 4x4 + ring 4" for the scale-up dims.
std::string scale_up_shape(const hw::SystemSpec& s) {
  std::string out;
  for (const auto& d : s.scale_up) {
    if (!out.empty()) out += " + ";
    out += hw::dim_kind_name(d.kind) + " ";
    if (!d.shape.empty()) {
      for (size_t i = 0; i < d.shape.size(); ++i) out += (i ? "x" : "") + std::to_string(d.shape[i]);
    } else {
      out += std::to_string(d.size);
    }
  }
  return out;
}

core::ByteRate scale_up_total(const hw::SystemSpec& s) {
  core::ByteRate total{};
  for (const auto& d : s.scale_up) total += d.bandwidth_per_chip.value;
  return total;
}

Json fact_json(const hw::FactRecord& f) {
  Json j = Json::object();
  j["path"] = f.path;
  j["value"] = f.fact.value;
  j["confidence"] = hw::confidence_name(f.fact.confidence);
  j["source"] = f.fact.source;
  j["note"] = f.fact.note;
  if (f.fact.low) j["low"] = *f.fact.low;
  if (f.fact.high) j["high"] = *f.fact.high;
  return j;
}

/// "1000 W (estimated, range 715 W .. 1400 W)" for an estimate; the value alone otherwise.
template <typename Q, typename F>
std::string with_range(const hw::Sourced<Q>& s, F&& text) {
  std::string out = text(s.value);
  if (s.confidence == hw::Confidence::Published) return out;
  out += " (" + hw::confidence_name(s.confidence);
  if (s.low && s.high) out += ", range " + text(*s.low) + " .. " + text(*s.high);
  return out + ")";
}

std::string watts_text(core::Watts w) { return fmt_num(core::to_watts(w)) + " W"; }
std::string price_text(core::DollarRate p) { return strformat("$%.2f", core::to_dollars_per_hour(p)); }

/// `<key>_confidence`, `<key>_low_<unit>`, `<key>_high_<unit>` of an estimate with a range.
template <typename Q, typename F>
void put_range(Json& j, const std::string& key, const std::string& unit, const hw::Sourced<Q>& s, F&& to_number) {
  j[key + "_confidence"] = hw::confidence_name(s.confidence);
  if (!s.low || !s.high) return;
  j[key + "_low_" + unit] = to_number(*s.low);
  j[key + "_high_" + unit] = to_number(*s.high);
}

Json facts_json(const std::vector<hw::FactRecord>& facts) {
  Json a = Json::array();
  for (const auto& f : facts) a.push_back(fact_json(f));
  return a;
}

Json chip_json(const hw::ChipSpec& c) {
  Json j = Json::object();
  j["id"] = c.id;
  j["name"] = c.name;
  j["vendor"] = c.vendor;
  j["family"] = family_name(c.family);
  j["projected"] = c.projected;
  j["description"] = c.description;
  Json peak = Json::object();
  for (const auto& [d, v] : c.peak) peak[core::dtype_name(d)] = core::to_tflops(v.value);
  j["peak_tflops"] = peak;
  j["hbm_capacity_gib"] = core::to_gib(c.hbm_capacity.value);
  j["hbm_capacity_gb"] = core::to_gb(c.hbm_capacity.value);
  j["hbm_bandwidth_tb_s"] = core::to_tbps(c.hbm_bandwidth.value);
  j["sram_mib"] = core::to_bytes(c.sram.value) / 1048576.0;
  j["tdp_w"] = core::to_watts(c.tdp.value);
  put_range(j, "tdp", "w", c.tdp, [](core::Watts w) { return core::to_watts(w); });
  if (c.power_cap) j["power_cap_w"] = core::to_watts(c.power_cap->value);
  if (c.neuron) {
    const auto& n = *c.neuron;
    Json nj = Json::object();
    nj["cores_per_chip"] = n.cores_per_chip;
    nj["pe_rows"] = n.pe_rows;
    nj["pe_cols"] = n.pe_cols;
    nj["tensor_clock_ghz"] = core::to_ghz(n.tensor_clock.value);
    Json m = Json::object();
    for (const auto& [d, k] : n.tensor_rate_multiplier) m[core::dtype_name(d)] = k;
    nj["tensor_rate_multiplier"] = m;
    nj["psum_free_dim"] = n.psum_free_dim;
    nj["vector_clock_ghz"] = core::to_ghz(n.vector_clock.value);
    nj["vector_lanes_bf16"] = n.vector_lanes_bf16;
    nj["scalar_clock_ghz"] = core::to_ghz(n.scalar_clock.value);
    nj["scalar_lanes_bf16"] = n.scalar_lanes_bf16;
    nj["vector_lanes_fp32"] = n.vector_lanes_fp32;
    nj["scalar_lanes_fp32"] = n.scalar_lanes_fp32;
    nj["sbuf_per_core_mib"] = core::to_bytes(n.sbuf_per_core.value) / 1048576.0;
    nj["dma_per_core_gb_s"] = core::to_gbps(n.dma_per_core.value);
    nj["dma_fixed_latency_us"] = core::to_us(n.dma_fixed_latency.value);
    nj["matmul_init_cycles"] = n.matmul_init_cycles;
    j["neuron_core"] = nj;
  }
  if (c.gpu) {
    Json gj = Json::object();
    gj["sm_count"] = c.gpu->sm_count;
    gj["boost_clock_ghz"] = core::to_ghz(c.gpu->boost_clock.value);
    gj["tensor_tile_m"] = c.gpu->tensor_tile_m;
    gj["tensor_tile_n"] = c.gpu->tensor_tile_n;
    j["gpu"] = gj;
  }
  j["facts"] = facts_json(c.facts);
  return j;
}

Json dim_json(const hw::TopologyDim& d) {
  Json j = Json::object();
  j["name"] = d.name;
  j["kind"] = hw::dim_kind_name(d.kind);
  j["size"] = d.size;
  Json shape = Json::array();
  for (int x : d.shape) shape.push_back(x);
  j["shape"] = shape;
  j["bandwidth_per_chip_gb_s"] = core::to_gbps(d.bandwidth_per_chip.value);
  j["bandwidth_per_chip_gbit_s"] = core::to_gbit_per_s(d.bandwidth_per_chip.value);
  j["bandwidth_per_chip_per_direction_gb_s"] = core::to_gbps(d.bandwidth_per_chip.value) / 2.0;
  j["published_per_direction"] = d.published_per_direction;
  j["latency_us"] = core::to_us(d.latency.value);
  j["tiers"] = d.tiers;
  j["oversubscription"] = d.oversubscription;
  j["rail_optimized"] = d.rail_optimized;
  return j;
}

Json system_json(const hw::SystemSpec& s) {
  Json j = Json::object();
  j["id"] = s.id;
  j["name"] = s.name;
  j["chip_id"] = s.chip_id;
  j["projected"] = s.projected;
  j["description"] = s.description;
  j["node_name"] = s.node_name;
  j["domain_name"] = s.domain_name;
  j["chips_per_node"] = s.chips_per_node;
  j["chips_per_domain"] = s.chips_per_domain;
  Json up = Json::array();
  for (const auto& d : s.scale_up) up.push_back(dim_json(d));
  j["scale_up"] = up;
  j["scale_up_bandwidth_per_chip_gb_s"] = core::to_gbps(scale_up_total(s));
  j["scale_out"] = dim_json(s.scale_out);
  j["scale_out_bandwidth_per_domain_per_direction_gbit_s"] =
      core::to_gbit_per_s(s.scale_out.bandwidth_per_chip.value) / 2.0 * s.chips_per_domain;
  j["max_chips"] = s.max_chips.value;
  j["price_per_chip_hour_usd"] = core::to_dollars_per_hour(s.price_per_chip_hour.value);
  put_range(j, "price_per_chip_hour", "usd", s.price_per_chip_hour,
            [](core::DollarRate p) { return core::to_dollars_per_hour(p); });
  j["overhead_power_per_chip_w"] = core::to_watts(s.overhead_power_per_chip.value);
  j["facts"] = facts_json(s.facts);
  return j;
}

Json system_summary_json(const hw::SystemSpec& s) {
  Json j = Json::object();
  j["id"] = s.id;
  j["name"] = s.name;
  j["chip_id"] = s.chip_id;
  j["chips_per_domain"] = s.chips_per_domain;
  j["scale_up"] = scale_up_shape(s);
  j["scale_up_bandwidth_per_chip_gb_s"] = core::to_gbps(scale_up_total(s));
  j["scale_out_bandwidth_per_chip_gbit_s"] = core::to_gbit_per_s(s.scale_out.bandwidth_per_chip.value);
  j["scale_out_bandwidth_per_chip_per_direction_gbit_s"] =
      core::to_gbit_per_s(s.scale_out.bandwidth_per_chip.value) / 2.0;
  j["max_chips"] = s.max_chips.value;
  j["projected"] = s.projected;
  return j;
}

void print_facts(std::ostream& o, const std::vector<hw::FactRecord>& facts) {
  o << "  " << pad("field", 40) << pad("value", 30) << pad("confidence", 11)
            << "source\n";
  for (const auto& f : facts) {
    o << "  " << pad(f.path, 40) << pad(f.fact.value, 30)
              << pad(hw::confidence_name(f.fact.confidence), 11) << f.fact.source << "\n";
    if (f.fact.low && f.fact.high) o << "      range: " << *f.fact.low << " .. " << *f.fact.high << "\n";
    if (!f.fact.note.empty()) o << "      note: " << f.fact.note << "\n";
  }
}

void print_chip(std::ostream& o, const hw::ChipSpec& c) {
  o << "chip " << c.id << ": " << c.name << (c.projected ? "  [PROJECTED]" : "") << "\n";
  if (!c.description.empty()) o << "  " << c.description << "\n";
  o << "  peak (dense):";
  for (const auto& [d, v] : c.peak) {
    o << " " << core::dtype_name(d) << " " << fmt_num(core::to_tflops(v.value)) << " TF";
  }
  o << "\n  HBM " << fmt_num(core::to_gib(c.hbm_capacity.value)) << " GiB at "
            << fmt_num(core::to_tbps(c.hbm_bandwidth.value)) << " TB/s; SRAM "
            << fmt_num(core::to_bytes(c.sram.value) / 1048576.0) << " MiB; TDP "
            << with_range(c.tdp, watts_text);
  if (c.power_cap) o << " (power cap " << fmt_num(core::to_watts(c.power_cap->value)) << " W)";
  o << "\n";
  print_facts(o, c.facts);
}

void print_system(std::ostream& o, const hw::SystemSpec& s) {
  o << "system " << s.id << ": " << s.name << (s.projected ? "  [PROJECTED]" : "")
            << "\n";
  if (!s.description.empty()) o << "  " << s.description << "\n";
  o << "  chip " << s.chip_id << "; " << s.chips_per_node << " per " << s.node_name
            << "; " << s.chips_per_domain << " per " << s.domain_name << "; up to "
            << core::fmt_int(s.max_chips.value) << " chips\n";
  for (const auto& d : s.scale_up) {
    o << "  scale-up " << d.name << ": " << hw::dim_kind_name(d.kind) << " of " << d.size
              << ", " << fmt_num(core::to_gbps(d.bandwidth_per_chip.value))
              << " GB/s per chip (both directions), " << fmt_num(core::to_us(d.latency.value))
              << " us\n";
  }
  const auto& out_dim = s.scale_out;
  o << "  scale-out " << out_dim.name << ": " << hw::dim_kind_name(out_dim.kind) << " across "
            << out_dim.size << " domains, " << fmt_num(core::to_gbit_per_s(out_dim.bandwidth_per_chip.value) / 2.0)
            << " Gb/s per chip each way ("
            << fmt_num(core::to_gbit_per_s(out_dim.bandwidth_per_chip.value) / 2.0 * s.chips_per_domain)
            << " Gb/s per " << s.domain_name << "), " << fmt_num(core::to_us(out_dim.latency.value)) << " us, "
            << out_dim.tiers << " tiers, oversubscription " << fmt_num(out_dim.oversubscription)
            << (out_dim.rail_optimized ? ", rail-optimised" : "") << "\n";
  o << "  price " << with_range(s.price_per_chip_hour, price_text)
            << " per chip-hour; overhead power "
            << fmt_num(core::to_watts(s.overhead_power_per_chip.value)) << " W per chip\n";
  print_facts(o, s.facts);
}

}  // namespace

Json catalog_list_document(const Provenance& provenance, const hw::Catalog& cat) {
  Json systems = Json::array();
  for (const auto& id : cat.system_ids()) systems.push_back(system_summary_json(cat.system(id)));
  Json chips = Json::array();
  for (const auto& id : cat.chip_ids()) chips.push_back(id);
  return document("catalog list", provenance, Json::object(), Json{{"systems", systems}, {"chips", chips}});
}

std::string catalog_list_text(const hw::Catalog& cat) {
  std::ostringstream o;
  o << pad("id", 23) << pad("name", 46) << pad("chip", 18) << pad("domain", 7) << pad("scale-up", 24)
    << pad("GB/s/chip", 10) << pad("scale-out", 12) << pad("max chips", 11) << "projected\n";
  for (const auto& id : cat.system_ids()) {
    const auto& s = cat.system(id);
    o << pad(s.id, 23) << pad(s.name, 46) << pad(s.chip_id, 18) << pad(std::to_string(s.chips_per_domain), 7)
      << pad(scale_up_shape(s), 24) << pad(fmt_num(core::to_gbps(scale_up_total(s))), 10)
      << pad(fmt_num(core::to_gbit_per_s(s.scale_out.bandwidth_per_chip.value) / 2.0) + " Gb/s", 12)
      << pad(core::fmt_int(s.max_chips.value), 11) << (s.projected ? "yes" : "") << "\n";
  }
  o << "\nscale-up: per-chip bandwidth, both directions added (all scale-up dims); "
       "scale-out: per chip, each direction.\n"
       "Chips: "
    << core::join(cat.chip_ids()) << "\nxpusim catalog show ID prints every number with its source and confidence.\n";
  return o.str();
}

bool names_chip_only(const hw::Catalog& cat, const std::string& id) {
  const auto systems = cat.system_ids();
  const auto chips = cat.chip_ids();
  const bool is_system = std::find(systems.begin(), systems.end(), id) != systems.end();
  const bool is_chip = std::find(chips.begin(), chips.end(), id) != chips.end();
  return is_chip && !is_system;
}

Json system_show_document(const Provenance& provenance, const hw::SystemSpec& s) {
  const Json body = {{"kind", "system"}, {"system", system_json(s)}, {"chip", chip_json(s.chip)}};
  return document("catalog show", provenance, Json{{"id", s.id}}, body);
}

Json chip_show_document(const Provenance& provenance, const hw::ChipSpec& c) {
  return document("catalog show", provenance, Json{{"id", c.id}}, Json{{"kind", "chip"}, {"chip", chip_json(c)}});
}

std::string system_show_text(const hw::SystemSpec& s) {
  std::ostringstream o;
  print_system(o, s);
  o << "\n";
  print_chip(o, s.chip);
  return o.str();
}

std::string chip_show_text(const hw::ChipSpec& c) {
  std::ostringstream o;
  print_chip(o, c);
  return o.str();
}

}  // namespace xpusim::report
