#pragma once
// Device timing of a launch sequence with events: warm-up, then samples until the median is
// known well enough (bench/stopping.hpp), with the inputs rotated so that the L2 stays cold.
#include <functional>

#include "backend/backend.hpp"
#include "bench/stats.hpp"
#include "bench/stopping.hpp"

namespace ktune::bench {

// `enqueue(r)` enqueues one launch on copy r (0 <= r < rotations) of the inputs, on `ctx`'s
// stream, without synchronising. Copies are used in turn, so that consecutive launches read
// different memory (see rotations_for). Launches shorter than policy.min_sample_us are timed in
// batches, replayed from captured graphs where the backend supports capture; the result is per
// launch. A first timed launch slower than policy.abandon_us (when set) and at least
// policy.min_sample_us long is timed again: if the second is slower too, the two are the only
// samples.
// Throws DeviceFault / Error from the launches.
Stats measure(backend::Context& ctx, const std::function<void(int rotation)>& enqueue, int rotations,
              const TimingPolicy& policy = {});

}  // namespace ktune::bench
