#include "jit/templates.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <xxhash.h>

#include "common/error.hpp"
#include "jit/embedded_templates.hpp"

namespace ktune::jit {
namespace {
std::string& root() {
  static std::string r;
  return r;
}

void render_into(std::string_view path, std::string& out, std::set<std::string>& done,
                 std::vector<std::string>& stack) {
  for (const auto& s : stack)
    if (s == path) throw Error(fmt::format("template include cycle through '{}'", path));
  if (!done.insert(std::string(path)).second) return;  // each header once, like #pragma once
  stack.emplace_back(path);
  std::istringstream in(read_template(path));
  std::string line;
  while (std::getline(in, line)) {
    auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 8, "#include") == 0) {
      auto open = line.find('"', first);
      auto close = open == std::string::npos ? open : line.find('"', open + 1);
      if (close != std::string::npos) {
        render_into(std::string_view(line).substr(open + 1, close - open - 1), out, done, stack);
        continue;
      }
    }
    if (first != std::string::npos && line.compare(first, 12, "#pragma once") == 0) continue;
    out += line;
    out += '\n';
  }
  stack.pop_back();
}
}  // namespace

void set_template_root(std::string dir) { root() = std::move(dir); }
const std::string& template_root() noexcept { return root(); }

std::string read_template(std::string_view path) {
  if (!root().empty()) {
    std::string full = fmt::format("{}/{}", root(), path);
    std::ifstream f(full, std::ios::binary);
    if (!f) throw Error(fmt::format("template '{}' not found under --templates {}", path, root()));
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  for (const auto& t : embedded_templates())
    if (t.path == path) return std::string(t.contents);
  throw Error(fmt::format("template '{}' is not embedded in this binary", path));
}

std::string render(std::string_view path) {
  std::string out;
  std::set<std::string> done;
  std::vector<std::string> stack;
  render_into(path, out, done, stack);
  return out;
}

std::string template_hash(std::string_view path) {
  auto src = render(path);
  return fmt::format("{:016x}", XXH64(src.data(), src.size(), 0));
}

}  // namespace ktune::jit
