#pragma once
// What the verbs that run on a GPU (sweep, bench) share: finding the backend with a device, and
// refusing clearly where there is none.
#include <string>
#include <string_view>

#include "backend/backend.hpp"

namespace ktune::cli {

// The backend `wanted` ("cuda", "hip"; empty: the first with a device) when it has a device.
// Otherwise throws Unavailable: "no GPU to <purpose> (<each backend's reason>). <instead>".
backend::Backend& device_backend(std::string_view wanted, std::string_view purpose, std::string_view instead);

// Device `ordinal` of `b`, checked to exist and to be compilable for. Throws Error.
backend::DeviceInfo checked_device(const backend::Backend& b, int ordinal);

}  // namespace ktune::cli
