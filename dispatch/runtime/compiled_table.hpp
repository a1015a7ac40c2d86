#pragma once
// The compiled-in tables: one per package this library was built with (a (family, arch) pair, see
// dispatch/package.hpp), each made from its generated headers by package_table.cpp.in, in a
// translation unit of its own (the generated headers of two arches of one family share names).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "dispatch/runtime/choice.hpp"
#include "dispatch/runtime/family.hpp"

namespace ktune::runtime {

struct CompiledTable {
  const RuntimeFamily* family;
  std::string_view arch, compiler, template_hash;
  std::string_view package;  // "<family>-<arch>": the directory of its code objects
  // select() of the generated header for this arch (never throws, allocates or aborts); `key`:
  // the family's key fields, in order.
  Choice (*select)(const int64_t* key) noexcept;
  std::span<const CodeObject> code_objects;
};

// The packages this library was built with (dispatch/runtime/CMakeLists.txt).
std::span<const CompiledTable* const> compiled_tables() noexcept;

// The table of `family` for `arch` among `tables`, or null. Arch names are a few characters: a
// loop compares them faster than a call of memcmp, on the path of every select.
inline const CompiledTable* find_table(std::span<const CompiledTable* const> tables, const RuntimeFamily& family,
                                       std::string_view arch) noexcept {
  for (const CompiledTable* t : tables) {
    if (t->family != &family || t->arch.size() != arch.size()) continue;
    size_t i = 0;
    while (i < arch.size() && t->arch[i] == arch[i]) ++i;
    if (i == arch.size()) return t;
  }
  return nullptr;
}

// Why an arch without a table of `family` among `tables` is unsupported, naming the arches that
// have one.
std::string unknown_arch_reason(std::span<const CompiledTable* const> tables, const RuntimeFamily& family);

// The code object of `tables`' packages of `family` and `arch` with exactly these name
// expressions, or null.
const CodeObject* find_code_object(std::span<const CompiledTable* const> tables, const RuntimeFamily& family,
                                   std::string_view arch, const char* const* name_expressions, size_t count) noexcept;

}  // namespace ktune::runtime
