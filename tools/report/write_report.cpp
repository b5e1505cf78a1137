// Writes the four report files into one folder, each atomically (temp file, then rename).
#include <filesystem>

#include "core/atomic_file.h"
#include "core/check.h"
#include "tools/report/report_writers.h"

namespace parplan::tools {

void check_report_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder(dir);
  if (fs::is_directory(folder, ec)) return;
  if (fs::exists(folder, ec)) {
    throw InputError(dir, "", "a file that is not a folder", "a folder for the report");
  }
  const fs::path parent = folder.has_parent_path() ? folder.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) {
    throw InputError(dir, "", "a folder whose parent " + parent.string() + " does not exist",
                     "a folder in an existing folder (it is created when missing)");
  }
}

ReportFiles write_report(const std::string& dir, const ReportData& data,
                         const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  check_report_dir(dir);
  const fs::path folder(dir);
  std::error_code ec;
  if (!fs::is_directory(folder, ec) && !fs::create_directory(folder, ec) &&
      !fs::is_directory(folder, ec)) {
    throw Error(dir + ": cannot create the report folder: " + ec.message());
  }
  ReportFiles files{(folder / "report.html").string(), (folder / "report.md").string(),
                    (folder / "report.csv").string(), (folder / "report.json").string()};
  for (const auto* path : {&files.html, &files.markdown, &files.csv, &files.json}) {
    check_not_overwriting_inputs(*path, inputs);
  }
  write_file_atomically(files.json, report_to_json(data).dump(2) + "\n");
  write_file_atomically(files.csv, report_to_csv(data));
  write_file_atomically(files.markdown, report_to_markdown(data));
  write_file_atomically(files.html, report_to_html(data));
  return files;
}

}  // namespace parplan::tools
