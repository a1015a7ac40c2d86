#pragma once
// db/schema.sql, compiled in at build time (db/embed_schema.cmake): schema version 1.
#include <string_view>

namespace ktune::db {
extern const std::string_view schema_sql;
}  // namespace ktune::db
