#include "dispatch/write_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <utility>

#include "common/error.hpp"
#include "common/utf8.hpp"

namespace ktune::dispatch {
namespace {

// Owns the temporary file until it has been renamed into place. Its name holds at most 32 bytes
// of the target's, to say whose it is, so that a name of 255 bytes (the most a file system takes)
// can still be written; it is created with mode 0666 for the umask to narrow, as any new file is
// (mkstemp's 0600 would not be).
class TempFile {
 public:
  explicit TempFile(const std::filesystem::path& target) {
    std::random_device entropy;
    const auto name = target.filename().string();
    const auto whose = name.substr(0, utf8_boundary(name, 32));
    for (int attempt = 0; fd_ < 0; ++attempt) {
      path_ = (target.parent_path() / fmt::format(".{}.ktune-{:08x}.tmp", whose, entropy())).string();
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt == 100)) {
        const int why = errno;
        path_.clear();
        throw Error(fmt::format("cannot create a temporary file next to {}: {}", target.string(), std::strerror(why)));
      }
    }
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  // `mode`: the permissions of the file it replaces, kept; none for a new file.
  void write(std::string_view text, std::optional<std::filesystem::perms> mode) {
    while (!text.empty()) {
      auto n = ::write(fd_, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write");
      text.remove_prefix(static_cast<size_t>(n));
    }
    if (mode && ::fchmod(fd_, static_cast<mode_t>(*mode)) != 0) fail("chmod");
    if (::fsync(fd_) != 0) fail("fsync");
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close");
  }

  void rename_to(const std::string& target) {
    if (::rename(path_.c_str(), target.c_str()) != 0)
      throw Error(fmt::format("cannot rename {} to {}: {}", path_, target, std::strerror(errno)));
    path_.clear();  // it is the target now
  }

 private:
  [[noreturn]] void fail(const char* what) {
    throw Error(fmt::format("cannot {} {}: {}", what, path_, std::strerror(errno)));
  }

  std::string path_;
  int fd_ = -1;
};

// True when `path` holds an SQLite database: `--out` naming the `--db` would replace it.
bool is_database(const std::string& path) {
  static constexpr char kMagic[] = "SQLite format 3";  // 16 bytes, the NUL included
  char head[sizeof kMagic] = {};
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  const bool read = std::fread(head, 1, sizeof head, f) == sizeof head;
  std::fclose(f);
  return read && std::memcmp(head, kMagic, sizeof kMagic) == 0;
}

struct Target {
  std::string path;
  std::optional<std::filesystem::perms> mode;  // of the file it replaces; none for a new file
};

// The file `given` names, through links, checked to be one ktune may replace.
Target checked_target(const std::string& given) {
  namespace fs = std::filesystem;
  if (given.empty()) throw Error("no output path given");
  std::error_code ec;
  // A link is written through: the rename would replace the link itself, not the file it names.
  fs::path link = given;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(link, ec)); ++hops) {
    if (hops == 40) throw Error(fmt::format("cannot write {}: too many levels of symbolic links", given));
    const auto target = fs::read_symlink(link, ec);
    if (ec) throw Error(fmt::format("cannot write {}: {}", given, ec.message()));
    link = target.is_absolute() ? target : link.parent_path() / target;
  }
  const std::string path = link.string();
  const auto status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error(fmt::format("cannot write {}: {}", given, ec.message()));
  if (fs::is_directory(status)) throw Error(fmt::format("{} is a directory, not a file", given));
  if (is_database(path))
    throw Error(fmt::format("{} is an SQLite database (the --db?), not a file ktune writes: it is left alone", given));
  if (fs::is_regular_file(status)) return {path, status.permissions()};
  return {path, std::nullopt};
}

}  // namespace

struct StagedFiles::Staged {
  explicit Staged(Target t) : target(std::move(t)), file(target.path) {}
  Target target;
  TempFile file;
};

StagedFiles::StagedFiles() = default;
StagedFiles::~StagedFiles() = default;  // the temporary files of what was not committed go

void StagedFiles::stage(const std::string& path, std::string_view text) {
  auto staged = std::make_unique<Staged>(checked_target(path));
  staged->file.write(text, staged->target.mode);
  staged_.push_back(std::move(staged));
}

void StagedFiles::commit() {
  for (auto& s : staged_) s->file.rename_to(s->target.path);
  staged_.clear();
}

void write_file_atomically(const std::string& path, std::string_view text) {
  StagedFiles file;
  file.stage(path, text);
  file.commit();
}

}  // namespace ktune::dispatch
