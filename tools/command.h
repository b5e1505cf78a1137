// The subcommand table of the `parplan` binary. Each tools/cmd_<name>.cpp defines one
// register_<name>() that adds a CLI11 subcommand with its options and callback; main.cpp
// lists them once. Callbacks throw parplan::Error for user errors (exit 1); CLI11 reports
// usage errors (exit 2).
#pragma once

#include <CLI/CLI.hpp>

namespace parplan::tools {

void register_models(CLI::App& app);
void register_nodes(CLI::App& app);
void register_simulate(CLI::App& app);
void register_plan(CLI::App& app);
void register_validate(CLI::App& app);
void register_compare(CLI::App& app);
void register_export(CLI::App& app);
void register_import(CLI::App& app);
void register_profile(CLI::App& app);
void register_run(CLI::App& app);
void register_calibrate(CLI::App& app);

}  // namespace parplan::tools
