// A NumPy .npy file held in memory (numerics/tensor_io), then the MX quantisation statistics
// `xpusim mx stats` prints for it, along its last axis and along its first.

#include "fuzz_input.h"
#include "xpusim/numerics/mx.h"
#include "xpusim/numerics/stats.h"
#include "xpusim/numerics/tensor_io.h"

namespace {

/// Tensors up to this many elements are also quantised (bigger ones cost time, not coverage).
constexpr std::size_t kElementsQuantised = 4096;

void quantise(const xpusim::numerics::Tensor& t) {
  using namespace xpusim::numerics;
  if (t.data.size() > kElementsQuantised) return;
  QuantOptions o;
  o.format = Format::Mxfp4E2m1;
  (void)quant_stats(t.data.data(), t.shape, o);
  o.axis = 0;
  xpusim::fuzz::accept_diagnostics([&] { (void)quant_stats(t.data.data(), t.shape, o); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  fuzz::accept_diagnostics([&] {
    const numerics::Tensor t = numerics::parse_npy(bytes, "fuzz.npy");
    (void)numerics::shape_string(t.shape);
    quantise(t);
  });
  return 0;
}
