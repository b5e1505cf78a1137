// `parplan import`: an existing launch (Megatron-LM arguments, a Megatron-Bridge YAML override,
// a torchtitan TOML) read back into a job file. Every setting that changes the cost model is
// read; settings parplan does not read are listed, not fatal. The GPU type is never in a
// launch, so the node comes from the caller (--node); the node count from the launch's
// torchrun line or its parallel degrees, else from the caller (--nodes). Tested in
// tests/tools/import_test.cpp (round trip of export and import) and tests/bad_inputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_input.h"
#include "tools/export/launch_settings.h"
#include "tools/import/launch_text.h"

namespace parplan::tools {

struct ImportOptions {
  std::string node;                   // node preset name or node file (required)
  std::optional<int64_t> num_nodes;   // replaces what the launch says
  std::optional<int64_t> vocab_size;  // when the launch does not give it (the tokenizer does)
  std::string base_dir = ".";         // for a node file's relative path
};

struct ImportResult {
  Json job;                         // a job file (docs/job_file.md)
  std::vector<std::string> unread;  // "FILE:LINE: KEY" parplan does not read
  std::vector<std::string> notes;   // what was assumed, one line each
};

ImportResult import_launch(ExportFormat format, std::string_view text, const std::string& file,
                           const ImportOptions& options);

// Largest integer a launch setting may hold here: above any layer, GPU, batch or vocabulary
// count, and small enough that products of a few of them stay far inside int64.
inline constexpr int64_t kMaxLaunchInteger = 1'000'000'000;

// Digits as a count up to kMaxLaunchInteger, else nullopt ("12" -> 12; "x", "" -> nullopt).
std::optional<int64_t> parse_launch_count(std::string_view digits);

// Settings by key with what was read of them; values turned into numbers with errors naming
// FILE:LINE and the key.
class SettingTable {
 public:
  SettingTable(std::vector<LaunchSetting> settings, std::string file);

  // The last setting of `key` (marking every one of them read), or null.
  const LaunchSetting* get(std::string_view key);
  bool has(std::string_view key) { return get(key) != nullptr; }
  std::optional<std::string> text(std::string_view key);
  // A positive integer; a shell variable or <PLACEHOLDER> reads as absent.
  std::optional<int64_t> integer(std::string_view key);
  // A non-negative integer.
  std::optional<int64_t> count(std::string_view key);
  std::optional<double> number(std::string_view key);
  std::optional<bool> boolean(std::string_view key);
  int64_t required_integer(std::string_view key);
  // Keys read for no effect on the prediction (paths, learning rate): never listed as unread.
  void mark_read_prefix(std::string_view prefix);
  std::vector<std::string> unread() const;
  [[noreturn]] void fail(const LaunchSetting& setting, const std::string& found,
                         const std::string& allowed) const;
  const std::string& file() const { return file_; }

 private:
  std::vector<LaunchSetting> settings_;
  std::vector<bool> read_;
  std::string file_;
};

// What one format's reader found, before the cluster and the model preset are settled.
struct ImportDraft {
  Json model = Json::object();        // inline model keys (docs/job_file.md#model), no name
  std::string model_preset;           // a preset the launch names by itself (torchtitan flavor)
  Json training = Json::object();     // global_batch_size, seq_length, precision, method, ...
  Json plan = Json::object();         // plan keys without dp
  std::vector<int64_t> chunk_layers;  // layers per model chunk when the launch lists them
  int64_t optimizer_instances = 0;    // distributed-optimizer copies over dp (zero_stage 1)
  int64_t num_nodes = 0;              // from the launch, 0 when it does not say
  int64_t gpus_per_node = 0;
  int64_t num_gpus = 0;  // product of the launch's degrees when it gives them all
  std::string framework;
  // What the launch says that parplan's model does not take from it, to be compared with
  // what the model assumes: the expert tensor-parallel size (parplan derives it) and whether
  // data-parallel communication overlaps compute (the framework's traits assume it does).
  std::optional<int64_t> expert_tp;
  bool overlaps_grad_reduce = true;
  bool overlaps_param_gather = true;
  std::optional<bool> fp8_param_gather;  // fp8 parameters all-gathered in fp8, when it says
  // MXFP8 parameters gathered through the gradient buffer, when it says
  std::optional<bool> fp8_reuse_grad_buf;
  // The MoE dispatcher the launch names ("alltoall", "deepep", "hybridep"): written as the
  // plan's moe_dispatcher only where "auto" would not resolve to it for the imported job.
  std::optional<std::string> moe_dispatcher;
  std::vector<std::string> notes;
};

ImportDraft read_megatron_launch(SettingTable& s);
ImportDraft read_nemo_launch(SettingTable& s);
// gpus_if_known: the caller's GPU count (--nodes), 0 when not given.
ImportDraft read_torchtitan_launch(SettingTable& s, int64_t gpus_if_known);

// The parplan model preset torchtitan names (name, flavor), or "" (launch_torchtitan.cpp).
std::string preset_for_torchtitan_flavor(std::string_view name, std::string_view flavor);

// A Megatron-Core launch's MoE dispatch into the draft of a MoE model: `dispatcher`
// "alltoall", "deepep", "hybridep", or "allgather" (read as the all-to-all parplan models, with
// a note naming `allgather_source` when ep > 1; nullopt: the launch does not say); and the
// batch-level overlap, with a note naming `delay_wgrad_key` when the launch overlaps without
// delayed weight gradients.
void record_moe_dispatch(ImportDraft& d, const std::optional<std::string>& dispatcher,
                         const std::string& allgather_source, bool overlap, bool delay_wgrad,
                         const std::string& delay_wgrad_key);

// MoE layer placement from a per-layer 0/1 pattern: {first_dense_layers, moe_layer_frequency},
// or nullopt when no such pair gives the pattern.
std::optional<std::pair<int64_t, int64_t>> moe_placement(const std::vector<int>& pattern);

}  // namespace parplan::tools
