#pragma once
// What a dispatch table answers for one call of any family, in one form for the compiled-in
// tables (the packaged generated headers), the KTUNE_DB override table and run-time compiled
// code objects. Keys and configs travel as their fields' values in the family's field order (the
// order of the C key struct and of the generated Key / Config structs), so that selection, the
// code-object cache and status reporting are written once for every family.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ktune/runtime.h"

namespace ktune::runtime {

inline constexpr size_t kMaxFields = sizeof(ktune_key::field) / sizeof(int64_t);
using Values = std::array<int64_t, kMaxFields>;  // fields in order; the unused tail is 0

// A program holding the kernels of one winner: a packaged file, or bytes compiled at run time.
struct CodeObject {
  std::string_view package;             // "<family>-<arch>": the package directory it belongs to
  std::string_view file;                // "<xxh64>.cubin" / ".hsaco" in that directory; empty: `code` holds it
  const char* const* name_expressions;  // the template instances it holds; [0] is the main kernel
  const char* const* symbols;           // the lowered name of each
  size_t count;
  std::string_view code;  // run-time compiled bytes (file empty)
};

// What a launch needs of a kernel. `object` is null for a winner of the override table that no
// package holds: the engine compiles `name_expressions` at its first launch (or refuses).
struct KernelChoice {
  const CodeObject* object = nullptr;
  int threads = 0;
  int64_t shared_bytes = 0;
  Values config{};  // the family's config fields
  const char* const* name_expressions = nullptr;
  size_t name_expression_count = 0;
  const char* unpackaged = "";  // object null: what to do when compiling at run time is off
};

struct Choice {
  ktune_status status = KTUNE_UNSUPPORTED;  // OK, OK_FALLBACK, GAP, UNSUPPORTED or NO_CODE_OBJECT
  const KernelChoice* kernel = nullptr;     // set for OK and OK_FALLBACK
  bool has_fallback_key = false;
  Values fallback_key{};
  // Static (compiled table) or owned by the override table or the engine. A C string: the
  // compiled select() hands over the generated header's, with no strlen on the select path.
  const char* reason = "";
};

}  // namespace ktune::runtime
