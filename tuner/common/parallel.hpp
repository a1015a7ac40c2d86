#pragma once
// Host work spread over every core: the CPU references and the timing shapes' random inputs
// (hundreds of MB per key) would otherwise keep the GPU waiting between the sweep's keys.
// std::jthread rather than TBB: the GPU machines that run the sweep carry no libtbb, and this
// is all the scheduling the tuner needs.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ktune {

// Runs fn(0..n-1) on all cores, tasks taken in turn; rethrows the first exception after every
// worker has stopped.
template <class Fn>
void parallel_for(size_t n, const Fn& fn) {
  const size_t workers = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    try {
      for (size_t i; (i = next++) < n;) fn(i);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
      next = n;
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (size_t w = 1; w < workers; ++w) helpers.emplace_back(work);
    work();
  }
  if (error) std::rethrow_exception(error);
}

// Elements per task of a random-input fill (parallel_each): a task's overhead vanishes against a
// million draws, and a timing shape's hundreds of millions still make hundreds of tasks.
inline constexpr size_t kFillChunk = size_t{1} << 20;

// fn(i) for every i in [0, n), in chunks of `chunk` indices run in parallel.
template <class Fn>
void parallel_each(size_t n, size_t chunk, const Fn& fn) {
  parallel_for((n + chunk - 1) / chunk, [&](size_t c) {
    const size_t end = std::min(n, (c + 1) * chunk);
    for (size_t i = c * chunk; i < end; ++i) fn(i);
  });
}

}  // namespace ktune
