#pragma once
// What the mla_decode kernels (mla_decode.hip: SIMT, mla_decode_mma.hip: matrix cores,
// mla_decode_transposed.hip: wgmma_t) share: the mask, the log constants, the cache look-up
// (CacheKey) and the fp8 decoding of the cache.
#include "common/prelude.hpp"
#include "mla_decode/geometry.hpp"

namespace ktune {
namespace mla_detail {

using namespace mla_tile;

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Keys visible to row r of a request (before split clipping). MASK_SHIFT moves the boundary
// and exists only so that tests can plant an off-by-one; production instances use 0.
template <int CAUSAL, int MASK_SHIFT>
__device__ __forceinline__ int visible_keys(int r, int kv_len, int heads, int block_len) {
  return (CAUSAL ? kv_len - block_len + r / heads + 1 : kv_len) + MASK_SHIFT;
}

// Where a key lies in the paged cache, looked up a tile before its copies are issued: its page as
// the block table holds it, and its offset in the page (-1: no key there; the copy writes zeros).
// The cache row, page * page_size + offset, is formed only when the copies are issued, a tile
// later: formed at the look-up, its multiply waited there for the block table's load, every tile
// (experiments/2026-12-04-mla-decode-cache-key).
struct CacheKey {
  i32 page, offset;
  __device__ __forceinline__ bool valid() const { return offset >= 0; }
  // The key's cache row; 0 for no key, so that the (zero-filling) copy's address stays in the cache.
  __device__ __forceinline__ i64 row(int page_size) const {
    return valid() ? static_cast<i64>(page) * page_size + offset : 0;
  }
};
__device__ __forceinline__ CacheKey look_up_key(const i32* pages, int j, int page_size, bool valid) {
  return valid ? CacheKey{pages[j / page_size], j % page_size} : CacheKey{0, -1};
}

template <int KV_DTYPE>
__device__ __forceinline__ float fp8_to_float(u32 code) {
  return KV_DTYPE == kKvFp8E4m3fn ? fp8_e4m3fn_to_float(code) : fp8_e4m3fnuz_to_float(code);
}

// Two fp8 codes (the low 16 bits of `w`) to two bf16; exact, as every E4M3 value is a bf16 value.
template <int KV_DTYPE>
__device__ __forceinline__ u32 fp8x2_to_bf16x2(u32 w) {
  return (__float_as_uint(fp8_to_float<KV_DTYPE>(w)) >> 16) |
         (__float_as_uint(fp8_to_float<KV_DTYPE>(w >> 8)) & 0xffff0000u);
}

// Four fp8 codes (a word, code 0 in the low byte) to two fp16x2 words (codes 0, 1 in .x, codes 2, 3
// in .y; code 0 and code 2 in the low halves), scaled by 1 / kScale: the DECODE of the
// matrix-core fp8 operands (common/matrix_core.hpp); the kernel multiplies kScale back into its
// fp32 score and output scales.
//   NVIDIA sm_89+, fp8_e4m3fn: cvt.rn.f16x2.e4m3x2 per half word, exact (kScale 1; NaN kept):
//     one instruction a pair, where moving the bits below takes three to five integer operations.
//     The halves are split with mov.b32 {lo, hi}, not a shift and a cvt.u16 of the low half:
//     ptxas reads the high half in place (F2FP.F16.E4M3.UNPACK_B R, R.H1), and the shifts (one SHF
//     per word) go.
//   Elsewhere: each code's sign, 4 exponent and 3 mantissa bits move into place as they are; read
//     as fp16 (bias 15) they are the code's value times 2^(bias - 15), subnormals included, so
//     kScale = 2^(15 - bias). The NaN codes (0x7f / 0xff for fn, 0x80 for fnuz) decode to finite
//     values (+-480 and -0 before scaling): a cache with NaN codes is corrupt, and this path does
//     not report it. On NVIDIA, a byte permute with sign replication makes each code a 16-bit
//     integer (code, its sign over the high byte), and (x << 7) & 0xbf80bf80 is then the fp16
//     (three instructions a pair), fewer than the shifts and masks below
//     (experiments/2026-12-03-mla-decode-wgmma-t); for fp8_e4m3fn the cvt above is the faster.
template <int KV_DTYPE>
struct Fp8ToF16 {
#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  static constexpr bool kHardware = KV_DTYPE == kKvFp8E4m3fn;
#else
  static constexpr bool kHardware = false;
#endif
  static constexpr float kScale = kHardware ? 1.f : KV_DTYPE == kKvFp8E4m3fnuz ? 128.f : 256.f;
  __device__ __forceinline__ static u32x2 quad(u32 word) {
#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    if (kHardware) {
      u32x2 out;
      asm("{\n"
          ".reg .b16 lo, hi;\n"
          "mov.b32 {lo, hi}, %2;\n"
          "cvt.rn.f16x2.e4m3x2 %0, lo;\n"
          "cvt.rn.f16x2.e4m3x2 %1, hi;\n"
          "}\n"
          : "=r"(out.x), "=r"(out.y)
          : "r"(word));
      return out;
    }
#endif
#if defined(KTUNE_CUDA)
    return {sign_extended(word, 0x9180u), sign_extended(word, 0xb3a2u)};
#else
    return {bits(word), bits(word >> 16)};
#endif
  }

 private:
#if defined(KTUNE_CUDA)
  // Codes (select & 7) and (select >> 8 & 7) of `word`, each in a 16-bit half with its sign
  // replicated over the half's high byte (prmt's selector bit 3), to fp16x2.
  __device__ __forceinline__ static u32 sign_extended(u32 word, u32 select) {
    u32 x;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(x) : "r"(word), "r"(0u), "r"(select));
    return (x << 7) & 0xbf80bf80u;
  }
#else
  // The low two codes of `codes` to fp16x2.
  __device__ __forceinline__ static u32 bits(u32 codes) {
    const u32 spread = ((codes & 0xffu) << 8) | ((codes & 0xff00u) << 16);  // code c at bits 16 c + 8 .. + 15
    return (spread & 0x80008000u) | ((spread >> 1) & 0x3f803f80u);
  }
#endif
};

}  // namespace mla_detail
}  // namespace ktune
