// libFuzzer target: arbitrary bytes as a node file (parse_json -> parse_node_spec), then the
// node written back as JSON and read again, which must give the same node. Built with
// PARPLAN_ENABLE_FUZZERS; run by tools/fuzz.sh.
#include "core/cluster_spec.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace parplan;
  fuzz::expect_clean([&] {
    const Json object = parse_json(fuzz::as_text(data, size), "node.json");
    const NodeSpec node = parse_node_spec(object, "node.json", "");
    const Json written = node_spec_to_json(node);
    PARPLAN_ASSERT(node_spec_to_json(parse_node_spec(written, "written", "")) == written);
  });
  return 0;
}
