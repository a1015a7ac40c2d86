#include "bench/timing.hpp"

#include <chrono>
#include <memory>
#include <numeric>
#include <vector>

#include "common/error.hpp"

namespace ktune::bench {
namespace {

using Enqueue = std::function<void(int)>;

// Runs `step`; false when it throws an Error other than a DeviceFault (which propagates).
template <class Step>
bool try_step(Step&& step) {
  try {
    step();
    return true;
  } catch (const DeviceFault&) {
    throw;
  } catch (const Error&) {
    return false;
  }
}

// One graph of `batch` launches on copies first, first + 1, ... (mod rotations), or nullptr
// where the backend cannot capture. A capture that fails otherwise also gives nullptr: eager
// launches then report the error themselves if it is real.
std::unique_ptr<backend::Graph> capture(backend::Context& ctx, const Enqueue& enqueue, int first, int batch,
                                        int rotations) {
  if (!try_step([&] { ctx.begin_capture(); })) return nullptr;
  if (!try_step([&] {
        for (int b = 0; b < batch; ++b) enqueue((first + b) % rotations);
      })) {
    try_step([&] { ctx.end_capture(); });  // leaves capture mode; the graph is invalid anyway
    return nullptr;
  }
  std::unique_ptr<backend::Graph> graph;
  try_step([&] { graph = ctx.end_capture(); });
  return graph;
}

// Graphs that, replayed in turn, continue the cycle through the copies from `next` without a
// break, or an empty list when capture is unavailable. Graph g starts at next + g * batch: after
// rotations / gcd(rotations, batch) graphs the cycle is back at `next`, so every launch finds its
// copy last used `rotations` launches before (graphs ending at the last copy and starting again
// at copy 0 would launch twice on the copies in between, from a warm L2).
std::vector<std::unique_ptr<backend::Graph>> capture_cycle(backend::Context& ctx, const Enqueue& enqueue, int next,
                                                           int batch, int rotations) {
  std::vector<std::unique_ptr<backend::Graph>> graphs;
  for (int g = 0; g < rotations / std::gcd(rotations, batch); ++g) {
    auto graph = capture(ctx, enqueue, (next + g * batch) % rotations, batch, rotations);
    if (!graph) return {};
    graphs.push_back(std::move(graph));
  }
  return graphs;
}

}  // namespace

Stats measure(backend::Context& ctx, const Enqueue& enqueue, int rotations, const TimingPolicy& policy) {
  if (rotations < 1) throw Error("measure: rotations must be at least 1");
  const auto start_time = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_time).count();
  };
  int next = 0;
  auto launch = [&] {
    enqueue(next);
    next = (next + 1) % rotations;
  };

  for (int i = 0; i < policy.warmup; ++i) launch();
  ctx.synchronize();

  auto start = ctx.event();
  auto stop = ctx.event();
  double timed_us = 0;
  auto time_one_us = [&] {
    ctx.record(*start);
    launch();
    ctx.record(*stop);
    const double us = ctx.elapsed_ms(*start, *stop) * 1000.0;
    timed_us += us;
    return us;
  };
  double first_us = time_one_us();
  // Only launches long enough to be timed one by one: a single short launch is mostly launch
  // overhead, which the batched samples leave out. A second launch confirms: one stalled launch
  // must not lose a candidate that may be its key's best: a single launch has been seen to stall
  // at more than ten times the config's usual time.
  if (policy.abandon_us > 0 && first_us > policy.abandon_us && first_us >= policy.min_sample_us) {
    const double second_us = time_one_us();
    if (second_us > policy.abandon_us) {
      const double both[] = {first_us, second_us};
      Stats stats = summarize(both);
      stats.timed_ms = timed_us / 1000.0;
      stats.stop = Stop::abandoned;
      return stats;
    }
    first_us = second_us;
  }
  const int batch = batch_size(first_us, policy);
  std::vector<std::unique_ptr<backend::Graph>> graphs;
  if (batch > 1) graphs = capture_cycle(ctx, enqueue, next, batch, rotations);
  // Each graph's first replay may upload it to the device: one untimed pass over the cycle.
  for (const auto& graph : graphs) ctx.replay(*graph);
  size_t next_graph = 0;

  auto take_sample_us = [&] {
    ctx.record(*start);
    if (graphs.empty()) {
      for (int b = 0; b < batch; ++b) launch();
    } else {
      ctx.replay(*graphs[next_graph]);
      next_graph = (next_graph + 1) % graphs.size();
    }
    ctx.record(*stop);
    const double us = ctx.elapsed_ms(*start, *stop) * 1000.0;
    timed_us += us;
    return us / batch;
  };
  Stats stats = sample_until_stable(take_sample_us, elapsed_ms, policy);
  stats.timed_ms = timed_us / 1000.0;
  return stats;
}

}  // namespace ktune::bench
