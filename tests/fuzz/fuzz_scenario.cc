// Scenario files (scenario/): the same document read as a training scenario, a serving scenario,
// the deprecated flat serving file and a sweep grid (with its points). The first byte picks
// JSON or YAML.

#include "fuzz_input.h"
#include "xpusim/scenario/serve_inputs.h"
#include "xpusim/scenario/sweep.h"
#include "xpusim/scenario/train_inputs.h"

namespace {

/// At most this many sweep points are expanded per input (a grid's size is its product).
constexpr std::size_t kPointsExpanded = 64;

void read_sweep(const std::string& path) {
  using namespace xpusim;
  const scenario::SweepGrid grid = scenario::read_sweep_file(path);
  const std::size_t points = scenario::point_count(grid);
  for (std::size_t i = 0; i < points && i < kPointsExpanded; ++i) (void)scenario::point_keys(grid, i);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  if (size < 1) return 0;
  const std::string path = fuzz::input_file(data + 1, size - 1, (data[0] & 1) ? ".yaml" : ".json");
  fuzz::accept_diagnostics([&] { (void)scenario::read_train_file(path); });
  fuzz::accept_diagnostics([&] { (void)scenario::read_serve_file(path); });
  fuzz::accept_diagnostics([&] { (void)scenario::read_flat_serve_file(path); });
  fuzz::accept_diagnostics([&] { read_sweep(path); });
  return 0;
}
