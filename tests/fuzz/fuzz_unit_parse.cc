// Quantities written with units (core/unit_parse): "4.9 TB/s", "$2.10/h", "144 GiB".

#include "fuzz_input.h"
#include "xpusim/core/unit_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto any = core::parse_quantity_any(text);
  if (any) (void)core::dimension_name(any->t, any->b, any->f, any->d, any->e);
  (void)core::parse_quantity<core::Bytes>(text);
  (void)core::parse_quantity<core::Seconds>(text);
  return 0;
}
