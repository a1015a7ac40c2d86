#pragma once
// Wall time since construction: the pieces of the account of where a sweep's time went.
#include <chrono>

namespace ktune {

class Stopwatch {
 public:
  double ms() const noexcept {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - from_).count();
  }
  double seconds() const noexcept { return ms() / 1000.0; }

 private:
  std::chrono::steady_clock::time_point from_ = std::chrono::steady_clock::now();
};

}  // namespace ktune
