// xpusim collective --system ID --chips N --op OP --bytes SIZE [--algorithm NAME] [--json]:
// the time of one collective over all N chips of a catalog system, with the algorithm and bus
// bandwidths as nccl-tests reports them (--bytes is the per-chip buffer, nccl-tests' "size").

#include <cmath>
#include <iostream>

#include "cli_util.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/core/suggest.h"
#include "xpusim/core/unit_parse.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/report/collective_report.h"

namespace xpusim::cli {

namespace {

const std::vector<std::pair<std::string, net::CollectiveKind>> kOps = {
    {"all-reduce", net::CollectiveKind::AllReduce},
    {"all-gather", net::CollectiveKind::AllGather},
    {"reduce-scatter", net::CollectiveKind::ReduceScatter},
    {"all-to-all", net::CollectiveKind::AllToAll},
    {"broadcast", net::CollectiveKind::Broadcast},
};

net::CollectiveKind parse_op(const std::string& op) {
  std::vector<std::string> names;
  for (const auto& [name, kind] : kOps) {
    if (name == op) return kind;
    names.push_back(name);
  }
  core::fail("--op", "unknown collective '" + op + "'", op, "one of: " + core::join(names),
             core::did_you_mean(op, names));
}

/// "--bytes 1073741824" (bytes) or "--bytes '1 GiB'": a positive, finite size.
core::Bytes parse_bytes(const std::string& text) {
  char* end = nullptr;
  const double plain = std::strtod(text.c_str(), &end);
  core::Bytes b;
  if (end != text.c_str() && *end == '\0') {
    b = core::bytes(plain);
  } else {
    auto parsed = core::parse_quantity<core::Bytes>(text);
    if (!parsed) core::fail("--bytes", parsed.error(), text, "a size such as 1073741824 or '1 GiB'");
    b = *parsed;
  }
  if (!std::isfinite(core::to_bytes(b)) || core::to_bytes(b) < 1.0)
    core::fail("--bytes", "the per-chip buffer must be at least 1 byte", text, ">= 1 B, finite");
  return b;
}

}  // namespace

int run_collective(const Args& args) {
  CLI::App app{"Time of one collective over N chips of a system, with nccl-tests' algbw and busbw",
               "xpusim collective"};
  std::string system, op, bytes;
  long long chips = 0;
  report::CollectiveQuery q;
  std::string calibration_file;
  bool json = false;
  app.add_option("--system", system, "catalog system id")->required();
  app.add_option("--chips", chips, "ranks in the collective (all of them, stride 1)")->required();
  app.add_option("--op", op, "all-reduce | all-gather | reduce-scatter | all-to-all | broadcast")->required();
  app.add_option("--bytes", bytes, "per-chip buffer as nccl-tests' size: bytes or e.g. '1 GiB'")->required();
  app.add_option("--algorithm", q.algorithm, "auto (fastest, as NCCL's tuner) or a registered algorithm");
  app.add_flag("--json", json, "print one JSON document");
  add_calibration_option(app, calibration_file);
  add_catalog_option(app);
  if (int rc = parse(app, args); rc >= 0) return rc;

  const hw::Catalog cat = load_catalog();
  const hw::SystemSpec& sys = cat.system(system, "--system");
  if (chips < 2) core::fail("--chips", "a collective needs at least 2 chips", std::to_string(chips), ">= 2");
  q.system = system;
  q.chips = chips;
  q.kind = parse_op(op);
  q.bytes = parse_bytes(bytes);
  net::TopologyOptions topology_options;
  topology_options.params = net::network_params(load_calibration(calibration_file));
  const net::Topology topo = net::Topology::build(sys, chips, topology_options);
  net::CollectiveOptions opt;
  opt.algorithm = q.algorithm;
  const net::CollectiveCost c = net::collective_cost(topo, q.kind, q.bytes, {chips, 1}, opt);
  if (json) std::cout << report::collective_document(provenance(true, true, calibration_file), q, c).dump(2) << "\n";
  else std::cout << report::collective_text(q, c);
  return 0;
}

}  // namespace xpusim::cli
