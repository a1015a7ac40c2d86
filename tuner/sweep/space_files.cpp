// Finding a space by name: the built-in spaces embedded in the binary, or a file. Apart from
// the parser (space.cpp), so that what links the parser alone (tests/fuzz) needs no embedded files.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "sweep/embedded_spaces.hpp"
#include "sweep/space.hpp"

namespace ktune::sweep {
namespace {
std::string builtin_path(std::string_view family, std::string_view name) {
  return fmt::format("{}/spaces/{}.toml", family, name);
}
}  // namespace

Space load_space(std::string_view name_or_path, const Family& family) {
  const bool is_file = name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".toml");
  if (!is_file) {
    auto path = builtin_path(family.name(), name_or_path);
    for (const auto& e : embedded_spaces())
      if (e.path == path)
        return parse_space(
            e.contents, fmt::format("built-in space '{}' of {} (tuner/kernels/{})", name_or_path, family.name(), path),
            family);
  }
  std::error_code ec;
  if (std::filesystem::is_directory(std::string(name_or_path), ec))
    throw Error(fmt::format("space '{}' is a directory; give a TOML file or a built-in space of {}", name_or_path,
                            family.name()));
  std::ifstream f{std::string(name_or_path)};
  if (!f) {
    auto names = builtin_spaces(family.name());
    throw Error(fmt::format("space '{}' is neither a built-in space of {} ({}) nor a readable file", name_or_path,
                            family.name(), names.empty() ? "it has none" : fmt::format("{}", fmt::join(names, ", "))));
  }
  std::ostringstream text;
  text << f.rdbuf();
  return parse_space(text.str(), name_or_path, family);
}

std::vector<std::string> builtin_spaces(std::string_view family) {
  std::vector<std::string> names;
  const std::string prefix = fmt::format("{}/spaces/", family);
  for (const auto& e : embedded_spaces())
    if (e.path.starts_with(prefix) && e.path.ends_with(".toml"))
      names.emplace_back(e.path.substr(prefix.size(), e.path.size() - prefix.size() - 5));
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace ktune::sweep
