#pragma once
// What a dispatch table answers for one mla_decode call, in one form for the compiled-in table
// (the packaged generated header) and the KTUNE_DB override table.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ktune/runtime.h"

namespace ktune::runtime {

// What a launch needs of a kernel: its code object in the package and its geometry.
struct KernelChoice {
  int rows = 0;     // query rows per CTA (the grid's x tiles)
  int keys = 0;     // keys per KV tile (the split policy's unit)
  int split = 0;    // the split policy's knob
  int threads = 0;  // threads per CTA
  int64_t shared_bytes = 0;
  size_t code_object = 0;  // index into the package's code objects
};

struct Choice {
  ktune_status status = KTUNE_UNSUPPORTED;  // OK, OK_FALLBACK, GAP, UNSUPPORTED or NO_CODE_OBJECT
  std::optional<KernelChoice> kernel;      // set for OK and OK_FALLBACK
  bool has_fallback_key = false;
  ktune_mla_decode_key fallback_key{};
  std::string_view reason;  // static (compiled table) or owned by the override table
};

}  // namespace ktune::runtime
