#include "db_output.hpp"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::cli {
namespace {

constexpr size_t max_table_text = 60;

// Column names in order of first appearance; with `flatten`, one column per field of objects.
std::vector<std::string> columns_of(const std::vector<Record>& rows, bool flatten) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& row : rows)
    for (const auto& [name, value] : row.items()) {
      if (flatten && value.is_object())
        for (const auto& [field, v] : value.items()) add(name + "." + field);
      else
        add(name);
    }
  return names;
}

// The value of column `name` (maybe "key.heads") in `row`, or null.
Record cell(const Record& row, const std::string& name) {
  if (row.contains(name)) return row.at(name);
  const auto dot = name.find('.');
  if (dot == std::string::npos) return nullptr;
  const auto parent = name.substr(0, dot), field = name.substr(dot + 1);
  if (row.contains(parent) && row.at(parent).is_object() && row.at(parent).contains(field))
    return row.at(parent).at(field);
  return nullptr;
}

std::string human(double v) {
  const double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1000) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  if (a >= 0.001) return fmt::format("{:.3f}", v);
  return fmt::format("{:.2e}", v);
}

std::string table_text(const Record& v) {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return human(v.get<double>());
  if (v.is_object()) {
    std::string s;
    for (const auto& [field, x] : v.items())
      s += fmt::format("{}{}={}", s.empty() ? "" : " ", field, x.is_string() ? x.get<std::string>() : x.dump());
    return s;
  }
  if (!v.is_string()) return v.dump();
  auto s = v.get<std::string>();
  const auto line_end = s.find_first_of("\r\n");
  if (line_end != std::string::npos || s.size() > max_table_text)
    s = s.substr(0, std::min({line_end, max_table_text - 3, s.size()})) + "...";
  return s;
}

void print_table(std::ostream& out, const std::vector<Record>& rows) {
  if (rows.empty()) {
    out << "no matching rows\n";
    return;
  }
  const auto names = columns_of(rows, false);
  std::vector<std::vector<std::string>> text(rows.size());
  std::vector<size_t> width;
  std::vector<bool> numeric;
  for (const auto& n : names) {
    width.push_back(n.size());
    numeric.push_back(true);
  }
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < names.size(); ++c) {
      const auto v = cell(rows[r], names[c]);
      text[r].push_back(table_text(v));
      width[c] = std::max(width[c], text[r][c].size());
      if (!v.is_null() && !v.is_number()) numeric[c] = false;
    }
  auto line = [&](auto&& text_of) {
    std::string s;
    for (size_t c = 0; c < names.size(); ++c) {
      const bool last = c + 1 == names.size();
      const auto& t = text_of(c);
      s += numeric[c] ? fmt::format("{:>{}}", t, width[c]) : last ? t : fmt::format("{:<{}}", t, width[c]);
      if (!last) s += "  ";
    }
    s.erase(s.find_last_not_of(' ') + 1);  // an empty last column leaves no trailing blanks
    out << s << '\n';
  };
  line([&](size_t c) -> const std::string& { return names[c]; });
  for (const auto& row_text : text) line([&](size_t c) -> const std::string& { return row_text[c]; });
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const Record& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char ch : s) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

void print_csv(std::ostream& out, const std::vector<Record>& rows) {
  const auto names = columns_of(rows, true);
  if (names.empty()) return;
  for (size_t c = 0; c < names.size(); ++c) out << (c ? "," : "") << csv_field(names[c]);
  out << "\r\n";
  for (const auto& row : rows) {
    for (size_t c = 0; c < names.size(); ++c) out << (c ? "," : "") << csv_field(cell(row, names[c]));
    out << "\r\n";
  }
}

}  // namespace

Record fields_record(const Params& p, const std::vector<FieldSpec>* specs) {
  Record r = Record::object();
  for (const auto& [name, value] : p.items()) {
    r[name] = value;
    if (!specs) continue;
    for (const auto& s : *specs)
      if (s.name == name && s.is_enum() && value >= 0 && value < static_cast<int64_t>(s.labels.size()))
        r[name] = s.labels[static_cast<size_t>(value)];
  }
  return r;
}

Record number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

void print_records(std::ostream& out, const std::vector<Record>& rows, std::string_view format) {
  if (format == "json")
    // A detail another program wrote (a compiler log cut mid-character) may not be valid UTF-8.
    out << Record(rows).dump(2, ' ', false, Record::error_handler_t::replace) << '\n';
  else if (format == "csv")
    print_csv(out, rows);
  else if (format == "table")
    print_table(out, rows);
  else
    throw Error(fmt::format("unknown output format '{}' (table, csv, json)", format));
}

}  // namespace ktune::cli
