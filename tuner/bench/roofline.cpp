#include "bench/roofline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "bench/timing.hpp"
#include "common/error.hpp"

namespace ktune::bench {

double measure_copy_gbps(backend::Context& ctx, const TimingPolicy& policy) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  const int64_t cache = ctx.info().last_level_cache_bytes();
  // Source and destination together take at most half the free memory: other processes and
  // this one's later allocations need the rest.
  const int64_t wanted = std::max(4 * cache, 256 * kMiB);
  const int64_t bytes = std::min(wanted, ctx.free_memory_bytes() / 4) / kMiB * kMiB;
  if (bytes < std::max(2 * cache, kMiB))
    throw Error(fmt::format("copy bandwidth: {} has too little free memory for buffers of twice its last-level cache "
                            "({} bytes)",
                            ctx.info().name, 2 * cache));
  auto src = ctx.alloc(static_cast<size_t>(bytes));
  auto dst = ctx.alloc(static_cast<size_t>(bytes));
  ctx.fill(*src, 0x5a);
  ctx.fill(*dst, 0);
  const Stats stats = measure(
      ctx, [&](int) { ctx.copy(*dst, *src, static_cast<size_t>(bytes)); }, 1, policy);
  if (!(stats.median_us > 0)) throw Error("copy bandwidth: the device timed the copy at zero microseconds");
  return 2.0 * static_cast<double>(bytes) / (stats.median_us * 1e3);
}

CopyRoof measure_copy_around(backend::Context& ctx, const std::function<void()>& measurement,
                             const TimingPolicy& policy) {
  CopyRoof roof;
  roof.before_gbps = measure_copy_gbps(ctx, policy);
  measurement();
  try {
    roof.after_gbps = measure_copy_gbps(ctx, policy);
  } catch (const DeviceFault&) {
    throw;  // a fault of the kernel may surface at the next call: the measurement is suspect
  } catch (const Error& e) {
    roof.after_error = e.what();
  }
  return roof;
}

Rates rates_of(double bytes, double flops, double median_us, double copy_gbps, double matrix_tflops) noexcept {
  Rates r;
  if (!(median_us > 0)) return r;
  r.gbps = bytes / (median_us * 1e3);
  r.tflops = flops / (median_us * 1e6);
  if (copy_gbps > 0) r.frac_copy_bw = r.gbps / copy_gbps;
  if (matrix_tflops > 0) r.frac_matrix = r.tflops / matrix_tflops;
  return r;
}

}  // namespace ktune::bench
