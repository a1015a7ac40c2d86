#include "sweep/toml_guard.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::sweep {
namespace {

constexpr char kStandIn = '@';
constexpr std::string_view kByteOrderMark = "\xef\xbb\xbf";

bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }
bool continuation_byte(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// toml++ skips a leading byte order mark without reading it as a character.
size_t body_start(std::string_view text) { return text.starts_with(kByteOrderMark) ? kByteOrderMark.size() : 0; }

// The text with each non-ASCII character (a UTF-8 lead byte and its continuation bytes) as one
// '@', so that lines and columns (toml++ counts code points) stay those of the text. Invalid UTF-8
// does not survive: toml++ refuses it in step 3 before it classifies the character.
std::string with_stand_ins(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text.substr(body_start(text))) {
    if (!non_ascii(c))
      out += c;
    else if (!continuation_byte(c))
      out += kStandIn;
  }
  return out;
}

struct Position {
  size_t line = 1, column = 1;
};

// The offset of the first character (as toml++ counts them: code points after any byte order
// mark) whose position `stop` accepts, or the text's size.
template <class Stop>
size_t first_character(std::string_view text, Stop stop) {
  Position p;
  for (size_t i = body_start(text); i < text.size(); ++i) {
    if (continuation_byte(text[i])) continue;
    if (stop(i, p)) return i;
    if (text[i] == '\n')
      p = {p.line + 1, 1};
    else
      ++p.column;
  }
  return text.size();
}

// The position of the character starting at `offset`.
Position position_of(std::string_view text, size_t offset) {
  Position at;
  first_character(text, [&](size_t i, Position p) {
    at = p;
    return i >= offset;
  });
  return at;
}

// The character of the text at toml++'s position, "" past the end.
std::string_view character_at(std::string_view text, Position at) {
  const size_t i =
      first_character(text, [&](size_t, Position p) { return p.line == at.line && p.column == at.column; });
  size_t end = std::min(i + 1, text.size());
  while (end < text.size() && continuation_byte(text[end])) ++end;
  return text.substr(i, end - i);
}

[[noreturn]] void refuse(std::string_view origin, Position at, std::string_view what) {
  throw Error(fmt::format("{}:{}:{}: not valid TOML: {}", origin, at.line, at.column, what));
}

Position position_of(const toml::parse_error& e) { return {e.source().begin.line, e.source().begin.column}; }

// Step 1: toml++ refuses the stand-ins' text; said of the text's own character where toml++
// stopped at a stand-in.
[[noreturn]] void refuse_stand_in(std::string_view text, std::string_view origin, const toml::parse_error& e) {
  std::string what(e.description());
  const std::string_view c = character_at(text, position_of(e));
  if (!c.empty() && non_ascii(c[0])) {
    if (const size_t q = what.rfind(fmt::format("'{}'", kStandIn)); q != std::string::npos) what.replace(q + 1, 1, c);
    what += " (only strings and comments may hold a non-ASCII character)";
  }
  refuse(origin, position_of(e), what);
}

void refuse_non_ascii_after_backslash(std::string_view text, std::string_view origin) {
  for (size_t i = text.find('\\'); i != std::string_view::npos; i = text.find('\\', i + 1)) {
    size_t next = i + 1;
    while (next < text.size() && blank(text[next])) ++next;
    if (next > i + 1 && next < text.size() && non_ascii(text[next]))
      refuse(origin, position_of(text, next),
             "a non-ASCII character after a backslash and blanks (toml++ 3.3 cannot read it there safely)");
  }
}

}  // namespace

toml::table parse_toml(std::string_view text, std::string_view origin) {
  if (std::ranges::any_of(text, non_ascii)) {
    try {
      (void)toml::parse(with_stand_ins(text), origin);
    } catch (const toml::parse_error& e) {
      refuse_stand_in(text, origin, e);
    }
    refuse_non_ascii_after_backslash(text, origin);
  }
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    refuse(origin, position_of(e), e.description());
  }
}

}  // namespace ktune::sweep
