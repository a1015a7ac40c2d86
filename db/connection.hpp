#pragma once
// Opening a ktune database file: the checks that reject a file before SQLite writes to it, the
// schema-version handshake and the per-connection PRAGMAs.
#include <span>
#include <string>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

#include "db/migrations.hpp"

namespace ktune::db {

enum class Access {
  read_only,   // query verbs: never writes, refuses files that need migrating
  read_write,  // the file must exist
  create,      // read_write, creating the file when absent
};

// SQLite's message for `e`; for a full disk (SQLITE_FULL) also that, and that the write failed
// whole: SQLite rolled it back, and what was committed before is intact.
std::string describe(const SQLite::Exception& e);

// Opens `path` and, when writable, migrates it to the last of `steps`; a read-only open requires
// the file to be at that version already. Throws Error naming the path and the cause for: a
// missing file, a file that is not SQLite, a truncated or corrupt file, a newer schema, a
// read-only file or directory when writing is needed. A rejected file is left byte-identical.
// `found_version`, when given, receives the file's version before this open's migration (read
// under the write lock: the version it migrated from, or the latest where another process did).
SQLite::Database open_connection(const std::string& path, Access access, std::span<const Migration> steps,
                                 int* found_version = nullptr);

}  // namespace ktune::db
