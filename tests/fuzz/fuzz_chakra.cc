// Chakra execution traces (workload/chakra.h, `xpusim replay`): the bytes parsed as one rank's
// trace, and the same bytes read from a file (the reader's gzip detection and size checks).

#include "fuzz_input.h"
#include "xpusim/workload/chakra.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::accept_diagnostics([&] { (void)workload::parse_chakra(bytes, "fuzz.et"); });
  const std::string path = fuzz::input_file(data, size, ".et");
  fuzz::accept_diagnostics([&] { (void)workload::read_chakra(path); });
  return 0;
}
