#pragma once
// The message of a reported status, formatted into a buffer the size of ktune_result::message
// instead of a std::string. The entry points are noexcept and answer with a status: an allocation
// that fails while they explain bad arguments would otherwise terminate the serving process, and
// a status misreported as launch_failed would hide what the caller got wrong.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>
#include <utility>

#include "common/utf8.hpp"
#include "ktune/runtime.h"

namespace ktune::runtime {

// Writes `text` to `out` (`room` bytes, no terminator): whole where it fits, else cut between
// whole characters and ending in "...", so that a caller can tell a cut message from a whole one.
// Returns the bytes written; `out` may be where `text` is.
inline size_t write_fitted(std::string_view text, char* out, size_t room) noexcept {
  constexpr std::string_view kCut = "...";
  const size_t keep = text.size() <= room ? text.size() : utf8_boundary(text, room - kCut.size());
  std::memmove(out, text.data(), keep);
  if (keep == text.size()) return keep;
  std::copy(kCut.begin(), kCut.end(), out + keep);
  return keep + kCut.size();
}

class Message {
 public:
  Message() noexcept = default;  // empty
  template <class... Args>
  explicit Message(fmt::format_string<Args...> format, Args&&... args) noexcept {
    try {
      // One byte more than fits, so that a message too long is known to be and cut as such.
      const size_t whole = fmt::format_to_n(text_, sizeof text_, format, std::forward<Args>(args)...).size;
      size_ = write_fitted({text_, std::min(whole, sizeof text_)}, text_, kRoom);
    } catch (...) {  // fmt checked the format at compile time; a value that failed to format: the format itself
      const fmt::string_view f = format;
      size_ = write_fitted({f.data(), f.size()}, text_, kRoom);
    }
  }
  operator std::string_view() const noexcept { return {text_, size_}; }

 private:
  static constexpr size_t kRoom = sizeof(ktune_result::message) - 1;  // what report() copies; it adds the terminator
  char text_[kRoom + 1] = {};
  size_t size_ = 0;
};

}  // namespace ktune::runtime
