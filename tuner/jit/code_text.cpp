#include "jit/code_text.hpp"

#include <algorithm>
#include <optional>

namespace ktune::jit {
namespace {

bool line_splice_at(std::string_view s, size_t i) {
  return s[i] == '\\' && (s.substr(i + 1, 1) == "\n" || s.substr(i + 1, 2) == "\r\n");
}

bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The identifier or number that ends just before s[i] (with the ' and . a number may hold).
std::string_view token_before(std::string_view s, size_t i) {
  size_t k = i;
  while (k > 0 && (identifier_char(s[k - 1]) || s[k - 1] == '\'' || s[k - 1] == '.')) --k;
  return s.substr(k, i - k);
}

// A ' inside a number (1'000'000) separates digits: it opens no literal.
bool digit_separator_at(std::string_view s, size_t i) {
  const auto token = token_before(s, i);
  return !token.empty() && ((token[0] >= '0' && token[0] <= '9') || (token[0] == '.' && token.size() > 1));
}

// The " of a raw string literal (R"x(...)x", with an encoding prefix or none).
bool raw_literal_at(std::string_view s, size_t i) {
  const auto token = token_before(s, i);
  return token == "R" || token == "LR" || token == "uR" || token == "UR" || token == "u8R";
}

// The source with each comment replaced by one space; line breaks kept (a /* */ comment's too, so
// that the lines around it stay apart; a // comment's last one). nullopt for a source with a raw
// string literal or a literal spliced across lines: their text runs over lines, which trimming
// would change.
std::optional<std::string> without_comments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if ((c == '"' || c == '\'') && !(c == '\'' && digit_separator_at(s, i))) {
      if (c == '"' && raw_literal_at(s, i)) return std::nullopt;
      // A literal, whole: a comment marker inside it is text. It ends at its closing quote or,
      // unterminated, at the line's end.
      const size_t start = i++;
      while (i < s.size() && s[i] != c && s[i] != '\n') {
        if (line_splice_at(s, i)) return std::nullopt;
        i += s[i] == '\\' ? 2 : 1;
      }
      i = std::min(i + 1, s.size());
      out.append(s.substr(start, i - start));
    } else if (s.substr(i, 2) == "//") {  // to the line's end, and on over line splices
      while (i < s.size() && s[i] != '\n') i += line_splice_at(s, i) ? (s[i + 1] == '\n' ? 2 : 3) : 1;
      out += ' ';
    } else if (s.substr(i, 2) == "/*") {
      const size_t end = s.find("*/", i + 2);
      const size_t stop = end == std::string_view::npos ? s.size() : end + 2;
      out += ' ';
      for (size_t j = i; j < stop; ++j)
        if (s[j] == '\n') out += '\n';
      i = stop;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string code_text(std::string_view source) {
  const auto code = without_comments(source);
  if (!code) return std::string(source);
  std::string out;
  out.reserve(code->size());
  for (size_t at = 0; at < code->size();) {
    size_t end = code->find('\n', at);
    if (end == std::string::npos) end = code->size();
    const size_t first = code->find_first_not_of(" \t\r", at);
    if (first < end) {
      const size_t last = code->find_last_not_of(" \t\r", end - 1);
      out.append(*code, first, last + 1 - first);
      out += '\n';
    }
    at = end + 1;
  }
  return out;
}

}  // namespace ktune::jit
