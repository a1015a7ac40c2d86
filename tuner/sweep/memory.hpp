#pragma once
// Memory of this process, as Linux reports it in /proc/self/status, for the sweep's evidence that
// a long sweep does not grow (SweepSummary::memory_start / memory_end).
#include <cstdint>

namespace ktune::sweep {

// Resident set now (VmRSS) and at its highest so far (VmHWM), in bytes; 0 where unknown.
int64_t resident_bytes() noexcept;
int64_t peak_resident_bytes() noexcept;

}  // namespace ktune::sweep
