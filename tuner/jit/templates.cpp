#include "jit/templates.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <xxhash.h>

#include "common/error.hpp"
#include "jit/code_text.hpp"
#include "jit/embedded_templates.hpp"

namespace ktune::jit {
namespace {
std::string& root() {
  static std::string r;
  return r;
}

// The text after `#`, spaces and `include` on a preprocessor line (`  # include "x"` too), or
// nullopt for any other line.
std::optional<std::string_view> include_operand(std::string_view line) {
  auto skip_blanks = [&](size_t i) { return line.find_first_not_of(" \t", std::min(i, line.size())); };
  size_t i = skip_blanks(0);
  if (i == std::string_view::npos || line[i] != '#') return std::nullopt;
  i = skip_blanks(i + 1);
  if (i == std::string_view::npos || line.compare(i, 7, "include") != 0) return std::nullopt;
  i = skip_blanks(i + 7);
  return i == std::string_view::npos ? std::string_view() : line.substr(i);
}

std::string read_embedded(std::string_view path) {
  for (const auto& t : embedded_templates())
    if (t.path == path) return std::string(t.contents);
  throw Error(fmt::format("template '{}' is not embedded in this binary", path));
}

void render_into(std::string_view path, std::string& out, std::set<std::string>& done, std::vector<std::string>& stack,
                 bool embedded) {
  for (const auto& s : stack)
    if (s == path) throw Error(fmt::format("template include cycle through '{}'", path));
  if (!done.insert(std::string(path)).second) return;  // each header once, like #pragma once
  stack.emplace_back(path);
  std::istringstream in(embedded ? read_embedded(path) : read_template(path));
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (const auto operand = include_operand(line)) {
      const char opening = operand->empty() ? '\0' : operand->front();
      const size_t close = operand->find(opening == '"' ? '"' : '>', 1);
      if ((opening != '"' && opening != '<') || close == std::string_view::npos)
        throw Error(fmt::format("template '{}' line {}: '{}': a template includes another as #include \"path\" (or a "
                                "compiler header as <name>), nothing else",
                                path, number, line));
      if (opening == '"') {  // inlined: the compiler must find no file of its own
        try {
          render_into(operand->substr(1, close - 1), out, done, stack, embedded);
        } catch (const Error& e) {
          throw Error(fmt::format("{} (included by '{}' line {})", e.what(), path, number));
        }
        continue;
      }
    }
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 12, "#pragma once") == 0) continue;
    out += line;
    out += '\n';
  }
  stack.pop_back();
}

std::string render_tree(std::string_view path, bool embedded) {
  std::string out;
  std::set<std::string> done;
  std::vector<std::string> stack;
  render_into(path, out, done, stack, embedded);
  return out;
}

std::string hex_xxh64(std::string_view text) { return fmt::format("{:016x}", XXH64(text.data(), text.size(), 0)); }

}  // namespace

void set_template_root(std::string dir) { root() = std::move(dir); }
const std::string& template_root() noexcept { return root(); }

std::string read_template(std::string_view path) {
  if (!root().empty()) {
    std::string full = fmt::format("{}/{}", root(), path);
    std::error_code ec;
    if (std::filesystem::is_directory(full, ec))
      throw Error(fmt::format("template '{}' under --templates {} is a directory", path, root()));
    std::ifstream f(full, std::ios::binary);
    if (!f) throw Error(fmt::format("template '{}' not found under --templates {}", path, root()));
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  return read_embedded(path);
}

std::string render(std::string_view path) { return render_tree(path, /*embedded=*/false); }

std::string render_embedded(std::string_view path) { return render_tree(path, /*embedded=*/true); }

std::string template_hash(std::string_view path) { return hex_xxh64(code_text(render(path))); }

std::string source_hash(std::string_view path) { return hex_xxh64(render(path)); }

}  // namespace ktune::jit
