#include "sweep/filter.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace ktune::sweep {
namespace {

std::vector<std::string> split_values(std::string_view text, std::string_view option) {
  std::vector<std::string> out;
  while (true) {
    auto comma = text.find(',');
    auto item = text.substr(0, comma);
    if (item.empty()) throw Error(fmt::format("{}: empty value in '{}'", option, text));
    out.emplace_back(item);
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

// The values of field `spec` that the filter names.
std::vector<int64_t> wanted_values(const FieldSpec& spec, const FieldFilter& f) {
  std::vector<int64_t> wanted;
  for (const auto& text : f.values) {
    try {
      wanted.push_back(spec.parse(text));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", f.option, e.what()));
    }
  }
  return wanted;
}

[[noreturn]] void nothing_left(const FieldSpec& spec, const FieldFilter& f, std::string_view origin,
                               const std::vector<int64_t>& had) {
  std::vector<std::string> names;
  for (int64_t v : had) names.push_back(spec.format(v));
  throw Error(fmt::format("{} {}={} leaves nothing to sweep: {} lists {} {} (write a space file to sweep other values)",
                          f.option, f.field, fmt::join(f.values, ","), origin, spec.name, fmt::join(names, ", ")));
}

// Keeps the values of `list` that are wanted; false when none is left.
bool narrow(std::vector<int64_t>& list, const std::vector<int64_t>& wanted) {
  std::erase_if(list, [&](int64_t v) { return std::find(wanted.begin(), wanted.end(), v) == wanted.end(); });
  return !list.empty();
}

int field_index(const std::vector<FieldSpec>& specs, std::string_view name) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

FieldFilter parse_where(std::string_view text) {
  auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw Error(fmt::format("--where '{}': expected field=value[,value...]", text));
  return field_filter(std::string(text.substr(0, eq)), text.substr(eq + 1), "--where");
}

FieldFilter field_filter(std::string field, std::string_view values, std::string option) {
  auto list = split_values(values, option);
  return FieldFilter{std::move(field), std::move(list), std::move(option)};
}

void apply_filters(Space& space, const std::vector<FieldFilter>& filters) {
  const Family& family = *space.family;
  for (const auto& f : filters) {
    if (int i = field_index(family.key_fields(), f.field); i >= 0) {
      const auto& spec = family.key_fields()[i];
      const auto had = space.key_values[i];
      if (!narrow(space.key_values[i], wanted_values(spec, f))) nothing_left(spec, f, space.origin, had);
    } else if (int c = field_index(family.config_fields(), f.field); c >= 0) {
      // A grid left without values of the field is dropped; the filter fails when all are.
      const auto& spec = family.config_fields()[c];
      const auto wanted = wanted_values(spec, f);
      std::vector<int64_t> had;
      for (const auto& grid : space.config_grids)
        for (int64_t v : grid[c])
          if (std::find(had.begin(), had.end(), v) == had.end()) had.push_back(v);
      std::erase_if(space.config_grids, [&](auto& grid) { return !narrow(grid[c], wanted); });
      if (space.config_grids.empty()) nothing_left(spec, f, space.origin, had);
      space.config_filters.push_back(fmt::format("{} {}={}", f.option, f.field, fmt::join(f.values, ",")));
    } else {
      std::vector<std::string_view> names;
      for (const auto& s : family.key_fields()) names.push_back(s.name);
      for (const auto& s : family.config_fields()) names.push_back(s.name);
      throw Error(fmt::format("{}: {} has no key or config field '{}' (it has {})", f.option, family.name(), f.field,
                              fmt::join(names, ", ")));
    }
  }
}

}  // namespace ktune::sweep
