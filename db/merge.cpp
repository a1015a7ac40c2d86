#include "db/merge.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include "common/error.hpp"

namespace ktune::db {
namespace {

// The tables whose rows belong to a run (a `run_id` column naming runs.id; NULL for a row of no
// run, such as a declared gap), copied with their run. A table added to the schema that hangs off
// runs is one more line here: its columns are read from the schema.
struct RunTable {
  std::string_view name;
  // A uniqueness beyond the id: its columns (the ON CONFLICT target), and the column whose larger
  // value wins a conflict, as in one database where the later write replaces the earlier.
  std::string_view unique_columns = {}, newer_column = {};
};
constexpr RunTable run_tables[] = {
    {"measurements"},
    {"gaps", "family, arch, key, source", "created_at"},
    {"compiled_kernels"},
};

// One stored value, copied exactly (SQLite's storage class kept).
struct Value {
  int type = SQLITE_NULL;
  int64_t integer = 0;
  double real = 0;
  std::string bytes;  // text or blob
};

Value read_value(const SQLite::Column& c) {
  Value v;
  v.type = c.getType();
  if (v.type == SQLITE_INTEGER) v.integer = c.getInt64();
  if (v.type == SQLITE_FLOAT) v.real = c.getDouble();
  if (v.type == SQLITE_TEXT || v.type == SQLITE_BLOB)
    v.bytes.assign(static_cast<const char*>(c.getBlob()), static_cast<size_t>(c.getBytes()));
  return v;
}

void bind_value(SQLite::Statement& q, int index, const Value& v) {
  switch (v.type) {
    case SQLITE_INTEGER: q.bind(index, v.integer); break;
    case SQLITE_FLOAT: q.bind(index, v.real); break;
    case SQLITE_TEXT: q.bind(index, v.bytes); break;
    case SQLITE_BLOB: q.bind(index, v.bytes.data(), static_cast<int>(v.bytes.size())); break;
    default: q.bind(index); break;
  }
}

// The stored columns of `table` in `c` (generated ones left out: they follow), without `id`.
std::vector<std::string> stored_columns(SQLite::Database& c, std::string_view table) {
  SQLite::Statement q(c, "SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 AND name <> 'id' ORDER BY cid");
  q.bind(1, std::string(table));
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  if (out.empty()) throw Error(fmt::format("the schema has no table {}", table));
  return out;
}

using Row = std::vector<Value>;

// Every row of `table` in `c` (its `columns`, then its id), in id order.
std::vector<Row> read_rows(SQLite::Database& c, std::string_view table, const std::vector<std::string>& columns) {
  SQLite::Statement q(c, fmt::format("SELECT {}, id FROM {} ORDER BY id", fmt::join(columns, ", "), table));
  std::vector<Row> out;
  while (q.executeStep()) {
    Row r;
    for (int i = 0; i <= static_cast<int>(columns.size()); ++i) r.push_back(read_value(q.getColumn(i)));
    out.push_back(std::move(r));
  }
  return out;
}

size_t column_index(const std::vector<std::string>& columns, std::string_view name) {
  const auto it = std::find(columns.begin(), columns.end(), name);
  if (it == columns.end()) throw Error(fmt::format("the schema's table has no column {}", name));
  return static_cast<size_t>(it - columns.begin());
}

// Inserts rows of one table into `out`, unless `out` holds a row equal in every column.
class RowCopier {
 public:
  RowCopier(SQLite::Database& out, const RunTable& table, const std::vector<std::string>& columns)
      : columns_(columns), same_(out, same_sql(table, columns)), insert_(out, insert_sql(table, columns)) {}

  // True when the row was added (or replaced an older one of the same unique columns).
  bool copy(const Row& row) {
    for (size_t i = 0; i < columns_.size(); ++i) bind_value(same_, static_cast<int>(i + 1), row[i]);
    const bool present = same_.executeStep();
    same_.reset();
    if (present) return false;
    for (size_t i = 0; i < columns_.size(); ++i) bind_value(insert_, static_cast<int>(i + 1), row[i]);
    const bool changed = insert_.exec() > 0;
    insert_.reset();
    return changed;
  }

