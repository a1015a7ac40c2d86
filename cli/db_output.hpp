#pragma once
// Rows of the database verbs printed as an aligned table, RFC 4180 CSV or JSON.
#include <ostream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/params.hpp"

namespace ktune::cli {

// One output row: an object whose values are numbers, strings, null, or objects of named fields
// (a key: {"heads": 16, "kv_dtype": "fp8_e4m3fn"}).
using Record = nlohmann::ordered_json;

// The fields of `p`, enum values by label where `specs` (may be null) declares them.
Record fields_record(const Params& p, const std::vector<FieldSpec>* specs);
// A measured value: JSON has no NaN or infinity, so those become the strings "nan", "inf".
Record number(double v);

// format "table": aligned columns, field objects as "name=value ...", text cut to its first
// line (at most 60 characters); "csv": RFC 4180 (CRLF, quoted where needed) with one column per
// field ("key.heads"); "json": an array of the records.
void print_records(std::ostream& out, const std::vector<Record>& rows, std::string_view format);

}  // namespace ktune::cli
