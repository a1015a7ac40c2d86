#pragma once
// The compiled-in table: the package this library was built with (its generated dispatch header
// and code-object header, see dispatch/package.hpp).
#include <string>
#include <string_view>
#include <vector>

#include "dispatch/runtime/choice.hpp"

namespace ktune::runtime {

struct CompiledPackage {
  std::string_view family, arch, compiler, template_hash;
};
const CompiledPackage& compiled_package() noexcept;

// select() of the generated header, for `arch` (never throws, allocates or aborts).
Choice select_compiled(std::string_view arch, const ktune_mla_decode_key& key) noexcept;

struct CodeObjectInfo {
  std::string_view file;  // relative to the package directory; named by the xxh64 of its bytes
  std::string_view main_symbol, combine_symbol;
};
size_t code_object_count() noexcept;
const CodeObjectInfo& code_object(size_t index) noexcept;  // index < code_object_count()
// The code object with exactly these name expressions, or code_object_count().
size_t find_code_object(const std::vector<std::string>& name_expressions) noexcept;

}  // namespace ktune::runtime
