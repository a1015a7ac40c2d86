#include "dispatch/cpp_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace ktune::dispatch {
namespace {

// C++ keywords and alternative tokens up to C++20, plus macros that <cstdint>/<string_view> or
// GNU modes may define: none of them can name an enumerator or a struct member.
constexpr std::string_view kAvoid[] = {
    "alignas",     "alignof",   "and",        "and_eq",    "asm",      "auto",         "bitand",
    "bitor",       "bool",      "break",      "case",      "catch",    "char",         "char8_t",
    "char16_t",    "char32_t",  "class",      "compl",     "concept",  "const",        "consteval",
    "constexpr",   "constinit", "const_cast", "continue",  "co_await", "co_return",    "co_yield",
    "decltype",    "default",   "delete",     "do",        "double",   "dynamic_cast", "else",
    "enum",        "explicit",  "export",     "extern",    "false",    "float",        "for",
    "friend",      "goto",      "if",         "inline",    "int",      "long",         "mutable",
    "namespace",   "new",       "noexcept",   "not",       "not_eq",   "nullptr",      "operator",
    "or",          "or_eq",     "private",    "protected", "public",   "register",     "reinterpret_cast",
    "requires",    "return",    "short",      "signed",    "sizeof",   "static",       "static_assert",
    "static_cast", "struct",    "switch",     "template",  "this",     "thread_local", "throw",
    "true",        "try",       "typedef",    "typeid",    "typename", "union",        "unsigned",
    "using",       "virtual",   "void",       "volatile",  "wchar_t",  "while",        "xor",
    "xor_eq",      "override",  "final",      "import",    "module",   "NULL",         "EOF",
    "errno",       "assert",    "linux",      "unix",      "i386",     "offsetof",     "stdin",
    "stdout",      "stderr",    "INT64_MAX"};

bool word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

}  // namespace

std::string identifier(std::string_view name) {
  std::string out;
  for (char c : name) out += word_char(c) ? c : '_';
  // Leading digits are invalid, leading underscores reserved (before a capital or another '_').
  // (Concatenation rather than insert(0, ...), on which GCC 12 warns -Wrestrict wrongly.)
  if (out.empty() || (out[0] >= '0' && out[0] <= '9') || out[0] == '_') out = "v" + out;
  if (std::find(std::begin(kAvoid), std::end(kAvoid), out) != std::end(kAvoid)) out += '_';
  // A double underscore anywhere is reserved as well.
  for (auto pos = out.find("__"); pos != std::string::npos; pos = out.find("__")) out.replace(pos, 2, "_u_");
  return out;
}

std::string type_name(std::string_view field) {
  std::string out;
  bool upper = true;
  for (char c : identifier(field)) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    upper = false;
  }
  return identifier(out);
}

std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"' || c == '?') {
      out += '\\';
      out += c;
    } else if (printable(c)) {
      out += c;
    } else {
      out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
    }
  }
  return out + "\"";
}

std::string comment_text(std::string_view text) {
  std::string out;
  for (char c : text) {
    // A backslash ending the line would splice the next one into a // comment.
    char k = printable(c) && c != '\\' ? c : '?';
    // "*/" would end the comment and "/*" warns under -Wcomment; "??" may start a trigraph
    // ("??/" is a backslash where trigraphs are on, a warning elsewhere): break each pair apart.
    if (!out.empty() &&
        ((out.back() == '*' && k == '/') || (out.back() == '/' && k == '*') || (out.back() == '?' && k == '?')))
      out += ' ';
    out += k;
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  const auto newline = text.find('\n');
  auto line = text.substr(0, newline);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
  bool cut = newline != std::string_view::npos && text.find_first_not_of(" \t\r\n", newline) != std::string_view::npos;
  if (line.size() > max_bytes) {
    auto end = max_bytes;
    // Back off over UTF-8 continuation bytes (10xxxxxx) so that no character is split.
    while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xC0) == 0x80) --end;
    line = line.substr(0, end);
    cut = true;
  }
  return std::string(line) + (cut ? "..." : "");
}

}  // namespace ktune::dispatch
