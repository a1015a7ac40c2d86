// The kernel families compiled into ktune. A new family adds one line here, and its name to
// scripts/families.sh and dispatch/runtime/CMakeLists.txt (tests/cli/family_lists_test.cpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/family.hpp"
#include "kernels/qk_rope_cache/family.hpp"

namespace ktune {

const std::vector<const Family*>& families() {
  static const std::vector<const Family*> all = {&mla::mla_decode_family(), &rope::qk_rope_cache_family()};
  return all;
}

const Family& family(std::string_view name) {
  std::vector<std::string_view> names;
  for (const Family* f : families()) {
    if (f->name() == name) return *f;
    names.push_back(f->name());
  }
  throw Error(fmt::format("unknown kernel family '{}': ktune knows {}", name, fmt::join(names, ", ")));
}

}  // namespace ktune
