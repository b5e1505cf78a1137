// Writes files whole or not at all: the text goes to a temporary file beside the target,
// is flushed, then renamed over it (rename is atomic on POSIX file systems). An interrupted
// run leaves either the old file or the new one. Tested in tests/core/atomic_file_test.cpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace parplan {

// Throws parplan::Error when the folder is missing or not writable.
void write_file_atomically(const std::string& path, std::string_view text);

// Refuses (throws InputError) when `output` names the same file as any of `inputs`.
void check_not_overwriting_inputs(const std::string& output,
                                  const std::vector<std::string>& inputs);

}  // namespace parplan
