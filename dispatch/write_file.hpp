#pragma once
// Writing a generated file so that readers never see a half-written one.
#include <string>
#include <string_view>

namespace ktune::dispatch {

// Writes `text` to a temporary file next to `path`, flushes it and renames it over `path`
// (atomic on POSIX file systems). A file replaced keeps its permissions; a new one gets 0666 less
// the umask. On any failure the temporary file is removed, `path` is left as it was, and an Error
// names the path and the cause.
void write_file_atomically(const std::string& path, std::string_view text);

}  // namespace ktune::dispatch
