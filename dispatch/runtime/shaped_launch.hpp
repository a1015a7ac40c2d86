#pragma once
// A launch a family's builder shaped (tuner/kernels/kernel_launch.hpp) in the GPU API's terms.
#include "dispatch/runtime/gpu_api.hpp"
#include "kernels/kernel_launch.hpp"

namespace ktune::runtime {

// Overlapping the launch ahead where the kernel allows it and `device` can.
inline Launch shaped_launch(const LaunchShape& shape, const Device& device) noexcept {
  Launch l;
  for (size_t i = 0; i < 3; ++i) l.grid[i] = shape.grid[i];
  l.block = shape.block;
  l.shared_bytes = shape.shared_bytes;
  l.overlaps_previous = shape.overlaps_previous && device.overlapping_launches;
  return l;
}

}  // namespace ktune::runtime
