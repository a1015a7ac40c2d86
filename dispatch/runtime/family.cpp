#include "dispatch/runtime/family.hpp"

namespace ktune::runtime {

std::span<const RuntimeFamily* const> families() noexcept {
  static const RuntimeFamily* const all[] = {&kMlaDecode, &kQkRopeCache};
  static_assert(std::size(all) == kFamilies);
  return all;
}

}  // namespace ktune::runtime
