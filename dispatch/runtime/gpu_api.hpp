#pragma once
// What the runtime needs of a GPU API, one small vtable per API (CUDA driver, HIP), each loaded
// with dlopen so that the library starts on machines without them. Unlike tuner/backend's
// Context, it owns nothing of the device: it launches on the caller's context and stream.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ktune::runtime {

// The device the calling thread launches on.
struct Device {
  // Modules are loaded once per id. CUDA: the context's unique id (a context made later at a
  // destroyed one's address gets another). HIP: the device ordinal + 1 (after hipDeviceReset,
  // which unloads every module, a process must not call the runtime again).
  const void* id = nullptr;
  std::string arch;  // "sm_90a", "gfx942": the dispatch table's arch
  int compute_units = 0;
  bool overlapping_launches = false;  // Launch::overlaps_previous takes effect (CUDA, 9.0 on)
};

struct Launch {
  unsigned grid[3] = {1, 1, 1};
  unsigned block = 1;
  size_t shared_bytes = 0;
  // The kernel may start before the previous launch on the stream has finished (it waits for it
  // itself: templates/common/launch_order.hpp); only where Device::overlapping_launches.
  bool overlaps_previous = false;
};

// Methods throw ktune::Unavailable (no driver, device or current context) or ktune::Error.
class GpuApi {
 public:
  virtual ~GpuApi() = default;
  virtual std::string_view name() const noexcept = 0;
  // Id of the device the calling thread launches on (Device::id); cheap, called on every launch.
  virtual const void* current() const = 0;
  // The device of `id`, called with it current (the runtime caches the answer per id).
  virtual Device describe(const void* id) const = 0;
  // Loads a code object on the current device; the handle is for function() and unload().
  virtual void* load(std::string_view code) const = 0;
  virtual void unload(void* module) const noexcept = 0;
  // The function, with its dynamic shared memory limit raised to `shared_bytes` (once, here,
  // rather than on every launch).
  virtual void* function(void* module, const std::string& symbol, size_t shared_bytes) const = 0;
  virtual void launch(void* function, const Launch& launch, void* stream, void** args) const = 0;
};

// The APIs whose library loads on this machine, in preference order (CUDA, then HIP); `why`
// collects the reasons of those that did not.
std::vector<std::unique_ptr<GpuApi>> vendor_apis(std::string& why);

// Each exists only where its vendor headers were found (see dispatch/runtime/CMakeLists.txt);
// they throw Unavailable when the library does not load.
std::unique_ptr<GpuApi> cuda_api();
std::unique_ptr<GpuApi> hip_api();

}  // namespace ktune::runtime
