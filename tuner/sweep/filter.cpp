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

// Keeps the values of `list` that the filter names; throws when none is left.
void narrow(std::vector<int64_t>& list, const FieldSpec& spec, const FieldFilter& f, std::string_view origin) {
  std::vector<int64_t> wanted;
  for (const auto& text : f.values) {
    try {
      wanted.push_back(spec.parse(text));
    } catch (const Error& e) {
      throw Error(fmt::format("{}: {}", f.option, e.what()));
    }
  }
  std::vector<std::string> had;
  for (int64_t v : list) had.push_back(spec.format(v));
  std::erase_if(list, [&](int64_t v) { return std::find(wanted.begin(), wanted.end(), v) == wanted.end(); });
  if (list.empty())
    throw Error(fmt::format("{} {}={} leaves nothing to sweep: {} lists {} {} (write a space file to sweep other values)",
                            f.option, f.field, fmt::join(f.values, ","), origin, spec.name, fmt::join(had, ", ")));
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
    bool found = false;
    auto apply = [&](const std::vector<FieldSpec>& specs, std::vector<std::vector<int64_t>>& lists) {
      for (size_t i = 0; i < specs.size(); ++i)
        if (specs[i].name == f.field) {
          narrow(lists[i], specs[i], f, space.origin);
          found = true;
        }
    };
    apply(family.key_fields(), space.key_values);
    apply(family.config_fields(), space.config_values);
    if (!found) {
      std::vector<std::string_view> names;
      for (const auto& s : family.key_fields()) names.push_back(s.name);
      for (const auto& s : family.config_fields()) names.push_back(s.name);
      throw Error(fmt::format("{}: {} has no key or config field '{}' (it has {})", f.option, family.name(), f.field,
                              fmt::join(names, ", ")));
    }
  }
}

}  // namespace ktune::sweep
