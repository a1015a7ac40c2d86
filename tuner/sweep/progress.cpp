#include "sweep/progress.hpp"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace ktune::sweep {

Progress::Mode Progress::mode_for(FILE* out, bool quiet) noexcept {
  if (quiet) return Mode::quiet;
  return ::isatty(::fileno(out)) ? Mode::bar : Mode::lines;
}

Progress::Progress(Mode mode, size_t total, FILE* out, std::vector<std::string> devices)
    : mode_(mode), total_(total), devices_(std::move(devices)), device_done_(devices_.size(), 0), out_(out) {}

Progress::~Progress() {
  std::lock_guard lock(mutex_);
  if (drawn_) {
    redraw();
    fmt::print(out_, "\n");
  }
}

std::string Progress::format_duration(double seconds) {
  auto s = static_cast<long long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

std::string Progress::status_text() const {
  std::lock_guard lock(mutex_);
  return status();
}

std::string Progress::status() const {
  std::string per_device;
  for (size_t d = 0; d < devices_.size(); ++d)
    per_device += fmt::format("{}{}: {}", d ? ", " : " (", devices_[d], device_done_[d]);
  if (!per_device.empty()) per_device += ")";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string eta = "?";
  if (done_ > 0) eta = format_duration(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  return fmt::format("{}/{} candidates{}, {} ok, {} failed, elapsed {}, ETA {}", done_, total_, per_device, ok_,
                     done_ - ok_, format_duration(elapsed), eta);
}

void Progress::clear() {
  if (drawn_) fmt::print(out_, "\r\x1b[K");
  drawn_ = false;
}

void Progress::redraw() {
  constexpr int kWidth = 30;
  const int filled = total_ ? static_cast<int>(kWidth * done_ / total_) : kWidth;
  fmt::print(out_, "\r\x1b[K[{:=<{}}{: <{}}] {}", "", filled, "", kWidth - filled, status());
  std::fflush(out_);
  drawn_ = true;
}

void Progress::candidate_done(bool ok, int device) {
  std::lock_guard lock(mutex_);
  ++done_;
  ok_ += ok;
  if (device >= 0 && static_cast<size_t>(device) < device_done_.size()) ++device_done_[static_cast<size_t>(device)];
  if (mode_ == Mode::bar) redraw();
}

void Progress::drop(size_t n) {
  std::lock_guard lock(mutex_);
  total_ -= std::min(n, total_ - done_);
}

void Progress::key_done(std::string_view text, bool gap, int device) {
  std::lock_guard lock(mutex_);
  if (mode_ == Mode::lines)
    message(fmt::format("{} [{}]", text, status()), device);
  else if (mode_ == Mode::bar && gap)
    message(text, device);
}

void Progress::message(std::string_view text, int device) {
  std::lock_guard lock(mutex_);
  if (device >= 0 && static_cast<size_t>(device) < devices_.size())
    print_line(fmt::format("[{}] {}", devices_[static_cast<size_t>(device)], text));
  else
    print_line(text);
}

void Progress::print_line(std::string_view text) {
  if (mode_ == Mode::quiet) return;
  const bool redraw_after = drawn_;
  clear();
  fmt::print(out_, "{}\n", text);
  if (redraw_after) redraw();
  std::fflush(out_);
}

}  // namespace ktune::sweep
