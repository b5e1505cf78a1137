// libFuzzer target: arbitrary bytes as a Hugging Face config.json (parse_json ->
// import_hf_config), then the imported model's parameter counts. Built with
// PARPLAN_ENABLE_FUZZERS; run by tools/fuzz.sh.
#include <cmath>

#include "core/hf_config.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parplan;
  fuzz::expect_clean([&] {
    const Json object = parse_json(fuzz::as_text(data, size), "config.json");
    const ModelSpec model = import_hf_config(object, "models/fuzz/config.json");
    // An accepted model is within the bounds that keep every int64 count from overflowing.
    const double params = model_params_in_double(model, 4096);
    PARPLAN_ASSERT(params > 0 && params <= kMaxModelParams);
    PARPLAN_ASSERT(model.total_params(4096) > 0 && model.active_params(4096) > 0);
  });
  return 0;
}