 private:
  static std::string same_sql(const RunTable& t, const std::vector<std::string>& columns) {
    std::vector<std::string> equal;
    for (size_t i = 0; i < columns.size(); ++i) equal.push_back(fmt::format("{} IS ?{}", columns[i], i + 1));
    return fmt::format("SELECT 1 FROM {} WHERE {} LIMIT 1", t.name, fmt::join(equal, " AND "));
  }
  static std::string insert_sql(const RunTable& t, const std::vector<std::string>& columns) {
    std::vector<std::string> params, updates;
    for (size_t i = 0; i < columns.size(); ++i) {
      params.push_back(fmt::format("?{}", i + 1));
      updates.push_back(fmt::format("{0} = excluded.{0}", columns[i]));
    }
    auto sql =
        fmt::format("INSERT INTO {} ({}) VALUES ({})", t.name, fmt::join(columns, ", "), fmt::join(params, ", "));
    if (!t.unique_columns.empty())
      sql += fmt::format(" ON CONFLICT ({}) DO UPDATE SET {} WHERE excluded.{} > {}.{}", t.unique_columns,
                         fmt::join(updates, ", "), t.newer_column, t.name, t.newer_column);
    return sql;
  }

  const std::vector<std::string>& columns_;
  SQLite::Statement same_, insert_;
};

}  // namespace

MergeCounts merge_databases(SQLite::Database& out, std::vector<SQLite::Database>& inputs,
                            const std::vector<std::string>& paths) {
  MergeCounts counts;
  const auto run_columns = stored_columns(out, "runs");
  const size_t uid = column_index(run_columns, "uid"), started = column_index(run_columns, "started_at");

  // Every input's runs, oldest first; (input, id there) -> id in `out`.
  struct InputRun {
    size_t input;
    Row row;
  };
  std::vector<InputRun> runs;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (auto& row : read_rows(inputs[i], "runs", run_columns)) runs.push_back({i, std::move(row)});
  std::stable_sort(runs.begin(), runs.end(),
                   [&](const InputRun& a, const InputRun& b) { return a.row[started].bytes < b.row[started].bytes; });
  std::map<std::pair<size_t, int64_t>, int64_t> run_ids;
  SQLite::Statement known(out, "SELECT id FROM runs WHERE uid = ?");
  std::vector<std::string> params;
  for (size_t i = 0; i < run_columns.size(); ++i) params.push_back(fmt::format("?{}", i + 1));
  SQLite::Statement insert(
      out, fmt::format("INSERT INTO runs ({}) VALUES ({})", fmt::join(run_columns, ", "), fmt::join(params, ", ")));
  for (const auto& r : runs) {
    const int64_t id_there = r.row.back().integer;
    if (r.row[uid].type != SQLITE_TEXT || r.row[uid].bytes.empty())
      throw Error(fmt::format("{}: run {} has no uid", paths[r.input], id_there));
    bind_value(known, 1, r.row[uid]);
    if (known.executeStep()) {
      run_ids[{r.input, id_there}] = known.getColumn(0).getInt64();
      ++counts.runs_known;
    } else {
      for (size_t c = 0; c < run_columns.size(); ++c) bind_value(insert, static_cast<int>(c + 1), r.row[c]);
      insert.exec();
      insert.reset();
      run_ids[{r.input, id_there}] = out.getLastInsertRowid();
      ++counts.runs;
    }
    known.reset();
  }

  for (const auto& table : run_tables) {
    const auto columns = stored_columns(out, table.name);
    const size_t run_id = column_index(columns, "run_id");
    RowCopier copier(out, table, columns);
    size_t added = 0;
    for (size_t i = 0; i < inputs.size(); ++i)
      for (auto& row : read_rows(inputs[i], table.name, columns)) {
        if (row[run_id].type != SQLITE_NULL) {
          const auto it = run_ids.find({i, row[run_id].integer});
          if (it == run_ids.end())
            throw Error(fmt::format("{}: {} row {} names run {}, which the file does not hold", paths[i], table.name,
                                    row.back().integer, row[run_id].integer));
          row[run_id].integer = it->second;
        }
        added += copier.copy(row);
      }
    counts.rows.emplace_back(std::string(table.name), added);
  }
  return counts;
}

}  // namespace ktune::db
