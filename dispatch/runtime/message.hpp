#pragma once
// The message of a reported status, formatted into a buffer the size of ktune_result::message
// instead of a std::string. The entry points are noexcept and answer with a status: an allocation
// that fails while they explain bad arguments would otherwise terminate the serving process, and
// a status misreported as launch_failed would hide what the caller got wrong.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <utility>

#include "common/utf8.hpp"
#include "ktune/runtime.h"

namespace ktune::runtime {

class Message {
 public:
  Message() noexcept = default;  // empty
  template <class... Args>
  explicit Message(fmt::format_string<Args...> format, Args&&... args) noexcept {
    try {
      const size_t whole = fmt::format_to_n(text_, sizeof text_, format, std::forward<Args>(args)...).size;
      size_ = std::min(whole, sizeof text_);
      // Cut short (a long path or driver message): between whole characters, and said so.
      if (whole > sizeof text_) {
        size_ = utf8_boundary({text_, sizeof text_}, sizeof text_ - kCut.size());
        std::copy(kCut.begin(), kCut.end(), text_ + size_);
        size_ += kCut.size();
      }
    } catch (...) {  // fmt checked the format at compile time; a value that failed to format: the format itself
      const fmt::string_view f = format;
      size_ = std::min(f.size(), sizeof text_);
      std::copy_n(f.data(), size_, text_);
    }
  }
  operator std::string_view() const noexcept { return {text_, size_}; }

 private:
  static constexpr std::string_view kCut = "...";
  char text_[sizeof(ktune_result::message) - 1] = {};  // what report() copies; it adds the terminator
  size_t size_ = 0;
};

}  // namespace ktune::runtime
