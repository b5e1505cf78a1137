// docs/validation_results.md is generated (tools/validation_report.sh from `parplan validate
// --published`): this test runs the script with the built binary into a temporary file and
// fails when the committed page differs, naming the first differing line and the command that
// regenerates the page. The script's own failures (a data file validate rejects, a text table
// it cannot read) fail the test too.
#include "generated_file_check.h"

namespace parplan {
namespace {

TEST(ValidationReport, IsUpToDate) {
  testing_support::expect_generated_file_up_to_date(
      "validation_report.sh", "docs/validation_results.md",
      "docs/validation_results.md is stale; regenerate it with `tools/validation_report.sh` "
      "(from the repository root, after building build/tools/parplan) and commit it.");
}

}  // namespace
}  // namespace parplan
