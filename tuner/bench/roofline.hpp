#pragma once
// Roofline probes measured on the device in the same run as the kernels, so that every timing
// is also stored as a fraction of what the device achieved.
#include <functional>
#include <string>

#include "backend/backend.hpp"
#include "bench/stopping.hpp"

namespace ktune::bench {

// Device-to-device copy bandwidth in GB/s (1e9 bytes/s), counting bytes read plus bytes written,
// over a buffer of max(4x L2, 256 MiB) capped by the free memory, so that the L2 plays no part.
// Throws Error when the device lacks the memory for a meaningful measurement.
double measure_copy_gbps(backend::Context& ctx, const TimingPolicy& policy = {});

// The copy bandwidth around one measurement: probed before it and after it. A single probe can
// read a few percent low, and a roofline is what the device can do, so the higher of the two is
// the figure; both are kept, so that a report shows how far apart they were.
struct CopyRoof {
  double before_gbps = 0;
  double after_gbps = 0;    // 0 when the probe after failed
  std::string after_error;  // why it failed; the measurement it follows stands, against `before`
  double gbps() const noexcept { return before_gbps > after_gbps ? before_gbps : after_gbps; }
};
// Runs `measurement` between two measure_copy_gbps probes. What the first probe or `measurement`
// throws propagates (and the second probe is not taken); a second probe that fails is recorded
// in after_error instead, since the measurement before it is finished, unless the device faulted:
// a kernel's fault may surface at the next call, so a DeviceFault propagates.
CopyRoof measure_copy_around(backend::Context& ctx, const std::function<void()>& measurement,
                             const TimingPolicy& policy = {});

// What one launch achieved, and as fractions of the roofline measured in the same run.
struct Rates {
  double gbps = 0;          // bytes / median
  double tflops = 0;        // flops / median
  double frac_copy_bw = 0;  // gbps / copy_gbps; 0 when copy_gbps was not measured (0)
  double frac_matrix = 0;   // tflops / matrix_tflops; 0 when matrix_tflops was not measured (0)
};
// All zero unless median_us > 0.
Rates rates_of(double bytes, double flops, double median_us, double copy_gbps, double matrix_tflops) noexcept;

}  // namespace ktune::bench
