#include "jit/code_text.hpp"

#include <algorithm>

namespace ktune::jit {
namespace {

bool line_splice_at(std::string_view s, size_t i) {
  return s[i] == '\\' && (s.substr(i + 1, 1) == "\n" || s.substr(i + 1, 2) == "\r\n");
}

// The source with each comment replaced by one space; line breaks kept (a /* */ comment's too, so
// that the lines around it stay apart; a // comment's last one).
std::string without_comments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '"' || c == '\'') {
      // A literal, whole: a comment marker inside it is text. It ends at its closing quote or,
      // unterminated, at the line's end, also after a backslash (a literal spliced across lines,
      // which the templates do not have, is taken as two lines of code).
      const size_t start = i++;
      while (i < s.size() && s[i] != c && s[i] != '\n') i += line_splice_at(s, i) ? 1 : s[i] == '\\' ? 2 : 1;
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
  const std::string code = without_comments(source);
  std::string out;
  out.reserve(code.size());
  for (size_t at = 0; at < code.size();) {
    size_t end = code.find('\n', at);
    if (end == std::string::npos) end = code.size();
    const size_t first = code.find_first_not_of(" \t\r", at);
    if (first < end) {
      const size_t last = code.find_last_not_of(" \t\r", end - 1);
      out.append(code, first, last + 1 - first);
      out += '\n';
    }
    at = end + 1;
  }
  return out;
}

}  // namespace ktune::jit
