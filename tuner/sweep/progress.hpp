#pragma once
// Sweep progress on stderr: a one-line bar (done/total, ok/failed, ETA from the mean time per
// candidate) on a terminal, a line per finished key otherwise, or nothing at all.
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

namespace ktune::sweep {

class Progress {
 public:
  enum class Mode { bar, lines, quiet };
  // bar on a terminal, lines otherwise; quiet when asked.
  static Mode mode_for(FILE* out, bool quiet) noexcept;

  Progress(Mode mode, size_t total, FILE* out = stderr);
  ~Progress();

  void candidate_done(bool ok);
  // A key is finished: lines mode prints `text`; bar mode only when it reports a gap.
  void key_done(std::string_view text, bool gap);
  // Prints a line (above the bar), except in quiet mode.
  void message(std::string_view text);
  // Candidates that will not run after all (budget reached): the total shrinks.
  void drop(size_t n);

  // "1h02m", "3m05s", "12s"
  static std::string format_duration(double seconds);
  // The bar's text without terminal control characters (for tests and the lines mode).
  std::string status_text() const;

 private:
  void redraw();
  void clear();

  Mode mode_;
  size_t total_, done_ = 0, ok_ = 0;
  FILE* out_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
};

}  // namespace ktune::sweep
