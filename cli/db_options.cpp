#include "db_options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "number_checks.hpp"

namespace ktune::cli {
namespace {

std::vector<std::string> names_of(const std::vector<FieldSpec>& fields) {
  std::vector<std::string> names;
  for (const auto& f : fields) names.push_back(f.name);
  return names;
}

const FieldSpec* field_named(const std::vector<FieldSpec>& fields, std::string_view name) {
  auto it = std::find_if(fields.begin(), fields.end(), [&](const FieldSpec& f) { return f.name == name; });
  return it == fields.end() ? nullptr : &*it;
}

std::optional<int64_t> integer(std::string_view text) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::pair<std::string_view, std::string_view> split_item(std::string_view item) {
  const auto eq = item.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
    throw Error(fmt::format("'{}' is not name=value", item));
  return {item.substr(0, eq), item.substr(eq + 1)};
}

// Value of --where NAME=VALUE. Without --kernel, the field must be one of a registered family (a
// misspelt one would match no row, silently), and a label is resolved through every family that
// has the field, and must mean the same number in all of them.
int64_t where_value(std::string_view name, std::string_view text, const std::string& kernel) {
  if (!kernel.empty()) {
    const auto& fields = family(kernel).key_fields();
    const auto* spec = field_named(fields, name);
    if (!spec)
      throw Error(fmt::format("--where {}: {} has no key field '{}' (it has {})", name, kernel, name,
                              fmt::join(names_of(fields), ", ")));
    return spec->parse(text);
  }
  std::set<std::string> known;  // the key fields of every registered family
  for (const Family* f : families())
    for (const auto& spec : f->key_fields()) known.insert(spec.name);
  if (!known.contains(std::string(name)))
    throw Error(fmt::format("--where {}: no kernel family has a key field '{}' (they have {})", name, name,
                            fmt::join(known, ", ")));
  if (auto v = integer(text)) return *v;
  std::set<int64_t> meanings;
  for (const Family* f : families())
    if (const auto* spec = field_named(f->key_fields(), name))
      for (size_t i = 0; i < spec->labels.size(); ++i)
        if (spec->labels[i] == text) meanings.insert(static_cast<int64_t>(i));
  if (meanings.size() == 1) return *meanings.begin();
  if (meanings.empty())
    throw Error(fmt::format("--where {}={}: not an integer, nor a label of a key field '{}'", name, text, name));
  throw Error(
      fmt::format("--where {}={}: the label means different values in different kernels; add --kernel", name, text));
}

}  // namespace

void add_db_filter_options(CLI::App& cmd, DbFilterOptions& o) {
  cmd.add_option("--db", o.db, "Tuning database (SQLite)")->required();
  cmd.add_option("--kernel", o.kernel, "Only this kernel family, e.g. mla_decode");
  cmd.add_option("--arch", o.arch, "Only this arch, e.g. gfx942, sm_90a");
  cmd.add_option("--device", o.device, "Only this device name, e.g. \"NVIDIA H200\"");
  cmd.add_option("--run", o.run, "Only this run id")->check(decimal_within(1, std::numeric_limits<int64_t>::max()));
  cmd.add_option("--where", o.where,
                 "Key field equal to a value (label or integer), e.g. kv_dtype=fp8_e4m3fn; repeatable");
  cmd.add_option("--format", o.format, "Output format")->check(CLI::IsMember({"table", "csv", "json"}));
}

db::Filter to_filter(const DbFilterOptions& o) {
  db::Filter f;
  if (!o.kernel.empty()) f.family = o.kernel;
  if (!o.arch.empty()) f.arch = o.arch;
  if (!o.device.empty()) f.device_name = o.device;
  if (o.run != 0) f.run_id = o.run;
  for (const auto& w : o.where) {
    const auto [name, text] = split_item(w);
    f.key_equals.emplace_back(std::string(name), where_value(name, text, o.kernel));
  }
  return f;
}

void note_absent_filter_values(db::Database& db, const DbFilterOptions& o, std::ostream& err) {
  std::set<std::string> kernels, arches, devices;
  for (const auto& r : db.runs()) {
    kernels.insert(r.family);
    arches.insert(r.arch);
    devices.insert(r.device_name);
  }
  for (const auto& g : db.gaps({})) {
    kernels.insert(g.family);
    arches.insert(g.arch);
  }
  auto note = [&](std::string_view option, const std::string& value, const std::set<std::string>& has) {
    if (value.empty() || has.contains(value)) return;
    err << fmt::format("note: {} has no {} '{}' (it has {})\n", o.db, option, value,
                       has.empty() ? std::string("none") : fmt::format("{}", fmt::join(has, ", ")));
  };
  note("kernel", o.kernel, kernels);
  note("arch", o.arch, arches);
  note("device", o.device, devices);
}

const Family* registered_family(std::string_view name) noexcept {
  for (const Family* f : families())
    if (f->name() == name) return f;
  return nullptr;
}

Params parse_user_key(std::string_view text, const std::vector<FieldSpec>& fields) {
  return parse_user_params(text, fields, "key");
}

Params parse_user_params(std::string_view text, const std::vector<FieldSpec>& fields, std::string_view what,
                         const Params& defaults) {
  std::vector<std::pair<std::string_view, std::string_view>> items;
  for (size_t start = 0; start < text.size();) {
    const auto end = std::min(text.find_first_of(" ,\t", start), text.size());
    if (end > start) items.push_back(split_item(text.substr(start, end - start)));
    start = end + 1;
  }
  Params given;
  for (const auto& [name, value] : items) {
    if (given.find(name)) throw Error(fmt::format("{} field '{}' is given twice", what, name));
    if (fields.empty()) {
      auto v = integer(value);
      if (!v) throw Error(fmt::format("{} field {}: '{}' is not an integer", what, name, value));
      given.set(name, *v);
      continue;
    }
    const auto* spec = field_named(fields, name);
    if (!spec)
      throw Error(
          fmt::format("unknown {} field '{}' (the {} has {})", what, name, what, fmt::join(names_of(fields), ", ")));
    given.set(name, spec->parse(value));
  }
  if (fields.empty()) return given;
  Params ordered;
  for (const auto& spec : fields) {
    auto v = given.find(spec.name);
    if (!v) v = defaults.find(spec.name);
    if (!v)
      throw Error(fmt::format("{} field '{}' is missing (the {} has {})", what, spec.name, what,
                              fmt::join(names_of(fields), ", ")));
    ordered.set(spec.name, *v);
  }
  return ordered;
}

}  // namespace ktune::cli
