#pragma once
// A Context over the HIP runtime: one device and one non-blocking stream.
#include <memory>

#include "backend/backend.hpp"
#include "backend/hip_runtime.hpp"

namespace ktune::backend {

// `runtime` must outlive the context (it lives in the process-wide backend).
std::unique_ptr<Context> open_hip_context(const HipRuntime& runtime, const DeviceInfo& info);

}  // namespace ktune::backend
