#include "common/shell_word.hpp"

#include <algorithm>

namespace ktune {

std::string shell_word(std::string_view path) {
  const bool plain = !path.empty() && std::all_of(path.begin(), path.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           std::string_view("/._-+,:@%=").find(ch) != std::string_view::npos;
  });
  if (plain) return std::string(path);
  std::string quoted = "'";
  for (char ch : path) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

}  // namespace ktune
