// Arrivals files (serve --arrivals FILE; src/serve/arrivals_file.cc): any bytes are read as an
// arrivals CSV; every outcome is requests or an InputError, bounded in time and memory.

#include "fuzz_input.h"
#include "xpusim/serve/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string path = fuzz::input_file(data, size, ".csv");
  fuzz::accept_diagnostics([&] { (void)serve::read_arrivals_file(path); });
  return 0;
}
