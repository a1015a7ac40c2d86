#include "sweep/toml_guard.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::sweep {
namespace {

bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Where toml++ stops reading a bare value (a number, a date, true): everything before, quotes
// included, is part of the value, and each character is tested for whitespace on the way. A space
// followed by a digit does not end it: toml++ reads on for the time of a date-time
// ("1979-05-27 07:32:00"), whatever came before the space (found by fuzz_space:
// `f=0490-06-2h 1"` and a non-ASCII character). Valid TOML has no other value followed by a
// space and a digit, so only invalid text is read further this way.
bool ends_bare_value(std::string_view rest) {
  const char c = rest[0];
  if (c == ' ' && rest.size() > 1 && rest[1] >= '0' && rest[1] <= '9') return false;
  return blank(c) || c == ',' || c == ']' || c == '}' || c == '#';
}

[[noreturn]] void refuse(std::string_view text, size_t at, std::string_view origin, std::string_view where) {
  const auto before = text.substr(0, at);
  const size_t line = 1 + std::count(before.begin(), before.end(), '\n');
  const size_t line_start = before.rfind('\n') == std::string_view::npos ? 0 : before.rfind('\n') + 1;
  throw Error(fmt::format("{}:{}:{}: not valid TOML: a non-ASCII character {} (only strings and comments may hold one)",
                          origin, line, at - line_start + 1, where));
}

}  // namespace

void require_toml_safe_for_parser(std::string_view text, std::string_view origin) {
  enum class In { code, bare_value, comment, basic, literal, multi_basic, multi_literal } in = In::code;
  // A value starts next (after '=', or in an array); the arrays and inline tables open around it.
  // A value that starts with anything but a quote, '[' or '{' is a bare value to its end.
  bool value_next = false;
  std::vector<char> open;
  // Past the closing delimiter; a multi-line string may end with up to two extra quotes of content.
  auto close = [&](size_t& i, std::string_view delim) {
    i += delim.size() - 1;
    for (int extra = 0; extra < 2 && i + 1 < text.size() && text[i + 1] == delim[0]; ++extra) ++i;
    in = In::code;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const std::string_view rest = text.substr(i);
    const bool in_array = !open.empty() && open.back() == '[';
    switch (in) {
      case In::bare_value:
        if (!ends_bare_value(rest)) {
          if (non_ascii(c)) refuse(text, i, origin, "outside a string or comment");
          break;
        }
        in = In::code;
        [[fallthrough]];
      case In::code:
        if (c == '#') in = In::comment;
        else if (non_ascii(c)) refuse(text, i, origin, "outside a string or comment");
        else if (c == '"' || c == '\'') {
          value_next = false;
          if (rest.starts_with("\"\"\"")) i += 2, in = In::multi_basic;
          else if (rest.starts_with("'''")) i += 2, in = In::multi_literal;
          else in = c == '"' ? In::basic : In::literal;
        } else if (c == '=') value_next = true;
        else if (c == '[' || c == '{') {
          if (value_next) open.push_back(c);  // else a table header
          value_next = value_next && c == '[';
        } else if (c == ']' || c == '}') {
          if (!open.empty() && open.back() == (c == ']' ? '[' : '{')) open.pop_back();
          value_next = false;
        } else if (c == ',') value_next = in_array;
        else if (c == '\n') value_next = value_next && in_array;
        else if (value_next && !blank(c)) in = In::bare_value, value_next = false;
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
