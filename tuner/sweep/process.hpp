#pragma once
// A child process that talks in lines over its stdin/stdout (one socket pair), with its stderr
// captured (the last few KiB are kept for error reports). The child runs in its own process
// group, so that ending it also ends anything it started; the destructor ends and reaps it.
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ktune::sweep {

using Clock = std::chrono::steady_clock;

struct ExitStatus {
  int code = 0;    // exit code, when the child exited
  int signal = 0;  // the signal that ended it, or 0
  bool clean() const noexcept { return signal == 0 && code == 0; }
  std::string describe() const;  // "exit code 3", "signal 11 (Segmentation fault)"
};

// A file descriptor, closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept;
  ~UniqueFd();
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset() noexcept;

 private:
  int fd_ = -1;
};

class ChildProcess {
 public:
  // Starts argv[0] (a path, not searched in PATH) with `argv`. Throws Error when it cannot.
  static std::unique_ptr<ChildProcess> spawn(const std::vector<std::string>& argv);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const noexcept { return pid_; }

  // Sends `line` and a newline. False when the child closed its end or the deadline passed.
  bool send_line(std::string_view line, Clock::time_point deadline);

  enum class Read { line, closed, timeout, too_long };
  // Waits for the next line (without its newline) until `deadline`; too_long once kMaxLine bytes
  // came without a newline (a worker gone wrong must not fill the parent's memory).
  Read read_line(std::string& line, Clock::time_point deadline);
  // Far above any answer (a compile reply carries its code object: a few MiB at most).
  static constexpr size_t kMaxLine = size_t{256} << 20;

  // True while the child has not exited (reaps it when it has).
  bool running();
  // Kills the process group (when still running) and reaps the child. Idempotent.
  ExitStatus terminate();
  // Waits up to `grace` for the child to exit by itself (draining its stderr), then terminates it.
  ExitStatus finish(std::chrono::milliseconds grace);

  // The last bytes the child wrote to stderr.
  const std::string& stderr_tail() const noexcept { return err_tail_; }

 private:
  ChildProcess() = default;
  // Moves what is readable on stderr into the tail; false once stderr is closed.
  bool drain_stderr();
  // Ends whatever is left of the child's process group, then reaps the child.
  void collect();
  bool exited(bool wait);  // the child has exited (not reaped yet); blocks when `wait`

  pid_t pid_ = -1;
  UniqueFd channel_;  // our end of the socket pair; reset once the child closed its end
  UniqueFd err_;      // read end of the child's stderr pipe; reset at its end
  bool reaped_ = false;
  ExitStatus status_;
  std::string in_buf_;  // bytes read past the last returned line
  std::string err_tail_;
};

}  // namespace ktune::sweep
