// parplan: parallelism auto-planner and performance simulator for large-model training.
// One binary, git-style subcommands (see command.h). Exit codes: 0 ok, 1 input error or job
// impossible, 2 command-line usage.
#include <cstdio>
#include <exception>

#include "core/check.h"
#include "core/json_input.h"
#include "tools/cli_common.h"
#include "tools/command.h"

namespace {

// A first argument that is neither an option nor a command: CLI11 would say only that a
// command is required. Names the commands and the nearest one instead (exit 2, usage).
bool unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::string given = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands({})) {
    if (sub->get_name() == given) return false;
    names.push_back(sub->get_name());
  }
  std::vector<std::string> prefixed;
  for (const auto& name : names) {
    if (name.starts_with(given)) prefixed.push_back(name);
  }
  const auto hint = prefixed.empty()
                        ? parplan::nearest_key_hint(given, names)
                        : " (did you mean " + parplan::quoted_alternatives(prefixed) + "?)";
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  std::fprintf(stderr, "error: %s: found an unknown command; allowed: %s%s\n", given.c_str(),
               list.c_str(), hint.c_str());
  return true;
}

}  // namespace

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
  parplan::tools::register_calibrate(app);
  parplan::tools::register_run(app);
  parplan::tools::register_compare(app);
  parplan::tools::register_export(app);
  parplan::tools::register_import(app);
  parplan::tools::register_profile(app);
  if (unknown_command(app, argc, argv)) return 2;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const parplan::tools::QuietExit& e) {
    return e.code;
  } catch (const parplan::UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const parplan::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
