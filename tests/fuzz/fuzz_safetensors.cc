// A .safetensors file held in memory (numerics/tensor_io): its tensor names, then each tensor.

#include "fuzz_input.h"
#include "xpusim/numerics/tensor_io.h"

namespace {

/// At most this many tensors are decoded per input.
constexpr std::size_t kTensorsDecoded = 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::accept_diagnostics([&] {
    const std::vector<std::string> names = numerics::safetensors_names(bytes, "fuzz.safetensors");
    for (std::size_t i = 0; i < names.size() && i < kTensorsDecoded; ++i)
      fuzz::accept_diagnostics([&] { (void)numerics::parse_safetensors(bytes, "fuzz.safetensors", names[i]); });
    (void)numerics::parse_safetensors(bytes, "fuzz.safetensors", "");
  });
  return 0;
}
