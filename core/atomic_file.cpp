#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/check.h"

namespace parplan {

void write_file_atomically(const std::string& path, std::string_view text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    throw InputError(path, "", "a path whose folder does not exist",
                     "a path in an existing folder");
  }
  if (fs::is_directory(target, ec)) {
    throw InputError(path, "", "a directory", "a file path to write");
  }
  std::string temp_name = ".";
  temp_name += target.filename().string();
  temp_name += ".tmp.XXXXXX";
  std::string temp = (folder / temp_name).string();
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    throw Error(path + ": cannot create a temporary file in " + folder.string() + ": " +
                std::strerror(errno));
  }
  const char* data = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, left);
    if (written < 0) {
      if (errno == EINTR) continue;
      const std::string reason = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      throw Error(path + ": write failed: " + reason);
    }
    data += written;
    left -= static_cast<std::size_t>(written);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temp.c_str());
    throw Error(path + ": cannot flush the file: " + std::strerror(errno));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw Error(path + ": cannot rename the temporary file into place: " + reason);
  }
}

void check_not_overwriting_inputs(const std::string& output,
                                  const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& input : inputs) {
    if (input.empty()) continue;
    if (fs::exists(output, ec) && fs::equivalent(output, input, ec)) {
      throw InputError(output, "", "the same file as the input " + input,
                       "an output path different from every input");
    }
  }
}

}  // namespace parplan
