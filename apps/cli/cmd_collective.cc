// xpusim collective --system ID --chips N --op OP --bytes SIZE [--algorithm NAME] [--json]:
// the time of one collective over all N chips of a catalog system, with the algorithm and bus
// bandwidths as nccl-tests reports them (--bytes is the per-chip buffer, nccl-tests' "size").

#include <nlohmann/json.hpp>
#include <iostream>

#include "cli_util.h"
#include "xpusim/api/api.h"
#include "xpusim/core/diagnostics.h"
#include "xpusim/hw/catalog.h"
#include "xpusim/report/collective_report.h"

namespace xpusim::cli {

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
  q.kind = api::parse_collective_op(op, "--op");
  q.bytes = api::parse_collective_bytes(bytes, "--bytes");
  const net::CollectiveCost c = api::collective_cost(sys, load_calibration(calibration_file), q);
  if (json) std::cout << report::collective_document(provenance(true, true, calibration_file), q, c).dump(2) << "\n";
  else std::cout << report::collective_text(q, c);
  return 0;
}

}  // namespace xpusim::cli
