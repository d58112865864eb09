// A validation CSV (validation/): every row read and checked.

#include "fuzz_input.h"
#include "xpusim/validation/row.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string path = fuzz::input_file(data, size, ".csv");
  fuzz::accept_diagnostics([&] { (void)validation::read_csv(path); });
  return 0;
}
