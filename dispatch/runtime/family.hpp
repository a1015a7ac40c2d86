#pragma once
// What the engine knows of a kernel family beyond its tables: its name, the fields of its C key
// (in the order of the key struct, which is the family's key-field order) and config, and the
// check that a code object's kernels take the arguments the family's launch code passes. The
// launch code itself is Engine::mla_decode (mla_decode_launch.cpp) and Engine::qk_rope_cache
// (qk_rope_cache_launch.cpp); everything else is the same for every family.
#include <cstddef>
#include <span>
#include <string_view>

#include "dispatch/runtime/choice.hpp"

namespace ktune::runtime {

struct RuntimeFamily {
  size_t index;  // in families()
  std::string_view name;
  std::span<const std::string_view> key_fields;     // the C key struct's fields, in order
  std::span<const std::string_view> config_fields;  // the generated Config's fields, in order
  // True when the lowered names of the object's kernels end with the Itanium mangling of the
  // parameter lists the launch code passes (a kernel whose signature changed must not be
  // launched with the old arguments).
  bool (*takes_runtime_arguments)(const CodeObject& object) noexcept;
};

extern const RuntimeFamily kMlaDecode;
extern const RuntimeFamily kQkRopeCache;
inline constexpr size_t kFamilies = 2;
std::span<const RuntimeFamily* const> families() noexcept;

// The position of `name` in `fields` (the launch code's named view of Values).
constexpr size_t field_index(std::span<const std::string_view> fields, std::string_view name) noexcept {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i] == name) return i;
  return fields.size();
}

}  // namespace ktune::runtime
