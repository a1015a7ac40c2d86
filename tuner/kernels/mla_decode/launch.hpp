#pragma once
// The launch of mla_decode, built once for the tuner's DeviceInstance and the runtime's
// Engine::mla_decode: the main kernel (mla_decode, mla_decode_mma or mla_decode_transposed, which
// share a parameter list), then the combine pass when the keys are split.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kernels/kernel_launch.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune::mla {

// (const u16* q, const u8* kv_cache, const i32* block_table, const i32* kv_lens, u16* o, float* lse,
//  float* part_o, float* part_lse, float softmax_scale, float kv_scale, int heads, int block_len,
//  int max_pages, int page_size, int num_splits)
using MainArguments = KernelArguments<const uint16_t*, const uint8_t*, const int32_t*, const int32_t*, uint16_t*,
                                      float*, float*, float*, float, float, int, int, int, int, int>;
// (const float* part_o, const float* part_lse, u16* o, float* lse, int total_rows, int num_splits)
using CombineArguments = KernelArguments<const float*, const float*, uint16_t*, float*, int, int>;

// The tails of the kernels' symbols after their names and template arguments, which the runtime
// checks a code object against before it passes these arguments.
inline constexpr std::string_view kMainParameters = "EvPKtPKhPKiS6_PtPfS8_S8_ffiiiii";
inline constexpr std::string_view kCombineParameters = "EvPKfS2_PtPfii";
static_assert(MainArguments::mangled(kKernelNameSubstitutions) == kMainParameters);
static_assert(CombineArguments::mangled(kKernelNameSubstitutions) == kCombineParameters);

// What a launch takes of the problem: device addresses and scalars.
struct LaunchProblem {
  const uint16_t* q = nullptr;           // [B, L, H, 576] bf16
  const uint8_t* kv_cache = nullptr;     // [pages, page_size, 576] of the kv dtype
  const int32_t* block_table = nullptr;  // [B, max_pages]
  const int32_t* kv_lens = nullptr;      // [B]
  uint16_t* o = nullptr;                 // [B, L, H, 512] bf16
  float* lse = nullptr;                  // [B, L, H]
  float* part_o = nullptr;               // split partials: fp32 o of every row per split
  float* part_lse = nullptr;             // and fp32 lse of every row per split
  float softmax_scale = 0, kv_scale = 0;
  int64_t heads = 0, block_len = 0, batch = 0;
  int max_pages = 0, page_size = 0;
};

struct LaunchPlan {
  KernelLaunch<MainArguments> main;
  std::optional<KernelLaunch<CombineArguments>> combine;  // when the keys are split (num_splits > 1)
};

// The main kernel on a grid of (row tiles of config.rows, num_splits, batch) blocks of
// config.threads with `shared_bytes` of dynamic shared memory (shared_bytes(config, kv_dtype),
// which the dispatch tables record), and the combine pass of one block per output row, which
// waits for the main kernel itself.
LaunchPlan launch_plan(const LaunchProblem& problem, const Config& config, size_t shared_bytes,
                       int num_splits) noexcept;

}  // namespace ktune::mla
