// Calibration override files (calib/, `--calibration FILE`): the document applied over the
// shipped parameters, as every command reads it. The first byte picks JSON or YAML.

#include "fuzz_input.h"
#include "xpusim/calib/params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  if (size < 1) return 0;
  static const calib::Params shipped = calib::load_shipped(fuzz::data_dir());
  const std::string path = fuzz::input_file(data + 1, size - 1, (data[0] & 1) ? ".yaml" : ".json");
  fuzz::accept_diagnostics([&] {
    calib::Params params = shipped;
    calib::apply_override(params, path);
  });
  return 0;
}
