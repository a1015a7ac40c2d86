#include "common/watchdog.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace ktune {

Watchdog::Watchdog(std::chrono::duration<double> limit, std::function<std::string()> message) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(limit);
  thread_ = std::thread([this, deadline, message = std::move(message)] {
    std::unique_lock lock(mutex_);
    if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
    fmt::print(stderr, "ktune: error: {}\n", message());
    std::fflush(stderr);
    std::_Exit(kExitStatus);
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  cv_.notify_one();
  thread_.join();
}

}  // namespace ktune
