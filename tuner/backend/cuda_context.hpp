#pragma once
// A Context over the CUDA driver API: the device's primary context and one non-blocking stream.
#include <memory>

#include "backend/backend.hpp"
#include "backend/cuda_driver.hpp"

namespace ktune::backend {

// `driver` must outlive the context (it lives in the process-wide backend).
std::unique_ptr<Context> open_cuda_context(const CudaDriver& driver, const DeviceInfo& info);

}  // namespace ktune::backend
