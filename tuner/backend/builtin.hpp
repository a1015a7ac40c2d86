#pragma once
// The backends this binary can contain, for registry.cpp. Each exists only when its vendor
// headers were found at configure time (KTUNE_WITH_CUDA / KTUNE_WITH_HIP, tuner/CMakeLists.txt).
#include <string_view>

#include "backend/backend.hpp"

namespace ktune::backend {

// Compile targets are recognised by prefix: "sm_90a" is CUDA's, "gfx90a" HIP's.
inline constexpr std::string_view kCudaArchPrefix = "sm_";
inline constexpr std::string_view kHipArchPrefix = "gfx";

inline bool has_arch_prefix(std::string_view arch, std::string_view prefix) noexcept {
  return arch.size() > prefix.size() && arch.starts_with(prefix);
}

#ifdef KTUNE_WITH_CUDA
Backend& cuda_backend();
#endif
#ifdef KTUNE_WITH_HIP
Backend& hip_backend();
#endif

}  // namespace ktune::backend
