// A Hugging Face config.json (workload/): the model, then what `xpusim model show` derives from
// it (parameter counts, FLOPs per token, weight and KV-cache bytes).

#include "fuzz_input.h"
#include "xpusim/workload/accounting.h"
#include "xpusim/workload/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xpusim;
  const std::string path = fuzz::input_file(data, size, ".json");
  fuzz::accept_diagnostics([&] {
    const workload::ModelSpec m = workload::load_model(path, fuzz::data_dir() + "/models");
    (void)workload::count_params(m);
    (void)workload::train_flops_per_token(m, 4096, workload::RecomputeKind::None);
    (void)workload::prefill_flops_per_token(m, 4096);
    (void)workload::weight_bytes(m, core::Dtype::Bf16);
    (void)workload::kv_bytes_for_context(m, core::Dtype::Bf16, 4096);
  });
  return 0;
}
