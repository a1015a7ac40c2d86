#pragma once
// What both mla_decode math paths (mla_decode.hip: SIMT, mla_decode_mma.hip: matrix cores) share:
// the mask, the log constants and the fp8 decoding of the cache.
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

// Sixteen fp8 codes (one 16-byte vector) to sixteen bf16 (two vectors, codes 0..7 then 8..15).
// NVIDIA sm_89+ decodes OCP E4M3 in hardware (cvt.rn.f16x2.e4m3x2, exact, NaN kept; f16 -> f32
// -> bf16 is exact for every E4M3 value), 2 codes in 4 instructions instead of about 20 on bits;
// fnuz (no NVIDIA format) and other targets take the bit decoder above.
template <int KV_DTYPE>
__device__ __forceinline__ u32 fp8x2_to_bf16x2_fast(u32 w) {
#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  if (KV_DTYPE == kKvFp8E4m3fn) {
    u32 out;
    asm("{\n"
        ".reg .b16 codes, h0, h1;\n"
        ".reg .b32 halves;\n"
        ".reg .f32 f0, f1;\n"
        "cvt.u16.u32 codes, %1;\n"
        "cvt.rn.f16x2.e4m3x2 halves, codes;\n"
        "mov.b32 {h0, h1}, halves;\n"
        "cvt.f32.f16 f0, h0;\n"
        "cvt.f32.f16 f1, h1;\n"
        "cvt.rn.bf16x2.f32 %0, f1, f0;\n"
        "}\n"
        : "=r"(out)
        : "r"(w));
    return out;
  }
#endif
  return fp8x2_to_bf16x2<KV_DTYPE>(w);
}

template <int KV_DTYPE>
__device__ __forceinline__ void fp8x16_to_bf16x16(const u32x4& c, u32x4& lo, u32x4& hi) {
  lo.x = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.x), lo.y = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.x >> 16);
  lo.z = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.y), lo.w = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.y >> 16);
  hi.x = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.z), hi.y = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.z >> 16);
  hi.z = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.w), hi.w = fp8x2_to_bf16x2_fast<KV_DTYPE>(c.w >> 16);
}

}  // namespace mla_detail
}  // namespace ktune
