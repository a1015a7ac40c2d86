#pragma once
// Writing a generated file so that readers never see a half-written one.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::dispatch {

// Files written in two steps, so that a set of them changes together or not at all in practice:
// stage() writes each to a temporary file next to its path and flushes it, which is where a full
// disk or a bad path fails; commit() then renames them over their paths in the order staged.
// What is not committed is removed, and the paths are left as they were.
class StagedFiles {
 public:
  StagedFiles();
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  // Checks `path` as write_file_atomically does and writes `text` next to it. Throws Error.
  void stage(const std::string& path, std::string_view text);
  // Renames every staged file into place. Throws Error naming the file that failed.
  void commit();

 private:
  struct Staged;
  std::vector<std::unique_ptr<Staged>> staged_;
};

// Writes `text` to a temporary file next to `path`, flushes it and renames it over `path`
// (atomic on POSIX file systems). A file replaced keeps its permissions; a new one gets 0666 less
// the umask. On any failure the temporary file is removed, `path` is left as it was, and an Error
// names the path and the cause.
void write_file_atomically(const std::string& path, std::string_view text);

}  // namespace ktune::dispatch
