// libFuzzer target: arbitrary bytes as template source (a --templates tree is the user's).
// jit::code_text must not crash and must be a fixed point of itself: its output has no comment
// left to remove, no blank line and no line with spaces at either end, so a second pass changes
// nothing (were it to, two renderings of one template could hash apart). A source that may hold a
// raw string literal or a spliced literal (an R" or a backslash before a line break anywhere),
// which code_text returns whole, must still be a fixed point.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "jit/code_text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view source(reinterpret_cast<const char*>(data), size);
  const std::string once = ktune::jit::code_text(source);
  if (ktune::jit::code_text(once) != once) {
    std::fprintf(stderr, "code_text is not a fixed point of itself\n");
    std::abort();
  }
  if (source.find("R\"") != std::string_view::npos || source.find("\\\n") != std::string_view::npos ||
      source.find("\\\r\n") != std::string_view::npos)
    return 0;
  for (size_t at = 0; at < once.size();) {
    const size_t end = once.find('\n', at);
    if (end == std::string::npos || end == at || once[at] == ' ' || once[at] == '\t' || once[end - 1] == ' ' ||
        once[end - 1] == '\t') {
      std::fprintf(stderr, "code_text left a blank, untrimmed or unterminated line at byte %zu\n", at);
      std::abort();
    }
    at = end + 1;
  }
  return 0;
}
