#include "db/connection.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>
#include <vector>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include "common/error.hpp"
#include "common/shell_word.hpp"

namespace ktune::db {
namespace fs = std::filesystem;

namespace {

// Long enough for a sweep's commit to wait out another process's transaction.
constexpr int busy_timeout_ms = 10'000;

std::string errno_text(int e) { return std::generic_category().message(e); }

uint32_t be32(const unsigned char* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

std::string printable(const unsigned char* p, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (p[i] >= 0x20 && p[i] < 0x7f) ? char(p[i]) : '.';
  return s;
}

// The file's size and its first 100 bytes, read without any SQLite lock.
struct RawHeader {
  uintmax_t size = 0;
  std::array<unsigned char, 100> bytes{};
  size_t got = 0;
  bool operator==(const RawHeader&) const = default;
};

RawHeader read_raw_header(const std::string& path) {
  RawHeader r;
  std::error_code ec;
  r.size = fs::file_size(path, ec);
  if (ec) throw Error(fmt::format("{}: cannot stat: {}", path, ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot read: {}", path, errno_text(errno)));
  in.read(reinterpret_cast<char*>(r.bytes.data()), r.bytes.size());
  r.got = static_cast<size_t>(in.gcount());
  return r;
}

// Bytes the header says the file holds, or 0 where the header's page count is not to be trusted.
uint64_t declared_bytes(const RawHeader& r) {
  const auto& h = r.bytes;
  const uint32_t raw_page = uint32_t(h[16]) << 8 | h[17];
  const uint64_t page_size = raw_page == 1 ? 65536 : raw_page;
  const uint32_t pages = be32(&h[28]);
  // The page count is valid only when the change counter matches "version-valid-for".
  return pages != 0 && be32(&h[24]) == be32(&h[92]) ? pages * page_size : 0;
}

bool has_content(const std::string& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  return !ec && size > 0;
}

// Rejects, from the 100-byte header alone and before SQLite opens it, a file that is not SQLite
// or that is shorter than its header says (SQLite itself only notices the latter when it reads
// a missing page, possibly half-way through a write).
// The header is read without a lock, so a writer may be half-way through a commit: the size is
// judged only on two identical readings with no rollback journal beside the file (pages still in
// a -wal file are not in the main file yet; a -journal means a commit in flight or one SQLite
// will roll back). Anything else is left to SQLite, which checks the size again under its lock.
void check_header(const std::string& path) {
  auto first = read_raw_header(path);
  if (first.size == 0) return;                        // an empty file is an empty database: schema version 0
  static constexpr char magic[] = "SQLite format 3";  // 16 bytes with the NUL
  const bool starts_right = first.got >= sizeof magic && std::memcmp(first.bytes.data(), magic, sizeof magic) == 0;
  if (!starts_right)
    throw Error(fmt::format("{}: file is not a database: it starts with '{}', not with the SQLite header '{}'", path,
                            printable(first.bytes.data(), std::min<size_t>(first.got, 16)), "SQLite format 3"));
  if (first.got < first.bytes.size())
    throw Error(fmt::format("{}: truncated: {} bytes, shorter than the {}-byte SQLite header", path, first.got,
                            first.bytes.size()));
  const auto declared = declared_bytes(first);
  if (first.size >= declared || has_content(path + "-wal") || has_content(path + "-journal")) return;
  if (read_raw_header(path) != first) return;
  throw Error(fmt::format("{}: truncated or corrupt: its header declares {} pages of {} bytes ({} bytes), "
                          "the file has {} bytes",
                          path, be32(&first.bytes[28]), declared / be32(&first.bytes[28]), declared, first.size));
}

fs::path directory_of(const std::string& path) {
  auto dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// errno of the failed access(2), or 0 when `file` grants `mode`.
int access_error(const fs::path& file, int mode) { return ::access(file.c_str(), mode) == 0 ? 0 : errno; }

// Writing needs the file and its directory: SQLite keeps PATH-wal and PATH-shm next to it.
void require_writable(const std::string& path, bool exists) {
  if (int e = exists ? access_error(path, W_OK) : 0)
    throw Error(fmt::format("{}: cannot open for writing: {}", path, errno_text(e)));
  const auto dir = directory_of(path);
  if (int e = access_error(dir, W_OK | X_OK))
    throw Error(fmt::format("{}: cannot write in directory {} ({}); SQLite needs to create {}-wal and {}-shm there",
                            path, dir.string(), errno_text(e), path, path));
}

// file: URI of an absolute path, for the query parameters SQLite reads only from URIs.
std::string file_uri(const std::string& path, std::string_view query) {
  std::string uri = "file:";
  for (unsigned char ch : fs::absolute(path).string()) {
    if (std::isalnum(ch) || std::string_view("/-._~").find(char(ch)) != std::string_view::npos)
      uri += char(ch);
    else
      uri += fmt::format("%{:02X}", ch);
  }
  return uri + "?" + std::string(query);
}

// Another tool's write in rollback-journal mode (ktune writes through a -wal) that was killed
// half-way leaves PATH-journal holding the pages the file had before it: SQLite copies them back
// at the next open that may write. A read-only open cannot, and an immutable one would read the
// half-written file.
Error hot_journal_error(const std::string& path) {
  return Error(fmt::format("{}: an interrupted write left {}-journal, whose pages SQLite must copy back into the "
                           "file before it can be read; a read-only open cannot. Open it once for writing where the "
                           "file and its directory are writable (a ktune command that writes to it, or `sqlite3 {} "
                           "'PRAGMA quick_check'`)",
                           path, path, path));
}

SQLite::Database connect(const std::string& path, Access access) {
  if (access != Access::read_only)
    return SQLite::Database(path, SQLite::OPEN_READWRITE | (access == Access::create ? SQLite::OPEN_CREATE : 0),
                            busy_timeout_ms);
  // A reader of a WAL file needs PATH-shm; where it cannot be created and no -wal exists, no
  // writer can be active either, so the file may be read as immutable (which ignores journals).
  std::error_code ec;
  if (access_error(directory_of(path), W_OK | X_OK) != 0 && !fs::exists(path + "-wal", ec)) {
    if (has_content(path + "-journal")) throw hot_journal_error(path);
    return SQLite::Database(file_uri(path, "immutable=1"), SQLite::OPEN_READONLY | SQLite::OPEN_URI, busy_timeout_ms);
  }
  SQLite::Database c(path, SQLite::OPEN_READONLY, busy_timeout_ms);
  try {  // SQLite looks for a hot journal at the first read
    SQLite::Statement(c, "SELECT 1 FROM sqlite_master LIMIT 1").executeStep();
  } catch (const SQLite::Exception& e) {
    if (e.getExtendedErrorCode() == SQLITE_READONLY_ROLLBACK) throw hot_journal_error(path);
    throw;
  }
  return c;
}

// A corrupt file must not be written to: a write can spread the damage.
void require_intact(SQLite::Database& c, const std::string& path) {
  std::vector<std::string> problems;
  SQLite::Statement q(c, "PRAGMA quick_check(3)");
  while (q.executeStep()) {
    // Rows are "ok" or findings, some prefixed with a "*** in database main ***" line.
    std::string_view text = q.getColumn(0).getText();
    for (size_t end; !text.empty(); text.remove_prefix(end == text.npos ? text.size() : end + 1)) {
      end = text.find('\n');
      auto line = text.substr(0, end);
      if (line != "ok" && !line.starts_with("***")) problems.emplace_back(line);
    }
  }
  if (!problems.empty())
    throw Error(fmt::format("{}: corrupt ({}); ktune will not write to it", path, fmt::join(problems, "; ")));
}

// Entering WAL takes an exclusive lock, and SQLite answers SQLITE_BUSY at once, without its busy
// handler, when another connection is entering WAL at the same moment (two first opens of a new
// file). Retry for as long as the busy timeout would have waited.
void enter_wal(SQLite::Database& c) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
  for (;;) {
    try {
      c.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const SQLite::Exception& e) {
      if ((e.getErrorCode() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

std::string describe(const SQLite::Exception& e) {
  if ((e.getErrorCode() & 0xff) != SQLITE_FULL) return e.what();
  return fmt::format("disk full: no space left for the database or its -wal / -journal file ({}); this write was "
                     "rolled back, everything committed before it is intact",
                     e.what());
}

SQLite::Database open_connection(const std::string& path, Access access, std::span<const Migration> steps,
                                 int* found_version) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error(fmt::format("{}: cannot access: {}", path, ec.message()));
  const bool exists = fs::exists(status);
  if (!exists && access != Access::create) throw Error(fmt::format("{}: no such database file", path));
  if (exists && !fs::is_regular_file(status)) throw Error(fmt::format("{}: not a regular file", path));
  if (exists) check_header(path);
  if (access != Access::read_only) require_writable(path, exists);

  const int latest = steps.back().version;
  try {
    auto c = connect(path, access);
    if (access != Access::read_only && sqlite3_db_readonly(c.getHandle(), "main") == 1)
      throw Error(fmt::format("{}: SQLite can open it only read-only (file or file system not writable)", path));
    const int found = read_schema_version(c, path);
    if (found_version) *found_version = found;
    refuse_newer(path, found, latest);
    if (access == Access::read_only) {
      if (found == 0) throw Error(fmt::format("{}: an empty database, without ktune's tables: nothing to read", path));
      if (found < latest)
        throw Error(fmt::format("{}: schema version {} is older than {}, the one this ktune reads; `ktune migrate --db "
                                "{}` migrates it (ktune builds that know only version {} cannot read it afterwards)",
                                path, found, latest, shell_word(path), found));
      return c;
    }
    require_intact(c, path);
    // Migrate before switching to WAL: a failed migration then leaves the file byte-identical.
    // And before switching foreign keys on (which no transaction can do), so that a step that
    // rebuilds a table (create, copy, drop the old one) drops no row that refers to it.
    if (found < latest) {
      const int migrated_from = migrate(c, path, steps);
      if (found_version) *found_version = migrated_from;
    }
    c.exec("PRAGMA foreign_keys = ON");
    enter_wal(c);
    c.exec("PRAGMA synchronous = NORMAL");  // durable at each checkpoint; WAL keeps it consistent
    return c;
  } catch (const SQLite::Exception& e) {
    throw Error(fmt::format("{}: {}", path, describe(e)));
  }
}

}  // namespace ktune::db
