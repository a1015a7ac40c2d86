// The backends compiled into this binary. Each is a process-wide object that loads its vendor
// libraries on first use, so listing them costs nothing on a machine without a GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "backend/builtin.hpp"
#include "common/error.hpp"

namespace ktune::backend {

std::span<Backend* const> all() {
  static const std::vector<Backend*> backends = [] {
    std::vector<Backend*> list;
#ifdef KTUNE_WITH_CUDA
    list.push_back(&cuda_backend());
#endif
#ifdef KTUNE_WITH_HIP
    list.push_back(&hip_backend());
#endif
    return list;
  }();
  return backends;
}

namespace {
std::string built_names() {
  std::vector<std::string_view> names;
  for (Backend* b : all()) names.push_back(b->name());
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}
}  // namespace

Backend& for_arch(std::string_view arch) {
  for (Backend* b : all())
    if (b->handles_arch(arch)) return *b;
  throw Error(fmt::format("no backend compiles for arch '{}': known targets are {}* (cuda) and {}* (hip); "
                          "this binary has: {}",
                          arch, kCudaArchPrefix, kHipArchPrefix, built_names()));
}

Backend& by_name(std::string_view name) {
  for (Backend* b : all())
    if (b->name() == name) return *b;
  throw Error(fmt::format("no backend named '{}' in this binary (it has: {})", name, built_names()));
}

}  // namespace ktune::backend
