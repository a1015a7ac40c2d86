#pragma once
// Cutting text that may be UTF-8 (compiler logs, a worker's stderr, kernel names) without
// splitting a character: a cut byte sequence is invalid UTF-8, which JSON output refuses.
#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace ktune {

// The largest position <= `at` (and <= the size) that does not fall inside a multi-byte
// character: text.substr(0, result) is whole characters, and so is text.substr(result).
inline size_t utf8_boundary(std::string_view text, size_t at) noexcept {
  if (at >= text.size()) return text.size();
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;  // a continuation byte
  return at;
}

// `text` cut at `max` bytes (whole characters), saying how many bytes were left out.
inline std::string excerpt(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  const size_t cut = utf8_boundary(text, max);
  return fmt::format("{}\n[... {} more bytes]", text.substr(0, cut), text.size() - cut);
}

}  // namespace ktune
