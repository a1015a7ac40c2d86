#pragma once
// Copying the runs of other ktune databases, and every row that hangs off them, into one
// (`ktune merge`; Database::merge calls it inside its write transaction).
#include <string>
#include <vector>

#include <SQLiteCpp/Database.h>

#include "db/database.hpp"

namespace ktune::db {

// Copies into `out` (at the current schema version, in a transaction the caller commits) the runs
// of each input connection (`inputs[i]` opened from `paths[i]`, read-only, at the same version)
// and the rows of every table in run_tables(). A run whose uid `out` holds already is not copied
// again; neither is a row equal in every column to one `out` holds for that run. Runs are copied
// oldest first (started_at, then input order), rows in id order, so that the merged ids follow
// the order one database written by all inputs in turn would have. Throws SQLite::Exception or
// Error; the caller's rollback then leaves `out` as it was.
MergeCounts merge_databases(SQLite::Database& out, std::vector<SQLite::Database>& inputs,
                            const std::vector<std::string>& paths);

}  // namespace ktune::db
