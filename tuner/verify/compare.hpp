#pragma once
// Comparison of a device output with a double-precision CPU reference.
#include <cstddef>
#include <span>
#include <string>

#include "kernels/family.hpp"

namespace ktune::verify {

// An element passes when |out - ref| <= atol + rtol * |ref|; the whole output passes when every
// element does and ||out - ref|| / ||ref|| <= max_rel_l2. NaN or Inf in `out` never passes.
struct Tolerance {
  double atol = 0;
  double rtol = 0;
  double max_rel_l2 = 0;
};

// Elements a core compares at a time: outputs up to this size are compared on the calling thread,
// larger ones (mla_decode's verification shapes reach 3.1 M: 3 requests x 16 tokens x 128 heads x
// 512 dims) on every core, where a chunk takes long enough that starting a thread for it is cheap
// in comparison.
inline constexpr size_t kCompareChunk = size_t{1} << 18;

// `what` names the output in the detail text ("o", "lse"). `index_name` formats an element index
// for the first failure (e.g. "b=1 l=0 h=3 d=17"); may be empty.
Verdict compare(std::string_view what, std::span<const float> out, std::span<const double> ref, const Tolerance& tol,
                std::string (*index_name)(size_t, const void*) = nullptr, const void* index_ctx = nullptr);

// Combines verdicts of several outputs: ok only if all are; errors are the maxima; details joined.
Verdict merge(const Verdict& a, const Verdict& b);

}  // namespace ktune::verify
