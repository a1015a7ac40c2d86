#include "sweep/toml_guard.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::sweep {
namespace {

bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

[[noreturn]] void refuse(std::string_view text, size_t at, std::string_view origin, std::string_view where) {
  const auto before = text.substr(0, at);
  const size_t line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  throw Error(fmt::format("{}:{}:{}: not valid TOML: a non-ASCII character {} (only strings and comments may hold one)",
                          origin, line, at - line_start + 1, where));
}

}  // namespace

void require_toml_safe_for_parser(std::string_view text, std::string_view origin) {
  enum class In { code, comment, basic, literal, multi_basic, multi_literal } in = In::code;
  // Past the closing delimiter; a multi-line string may end with up to two extra quotes of content.
  auto close = [&](size_t& i, std::string_view delim) {
    i += delim.size() - 1;
    for (int extra = 0; extra < 2 && i + 1 < text.size() && text[i + 1] == delim[0]; ++extra) ++i;
    in = In::code;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const std::string_view rest = text.substr(i);
    switch (in) {
      case In::code:
        if (c == '#') in = In::comment;
        else if (rest.starts_with("\"\"\"")) i += 2, in = In::multi_basic;
        else if (rest.starts_with("'''")) i += 2, in = In::multi_literal;
        else if (c == '"') in = In::basic;
        else if (c == '\'') in = In::literal;
        else if (non_ascii(c)) refuse(text, i, origin, "outside a string or comment");
        break;
      case In::comment:
        if (c == '\n') in = In::code;
        break;
      case In::basic:
        if (c == '\\') ++i;
        else if (c == '"' || c == '\n') in = In::code;
        break;
      case In::literal:
        if (c == '\'' || c == '\n') in = In::code;
        break;
      case In::multi_basic:
        if (c == '\\') {
          const size_t escape = i;
          while (i + 1 < text.size() && blank(text[i + 1])) ++i;
          if (i + 1 < text.size() && non_ascii(text[i + 1]))
            refuse(text, i + 1, origin, "after a backslash in a multi-line string");
          if (i == escape) ++i;  // an escape such as \" or \\, not a line-ending backslash
        } else if (rest.starts_with("\"\"\"")) {
          close(i, "\"\"\"");
        }
        break;
      case In::multi_literal:
        if (rest.starts_with("'''")) close(i, "'''");
        break;
    }
  }
}

}  // namespace ktune::sweep
