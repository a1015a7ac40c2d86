#include "kernels/kernel_launch.hpp"

#include "backend/backend.hpp"

namespace ktune {

void launch(backend::Context& ctx, void* function, const LaunchShape& shape, void** arguments) {
  const backend::Dim3 grid{shape.grid[0], shape.grid[1], shape.grid[2]}, block{shape.block, 1, 1};
  if (shape.overlaps_previous)
    ctx.launch_dependent(function, grid, block, shape.shared_bytes, arguments);
  else
    ctx.launch(function, grid, block, shape.shared_bytes, arguments);
}

}  // namespace ktune
