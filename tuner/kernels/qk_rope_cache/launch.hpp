#pragma once
// The launches of qk_rope_cache, built once for the tuner's DeviceInstance and the runtime's
// Engine::qk_rope_cache: the fused kernel, or the unfused baseline's sequence (rope, cache write,
// concat, and quantise for an fp8 q_out), in the parameter lists of templates/qk_rope_cache
// (u16 = unsigned short, i64 = long long).
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/kernel_launch.hpp"
#include "kernels/qk_rope_cache/problem.hpp"

namespace ktune::rope {

using i64 = long long;  // the kernels' 64-bit integer, as they mangle it

// qk_rope_cache(const u16* q_nope, const u16* q_pe, const u16* kv_c, const u16* k_pe, const i64* positions,
//   const i64* slot_mapping, const float* cos, const float* sin, u8* kv_cache, u8* q_out, float k_inv_scale,
//   float q_inv_scale, int tokens, int heads, i64 table_rows, int is_neox)
using FusedArguments =
    KernelArguments<const uint16_t*, const uint16_t*, const uint16_t*, const uint16_t*, const i64*, const i64*,
                    const float*, const float*, uint8_t*, uint8_t*, float, float, int, int, i64, int>;
// unfused_rope(const u16* q_pe, const u16* k_pe, const i64* positions, const float* cos, const float* sin,
//   u16* q_pe_rot, u16* k_pe_rot, int tokens, int heads, i64 table_rows, int is_neox)
using RopeArguments = KernelArguments<const uint16_t*, const uint16_t*, const i64*, const float*, const float*,
                                      uint16_t*, uint16_t*, int, int, i64, int>;
// unfused_cache(const u16* kv_c, const u16* k_pe_rot, const i64* slot_mapping, u8* kv_cache, float k_inv_scale,
//   int tokens)
using CacheArguments = KernelArguments<const uint16_t*, const uint16_t*, const i64*, uint8_t*, float, int>;
// unfused_concat(const u16* q_nope, const u16* q_pe_rot, u16* q_cat, int tokens, int heads)
using ConcatArguments = KernelArguments<const uint16_t*, const uint16_t*, uint16_t*, int, int>;
// unfused_quantise(const u16* q_cat, u8* q_out, float q_inv_scale, i64 elements)
using QuantiseArguments = KernelArguments<const uint16_t*, uint8_t*, float, i64>;

// The tails of the kernels' symbols after their names and template arguments, which the runtime
// checks a code object against before it passes these arguments; the unfused ones in launch order.
inline constexpr std::string_view kFusedParameters = "EvPKtS2_S2_S2_PKxS4_PKfS6_PhS7_ffiixi";
inline constexpr std::array<std::string_view, 4> kUnfusedParameters = {"EvPKtS2_PKxPKfS6_PtS7_iixi", "EvPKtS2_PKxPhfi",
                                                                       "EvPKtS2_Ptii", "EvPKtPhfx"};
static_assert(FusedArguments::mangled(kKernelNameSubstitutions) == kFusedParameters);
static_assert(RopeArguments::mangled(kKernelNameSubstitutions) == kUnfusedParameters[0]);
static_assert(CacheArguments::mangled(kKernelNameSubstitutions) == kUnfusedParameters[1]);
static_assert(ConcatArguments::mangled(kKernelNameSubstitutions) == kUnfusedParameters[2]);
static_assert(QuantiseArguments::mangled(kKernelNameSubstitutions) == kUnfusedParameters[3]);

// What a launch takes of the problem: device addresses and scalars.
struct LaunchProblem {
  const uint16_t *q_nope = nullptr, *q_pe = nullptr, *kv_c = nullptr, *k_pe = nullptr;  // bf16
  const i64 *positions = nullptr, *slot_mapping = nullptr;
  const float *cos = nullptr, *sin = nullptr;  // [table_rows, 32]
  uint8_t *kv_cache = nullptr, *q_out = nullptr;
  float k_scale = 1, q_scale = 1;  // value = code * scale; the kernels take the inverses
  int64_t tokens = 0, heads = 0, table_rows = 0;
  bool is_neox = false;
  num::KvDtype q_dtype = num::KvDtype::bf16;  // an fp8 q_out is quantised from the concatenation
  // The unfused baseline's intermediates: rotated q_pe [T, H, 64] and k_pe [T, 64], and for an
  // fp8 q_out the concatenation [T, H, 576] (all bf16; a bf16 q_out is the concatenation itself).
  uint16_t *q_pe_rot = nullptr, *k_pe_rot = nullptr, *q_cat = nullptr;
};

// The fused kernel: blocks of config.threads over tokens / config.tokens_per_cta, times
// heads + 1 (the q heads and the cache row) for the token_head layout.
KernelLaunch<FusedArguments> fused_launch(const LaunchProblem& problem, const Config& config) noexcept;

// The unfused sequence in launch order, each kernel a block of config.threads per
// config.threads vectors of config.vec elements of its output.
struct UnfusedLaunches {
  KernelLaunch<RopeArguments> rope;
  KernelLaunch<CacheArguments> cache;
  KernelLaunch<ConcatArguments> concat;
  std::optional<KernelLaunch<QuantiseArguments>> quantise;  // for an fp8 q_out only
};
UnfusedLaunches unfused_launches(const LaunchProblem& problem, const Config& config) noexcept;

}  // namespace ktune::rope
