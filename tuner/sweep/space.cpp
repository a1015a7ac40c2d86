#include "sweep/space.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "common/error.hpp"
#include "sweep/toml_guard.hpp"

namespace ktune::sweep {
namespace {

// "file:line" where the node came from, so that an error points at the offending text.
std::string where(std::string_view origin, const toml::node& n) {
  auto line = n.source().begin.line;
  return line ? fmt::format("{}:{}", origin, line) : std::string(origin);
}

std::string field_names(const std::vector<FieldSpec>& specs) {
  std::vector<std::string_view> names;
  for (const auto& s : specs) names.push_back(s.name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

std::string_view kind_of(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "a list";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date or time";
    default: return "a value of another type";
  }
}

int64_t value_of(const toml::node& n, const FieldSpec& spec, std::string_view origin, std::string_view section) {
  std::string text;
  if (auto i = n.as_integer())
    text = std::to_string(i->get());
  else if (auto s = n.as_string())
    text = s->get();
  else if (auto b = n.as_boolean())
    text = std::to_string(b->get() ? 1 : 0);
  else
    throw Error(fmt::format("{}: [{}] {}: expected {}, found {}", where(origin, n), section, spec.name,
                            spec.is_enum() ? fmt::format("one of {}", fmt::join(spec.labels, ", "))
                                           : fmt::format("an integer in [{}, {}]", spec.min, spec.max),
                            kind_of(n)));
  try {
    return spec.parse(text);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: [{}] {}", where(origin, n), section, e.what()));
  }
}

// `table`, checked to name exactly the fields of `specs`; `section` names it in messages.
void check_fields(const toml::table& table, std::string_view section, const std::vector<FieldSpec>& specs,
                  std::string_view origin, std::string_view family) {
  // The binding is captured by an init-capture: clang before 16 cannot capture structured bindings.
  for (const auto& [name, value] : table)
    if (std::none_of(specs.begin(), specs.end(), [&key = name](const FieldSpec& s) { return s.name == key.str(); }))
      throw Error(fmt::format("{}: [{}] unknown field '{}' (fields of {}: {})", where(origin, value), section,
                              name.str(), family, field_names(specs)));
  for (const auto& s : specs)
    if (!table.contains(s.name))
      throw Error(fmt::format("{}: [{}] lacks field '{}' ({})", where(origin, table), section, s.name, s.help));
}

// The table `section` of `root`, checked to name exactly the fields of `specs`.
const toml::table* section_of(const toml::table& root, std::string_view section, const std::vector<FieldSpec>& specs,
                              std::string_view origin, std::string_view family) {
  const toml::node* node = root.get(section);
  if (!node) {
    if (specs.empty()) return nullptr;
    throw Error(fmt::format("{}: missing [{}] table (fields of {}: {})", origin, section, family, field_names(specs)));
  }
  const toml::table* table = node->as_table();
  if (!table)
    throw Error(fmt::format("{}: '{}' must be a table, found {}", where(origin, *node), section, kind_of(*node)));
  check_fields(*table, section, specs, origin, family);
  return table;
}

// One list of distinct values per field of `table`; a single value stands for a list of one.
std::vector<std::vector<int64_t>> value_lists(const toml::table& table, std::string_view section,
                                              const std::vector<FieldSpec>& specs, std::string_view origin) {
  std::vector<std::vector<int64_t>> lists;
  for (const auto& spec : specs) {
    const toml::node& node = *table.get(spec.name);
    std::vector<int64_t> values;
    if (const toml::array* list = node.as_array()) {
      if (list->empty())
        throw Error(fmt::format("{}: [{}] {}: the list is empty", where(origin, node), section, spec.name));
      for (const toml::node& item : *list) {
        auto v = value_of(item, spec, origin, section);
        if (std::find(values.begin(), values.end(), v) != values.end())
          throw Error(
              fmt::format("{}: [{}] {}: {} is listed twice", where(origin, item), section, spec.name, spec.format(v)));
        values.push_back(v);
      }
    } else {
      values.push_back(value_of(node, spec, origin, section));
    }
    lists.push_back(std::move(values));
  }
  return lists;
}

// The key lists: [keys] with every key field.
std::vector<std::vector<int64_t>> key_lists(const toml::table& root, const std::vector<FieldSpec>& specs,
                                            std::string_view origin, std::string_view family) {
  const toml::table* table = section_of(root, "keys", specs, origin, family);
  return table ? value_lists(*table, "keys", specs, origin) : std::vector<std::vector<int64_t>>{};
}

// The config grids: one [configs] table, or [[configs]] tables (one grid each).
std::vector<std::vector<std::vector<int64_t>>> config_grids(const toml::table& root,
                                                            const std::vector<FieldSpec>& specs,
                                                            std::string_view origin, std::string_view family) {
  const toml::node* node = root.get("configs");
  const toml::array* grids = node ? node->as_array() : nullptr;
  if (!grids) {
    const toml::table* table = section_of(root, "configs", specs, origin, family);
    if (!table) return {{}};
    return {value_lists(*table, "configs", specs, origin)};
  }
  if (grids->empty()) throw Error(fmt::format("{}: [[configs]] lists no grid", where(origin, *node)));
  std::vector<std::vector<std::vector<int64_t>>> out;
  for (const toml::node& grid : *grids) {
    const auto section = fmt::format("configs #{}", out.size() + 1);
    const toml::table* table = grid.as_table();
    if (!table)
      throw Error(fmt::format("{}: [{}] must be a table, found {}", where(origin, grid), section, kind_of(grid)));
    check_fields(*table, section, specs, origin, family);
    out.push_back(value_lists(*table, section, specs, origin));
  }
  return out;
}

Params shape_of(const toml::table& root, const std::vector<FieldSpec>& specs, std::string_view origin,
                std::string_view family) {
  Params shape;
  const toml::table* table = section_of(root, "shape", specs, origin, family);
  for (const auto& spec : specs) {
    const toml::node& node = *table->get(spec.name);
    if (node.is_array())
      throw Error(fmt::format("{}: [shape] {}: expected one value (the timing shape), found a list",
                              where(origin, node), spec.name));
    shape.set(spec.name, value_of(node, spec, origin, "shape"));
  }
  return shape;
}
}  // namespace

Space parse_space(std::string_view text, std::string_view origin, const Family& family) {
  const toml::table root = parse_toml(text, origin);
  const std::string_view name = family.name();
  for (const auto& [k, v] : root)
    if (k != "family" && k != "description" && k != "keys" && k != "configs" && k != "shape")
      throw Error(fmt::format("{}: unknown entry '{}' (a space has family, description, [keys], [configs], [shape])",
                              where(origin, v), k.str()));
  const toml::node* fam = root.get("family");
  if (!fam) throw Error(fmt::format("{}: missing 'family = \"{}\"'", origin, name));
  if (!fam->is_string() || fam->as_string()->get() != name)
    throw Error(fmt::format(
        "{}: family is {}, but this space is being read for family '{}'", where(origin, *fam),
        fam->is_string() ? fmt::format("'{}'", fam->as_string()->get()) : std::string(kind_of(*fam)), name));
  if (const toml::node* d = root.get("description"); d && !d->is_string())
    throw Error(fmt::format("{}: description must be a string, found {}", where(origin, *d), kind_of(*d)));

  Space s;
  s.origin = std::string(origin);
  s.family = &family;
  s.key_values = key_lists(root, family.key_fields(), origin, name);
  s.config_grids = config_grids(root, family.config_fields(), origin, name);
  s.shape = shape_of(root, family.shape_fields(), origin, name);
  return s;
}

std::vector<Params> combinations(const std::vector<FieldSpec>& specs, const std::vector<std::vector<int64_t>>& values) {
  if (specs.size() != values.size())
    throw Error(fmt::format("{} value lists for {} fields", values.size(), specs.size()));
  std::vector<Params> out{Params{}};
  for (size_t f = 0; f < specs.size(); ++f) {
    std::vector<Params> next;
    next.reserve(out.size() * values[f].size());
    for (const auto& partial : out)
      for (int64_t v : values[f]) {
        next.push_back(partial);
        next.back().set(specs[f].name, v);
      }
    out = std::move(next);
  }
  return out;
}

std::vector<Params> space_configs(const Space& space) {
  std::vector<Params> out;
  std::set<Params> seen;
  for (const auto& grid : space.config_grids)
    for (auto& config : combinations(space.family->config_fields(), grid))
      if (seen.insert(config).second) out.push_back(std::move(config));
  return out;
}

}  // namespace ktune::sweep
