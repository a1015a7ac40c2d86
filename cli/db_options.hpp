#pragma once
// What the database verbs (query, gaps, gap) share: the filter options, and problem keys typed by
// people ("heads=16 block_len=2 kv_dtype=fp8_e4m3fn ...") read with the family's field specs.
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/params.hpp"
#include "db/database.hpp"
#include "kernels/family.hpp"

namespace ktune::cli {

struct DbFilterOptions {
  std::string db;
  std::string kernel, arch, device;
  int64_t run = 0;  // 0: every run
  std::vector<std::string> where;
  std::string format = "table";
};

// --db (required), --kernel, --arch, --device, --run, --where, --format.
void add_db_filter_options(CLI::App& cmd, DbFilterOptions& o);
// Resolves --where values through the key fields (labels allowed). Throws Error.
db::Filter to_filter(const DbFilterOptions& o);

// For a query that found no row: a note on `err` for each --kernel, --arch or --device value that
// nothing in the database has (a typo finds no rows silently otherwise; a database may hold
// families this ktune no longer has, so the values are not refused), naming the values it has.
void note_absent_filter_values(db::Database& db, const DbFilterOptions& o, std::ostream& err);

// The registered family of that name, or nullptr (results of families this ktune no longer has
// are still shown, with raw numbers).
const Family* registered_family(std::string_view name) noexcept;

// A key as a person types it: name=value items separated by spaces or commas, in any order,
// values as labels or integers. With `fields` every field is required and range-checked and
// the result is in declaration order; without (empty), values must be integers and keep the
// given order. Throws Error naming the offending item and the accepted values.
Params parse_user_key(std::string_view text, const std::vector<FieldSpec>& fields);
// The same for any field list: `what` names the fields in messages ("config field 'rows' is
// missing"), and a field absent from `text` takes its value from `defaults` where it has one.
Params parse_user_params(std::string_view text, const std::vector<FieldSpec>& fields, std::string_view what,
                         const Params& defaults = {});

}  // namespace ktune::cli
