#pragma once
// Roofline probes measured on the device in the same run as the kernels, so that every timing
// is also stored as a fraction of what the device achieved.
#include "backend/backend.hpp"
#include "bench/stopping.hpp"

namespace ktune::bench {

// Device-to-device copy bandwidth in GB/s (1e9 bytes/s), counting bytes read plus bytes written,
// over a buffer of max(4x L2, 256 MiB) capped by the free memory, so that the L2 plays no part.
// Throws Error when the device lacks the memory for a meaningful measurement.
double measure_copy_gbps(backend::Context& ctx, const TimingPolicy& policy = {});

}  // namespace ktune::bench
