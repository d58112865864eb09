// JSON and YAML documents (config/) and the catalog readers over them (hw/): the first byte picks
// the syntax, the rest is the file.

#include "fuzz_input.h"

#include <nlohmann/json.hpp>
#include "xpusim/config/document.h"
#include "xpusim/hw/catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  if (size < 1) return 0;
  const std::string path = fuzz::input_file(data + 1, size - 1, (data[0] & 1) ? ".yaml" : ".json");
  fuzz::accept_diagnostics([&] {
    const config::Json doc = config::load_document(path);
    (void)config::brief(doc);
  });
  fuzz::accept_diagnostics([&] { (void)hw::parse_chip(path); });
  fuzz::accept_diagnostics([&] { (void)hw::parse_system(path); });
  return 0;
}
