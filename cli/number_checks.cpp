#include "number_checks.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/format.h>

namespace ktune::cli {
namespace {

// The whole text as a T in base 10, or nothing.
template <class T>
bool read_whole(const std::string& text, T& value) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

CLI::Validator decimal_within(long long low, long long high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        long long v = 0;
        const bool leading_zero = text.size() > 1 && text[0] == '0';
        if (leading_zero || !read_whole(text, v) || v < low || v > high)
          return fmt::format("'{}' is not a decimal integer in [{}, {}]", text, low, high);
        return {};
      },
      fmt::format("INT in [{}, {}]", low, high));
}

CLI::Validator seconds_within(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        double s = 0;
        if (!read_whole(text, s) || !std::isfinite(s) || s < low || s > high)
          return fmt::format("'{}' is not a number of seconds in [{}, {}]", text, low, high);
        return {};
      },
      fmt::format("SECONDS in [{}, {}]", low, high));
}

}  // namespace ktune::cli
