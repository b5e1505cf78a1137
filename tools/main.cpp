// parplan: parallelism auto-planner and performance simulator for large-model training.
// One binary, git-style subcommands (see command.h). Exit codes: 0 ok, 1 input error or job
// impossible, 2 command-line usage.
#include <cstdio>
#include <exception>

#include "core/check.h"
#include "tools/cli_common.h"
#include "tools/command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "parplan: plans, simulates and runs parallel training of large transformer models.\n"
      "Start with: parplan simulate --job JOB.json   (parplan COMMAND --help for more)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "parplan 0.1.0");
  // Usage errors (exit 2) start like every other error message.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    return "error: " + CLI::FailureMessage::simple(failed, e);
  });
  parplan::tools::register_simulate(app);
  parplan::tools::register_plan(app);
  parplan::tools::register_models(app);
  parplan::tools::register_nodes(app);
  parplan::tools::register_validate(app);
  parplan::tools::register_run(app);
  parplan::tools::register_compare(app);
  parplan::tools::register_export(app);
  parplan::tools::register_profile(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const parplan::tools::QuietExit& e) {
    return e.code;
  } catch (const parplan::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
