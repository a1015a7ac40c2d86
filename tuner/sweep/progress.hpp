#pragma once
// Sweep progress on stderr: a one-line bar (done/total, ok/failed, ETA from the mean time per
// candidate) on a terminal, a line per finished key otherwise, or nothing at all. A sweep over
// several devices shares one Progress among its devices' threads: each line then starts with the
// device's label, and the status counts each device's candidates.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::sweep {

class Progress {
 public:
  enum class Mode { bar, lines, quiet };
  // bar on a terminal, lines otherwise; quiet when asked.
  static Mode mode_for(FILE* out, bool quiet) noexcept;

  // `devices`: one label per device ("device 2") where several share this progress; none for one.
  Progress(Mode mode, size_t total, FILE* out = stderr, std::vector<std::string> devices = {});
  ~Progress();

  void candidate_done(bool ok, int device = 0);
  // A key is finished: lines mode prints `text`; bar mode only when it reports a gap.
  void key_done(std::string_view text, bool gap, int device = 0);
  // Prints a line (above the bar), except in quiet mode; `device` >= 0 names the device it is of.
  void message(std::string_view text, int device = -1);
  // Candidates that will not run after all (budget reached): the total shrinks.
  void drop(size_t n);

  // "1h02m", "3m05s", "12s"
  static std::string format_duration(double seconds);
  // The bar's text without terminal control characters (for tests and the lines mode).
  std::string status_text() const;

 private:
  void redraw();
  void clear();
  void print_line(std::string_view text);
  std::string status() const;  // status_text() under the lock

  mutable std::recursive_mutex mutex_;
  Mode mode_;
  size_t total_, done_ = 0, ok_ = 0;
  std::vector<std::string> devices_;
  std::vector<size_t> device_done_;
  FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
};

}  // namespace ktune::sweep
