#pragma once
// Schema versions and the steps between them. Version 0 is a file without tables (new or
// empty); step N brings version N-1 to N. All pending steps of one open run in one transaction,
// so a file is either at its old version, untouched, or at the new one.
#include <span>
#include <string>
#include <string_view>

#include <SQLiteCpp/Database.h>

namespace ktune::db {

struct Migration {
  int version;            // the version this step produces
  std::string_view what;  // one line for messages
  std::string_view sql;
};

// ktune's steps, versions 1, 2, ... in order.
std::span<const Migration> migrations() noexcept;

// The schema version recorded in `c` (0 for a file without tables). Throws Error naming `path`
// for a SQLite file that is not a ktune database.
int read_schema_version(SQLite::Database& c, const std::string& path);

// Throws Error naming `path` and both versions when `found` is newer than `latest`.
void refuse_newer(const std::string& path, int found, int latest);

// Applies the steps of `steps` newer than the file's version in one IMMEDIATE transaction and
// records the final version. Re-reads the version under the write lock, so that two processes
// opening one old file migrate it once, and returns that version (the one this call migrated
// from). Throws Error naming `path` and the failing step.
int migrate(SQLite::Database& c, const std::string& path, std::span<const Migration> steps);

}  // namespace ktune::db
