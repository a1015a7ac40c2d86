#pragma once
// Ends the process when work on a device does not finish in time. A hung kernel cannot be
// interrupted by the process that launched it (the sweep therefore runs candidates in worker
// processes it can kill); a command that runs one in process, like `ktune bench`, bounds it with
// this instead of never returning.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ktune {

class Watchdog {
 public:
  static constexpr int kExitStatus = 124;
  // After `limit` without destruction: prints "ktune: error: " + message() to stderr and ends
  // the process with exit status 124, timeout(1)'s, which scripts can tell from an error's 1
  // (std::_Exit: nothing of the hung work can be unwound).
  Watchdog(std::chrono::duration<double> limit, std::function<std::string()> message);
  ~Watchdog();  // disarms it
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace ktune
