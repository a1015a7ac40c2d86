#pragma once
// ktune runtime, C++ API: the C API of ktune/runtime.h with std::string messages. Every call
// returns a Result and never throws or aborts; see ktune/runtime.h for what each status means
// and where the tables and code objects come from.
//
//   ktune_mla_decode_args args{...};
//   size_t bytes = 0;
//   ktune::mla_decode_workspace_size(args, bytes);          // allocate `bytes` of workspace
//   ktune::Result r = ktune::mla_decode(stream, args);
//   if (!r.launched()) handle(r.status, r.message);          // gap: r.fallback_key.mla_decode says what to use
//
//   ktune_qk_rope_cache_args rope{...};                      // the same for qk_rope_cache
//   ktune::qk_rope_cache_workspace_size(rope, bytes);        // 0 unless the unfused baseline is selected
//   r = ktune::qk_rope_cache(stream, rope);
#include <cstddef>
#include <string>
#include <string_view>

#include "ktune/runtime.h"

namespace ktune {

enum class Status {
  ok = KTUNE_OK,
  ok_fallback = KTUNE_OK_FALLBACK,
  gap = KTUNE_GAP,
  unsupported = KTUNE_UNSUPPORTED,
  no_device = KTUNE_NO_DEVICE,
  no_code_object = KTUNE_NO_CODE_OBJECT,
  invalid_argument = KTUNE_INVALID_ARGUMENT,
  launch_failed = KTUNE_LAUNCH_FAILED,
};

inline std::string_view to_string(Status s) noexcept { return ktune_status_name(static_cast<ktune_status>(s)); }

struct Result {
  Status status = Status::unsupported;
  std::string message;
  bool has_fallback_key = false;
  ktune_key fallback_key{};  // .mla_decode or .qk_rope_cache: the call's family
  int splits = 0;
  bool from_override = false;
  bool launched() const noexcept { return status == Status::ok || status == Status::ok_fallback; }
};

namespace runtime_detail {
// When memory has run out the message stays empty: the status still stands.
inline Result to_result(const ktune_result& r) noexcept {
  Result result{static_cast<Status>(r.status), {}, r.has_fallback_key != 0, r.fallback_key, r.splits,
                r.from_override != 0};
  try {
    result.message = r.message;
  } catch (...) {
  }
  return result;
}
// Calls one of the C functions, whose last parameter is the result, and converts that result.
template <class F, class... Args>
inline Result call(F function, Args... args) noexcept {
  ktune_result r{};
  function(args..., &r);
  return to_result(r);
}
}  // namespace runtime_detail

// Launches mla_decode on `stream` (CUstream / hipStream_t; nullptr: the default stream).
inline Result mla_decode(void* stream, ktune_mla_decode_args args) noexcept {
  args.stream = stream;
  return runtime_detail::call(ktune_mla_decode, &args);
}
inline Result mla_decode_workspace_size(const ktune_mla_decode_args& args, std::size_t& bytes) noexcept {
  return runtime_detail::call(ktune_mla_decode_workspace_size, &args, &bytes);
}
inline Result mla_decode_select(const ktune_mla_decode_key& key) noexcept {
  return runtime_detail::call(ktune_mla_decode_select, &key);
}
inline Result mla_decode_select(const char* arch, const ktune_mla_decode_key& key) noexcept {
  return runtime_detail::call(ktune_mla_decode_select_for_arch, arch, &key);
}

// Launches qk_rope_cache on `stream` (CUstream / hipStream_t; nullptr: the default stream).
inline Result qk_rope_cache(void* stream, ktune_qk_rope_cache_args args) noexcept {
  args.stream = stream;
  return runtime_detail::call(ktune_qk_rope_cache, &args);
}
inline Result qk_rope_cache_workspace_size(const ktune_qk_rope_cache_args& args, std::size_t& bytes) noexcept {
  return runtime_detail::call(ktune_qk_rope_cache_workspace_size, &args, &bytes);
}
inline Result qk_rope_cache_select(const ktune_qk_rope_cache_key& key) noexcept {
  return runtime_detail::call(ktune_qk_rope_cache_select, &key);
}
inline Result qk_rope_cache_select(const char* arch, const ktune_qk_rope_cache_key& key) noexcept {
  return runtime_detail::call(ktune_qk_rope_cache_select_for_arch, arch, &key);
}

inline Result override_status() noexcept { return runtime_detail::call(ktune_runtime_override_status); }

inline std::string_view runtime_info() noexcept { return ktune_runtime_info(); }

}  // namespace ktune
