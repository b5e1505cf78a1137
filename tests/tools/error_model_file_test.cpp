// planner/data/error_model.json is generated (tools/error_model.sh from `parplan validate
// --write-error-model`): this test runs the script with the built binary into a temporary file
// and fails when the committed file differs, naming the first differing line and the command
// that regenerates it (docs/intervals.md).
#include "generated_file_check.h"

namespace parplan {
namespace {

TEST(ErrorModelFile, IsUpToDate) {
  testing_support::expect_generated_file_up_to_date(
      "error_model.sh", "planner/data/error_model.json",
      "planner/data/error_model.json is stale; regenerate it with `tools/error_model.sh` "
      "(from the repository root, after building build/tools/parplan), rebuild (the binary "
      "embeds it) and commit it.");
}

}  // namespace
}  // namespace parplan
