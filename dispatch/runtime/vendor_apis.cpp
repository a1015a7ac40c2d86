// The GPU APIs built into the runtime: each exists only where its vendor headers were found
// (KTUNE_RUNTIME_WITH_CUDA / KTUNE_RUNTIME_WITH_HIP, dispatch/runtime/CMakeLists.txt), as
// tuner/backend/registry.cpp does for the backends.
#include <fmt/format.h>

#include "common/error.hpp"
#include "dispatch/runtime/gpu_api.hpp"

namespace ktune::runtime {

std::vector<std::unique_ptr<GpuApi>> vendor_apis(std::string& why) {
  using Factory = std::unique_ptr<GpuApi> (*)();
  std::vector<std::pair<std::string_view, Factory>> built;
#if KTUNE_RUNTIME_WITH_CUDA
  built.emplace_back("cuda", cuda_api);
#endif
#if KTUNE_RUNTIME_WITH_HIP
  built.emplace_back("hip", hip_api);
#endif
  std::vector<std::unique_ptr<GpuApi>> apis;
  for (const auto& [name, make] : built) {
    try {
      apis.push_back(make());
    } catch (const std::exception& e) {
      why += fmt::format("{}{} unavailable: {}", why.empty() ? "" : "; ", name, e.what());
    }
  }
  if (built.empty()) why = "this ktune_runtime was built without the CUDA and HIP headers";
  return apis;
}

}  // namespace ktune::runtime
