// `parplan import --format megatron|nemo|torchtitan FILE --node NODE [--nodes N]
// [--vocab-size N] [--out JOB.json]`: reads an existing launch into a job file, so that
// `parplan simulate` predicts it and `parplan plan` / `compare` say what would change. Settings
// parplan does not read are listed on stderr, not fatal. Tested in tests/tools/import_test.cpp.
#include <cstdio>

#include "core/atomic_file.h"
#include "core/check.h"
#include "core/json_input.h"
#include "tools/cli_common.h"
#include "tools/command.h"
#include "tools/import/import_job.h"

namespace parplan::tools {

namespace {

struct ImportCliOptions {
  std::string format;
  std::string file;
  std::string out;
  std::string node;
  int64_t nodes = 0;
  int64_t vocab_size = 0;
};

const char* launch_kind(ExportFormat format) {
  switch (format) {
    case ExportFormat::Nemo:
      return "a Megatron-Bridge YAML override";
    case ExportFormat::Torchtitan:
      return "a torchtitan TOML job config";
    case ExportFormat::Megatron:
      break;
  }
  return "Megatron-LM arguments or a launch script";
}

void run_import(const ImportCliOptions& o) {
  ImportOptions options;
  options.node = o.node;
  if (o.nodes > 0) options.num_nodes = o.nodes;
  if (o.vocab_size > 0) options.vocab_size = o.vocab_size;
  const auto format = parse_export_format(o.format);
  std::string text;
  try {
    text = read_text_file(o.file);
  } catch (const InputError& e) {
    // read_text_file names JSON as what an empty file should have held.
    if (std::string(e.what()).find("an empty file") == std::string::npos) throw;
    throw InputError(o.file, "", "an empty file", launch_kind(*format));
  }
  const ImportResult result = import_launch(*format, text, o.file, options);
  for (const std::string& note : result.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  for (const std::string& key : result.unread) {
    std::fprintf(stderr, "not read: %s (no effect on parplan's prediction)\n", key.c_str());
  }
  const std::string json = result.job.dump(2) + "\n";
  if (o.out.empty()) {
    std::fwrite(json.data(), 1, json.size(), stdout);
    return;
  }
  write_file_atomically(o.out, json);
  std::fprintf(stderr,
               "wrote %s: `parplan simulate --job %s` predicts this launch, "
               "`parplan compare --job %s` compares it with the best plans\n",
               o.out.c_str(), o.out.c_str(), o.out.c_str());
}

}  // namespace

void register_import(CLI::App& app) {
  auto o = std::make_shared<ImportCliOptions>();
  auto* cmd = app.add_subcommand(
      "import", "Read a Megatron-LM, Megatron-Bridge or torchtitan launch into a job file");
  cmd->add_option("--format", o->format,
                  "megatron (arguments or script), nemo (Megatron-Bridge YAML) or torchtitan "
                  "(v0.2.2 TOML)")
      ->required()
      ->check(CLI::IsMember({"megatron", "nemo", "torchtitan"}));
  cmd->add_option("file", o->file, "The launch file")->required();
  cmd->add_option("--node", o->node, "Node preset or node file the launch runs on")->required();
  cmd->add_option("--nodes", o->nodes, "Number of nodes, when the launch does not say")
      ->check(CLI::Range(int64_t{1}, int64_t{10'000'000}));
  cmd->add_option("--vocab-size", o->vocab_size,
                  "Vocabulary size, when the launch leaves it to the tokenizer and its model is "
                  "no preset")
      ->check(CLI::Range(int64_t{1}, int64_t{100'000'000}));
  cmd->add_option("--out", o->out, "Write the job file here (default: stdout)");
  cmd->callback([o] { run_import(*o); });
}

}  // namespace parplan::tools
