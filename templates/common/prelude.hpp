#pragma once
// Portability prelude of every ktune kernel template. The same HIP-flavoured C++ source is
// compiled by hipRTC for AMD CDNA GPUs (gfx90a, gfx942, gfx950) and by NVRTC for NVIDIA GPUs
// (sm_80 .. sm_90a). Neither compiler offers the C or C++ standard library, so this file
// declares what the kernels need itself: fixed-width integers, number-format conversions done on
// bits (so that they agree exactly with the host encoders in tuner/verify/numeric.hpp), warp
// shuffles and 16-byte vector accesses.
//
// Written in C++14 because that is hipRTC 5.2's default dialect (NVRTC defaults to C++17);
// hipRTC pre-includes the HIP device runtime, NVRTC the CUDA one, so no #include is needed.

// The platform switch: the only preprocessor logic ktune's templates use.
#if defined(__HIPCC_RTC__) || defined(__HIP_DEVICE_COMPILE__)
#define KTUNE_HIP 1
// Wavefront size of CDNA (gfx9): 64. RDNA's wave32 parts are not ktune targets.
#define KTUNE_WARP 64
#elif defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define KTUNE_CUDA 1
#define KTUNE_WARP 32
#else
#error "ktune templates are compiled by hipRTC or NVRTC only"
#endif

namespace ktune {

// Fixed-width integers. Declared here because NVRTC has no <stdint.h>; kept inside the ktune
// namespace so that they never collide with the runtime headers' own typedefs.
typedef signed char i8;
typedef unsigned char u8;
typedef unsigned short u16;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;
static_assert(sizeof(u8) == 1 && sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(u64) == 8, "integer widths");

constexpr int kWarp = KTUNE_WARP;

// std::conditional_t, which neither runtime compiler provides.
template <bool C, class A, class B>
struct Conditional {
  typedef A type;
};
template <class A, class B>
struct Conditional<false, A, B> {
  typedef B type;
};
template <bool C, class A, class B>
using conditional_t = typename Conditional<C, A, B>::type;

// ---------------------------------------------------------------------------------------------
// Warp shuffles. All lanes of the warp must call them (NVIDIA: full mask).

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) {
#if defined(KTUNE_HIP)
  return __shfl_xor(v, lane_mask);
#else
  return __shfl_xor_sync(0xffffffffu, v, lane_mask);
#endif
}

// The value `v` of lane `src_lane` (of the caller's warp), broadcast to every lane.
__device__ __forceinline__ float shfl_broadcast(float v, int src_lane) {
#if defined(KTUNE_HIP)
  return __shfl(v, src_lane);
#else
  return __shfl_sync(0xffffffffu, v, src_lane);
#endif
}

// Reductions over aligned groups of GROUP consecutive lanes (GROUP a power of two <= kWarp):
// every lane of a group gets the group's result.
template <int GROUP>
__device__ __forceinline__ float group_max(float v) {
  static_assert(GROUP >= 1 && GROUP <= kWarp && (GROUP & (GROUP - 1)) == 0, "GROUP: power of two <= warp");
#pragma unroll
  for (int m = GROUP / 2; m >= 1; m /= 2) v = fmaxf(v, shfl_xor(v, m));
  return v;
}

template <int GROUP>
__device__ __forceinline__ float group_sum(float v) {
  static_assert(GROUP >= 1 && GROUP <= kWarp && (GROUP & (GROUP - 1)) == 0, "GROUP: power of two <= warp");
#pragma unroll
  for (int m = GROUP / 2; m >= 1; m /= 2) v += shfl_xor(v, m);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Floating-point helpers.

__device__ __forceinline__ float neg_inf() { return __uint_as_float(0xff800000u); }
__device__ __forceinline__ float quiet_nan() { return __uint_as_float(0x7fc00000u); }

// 2^x with the hardware's approximate instruction (relative error ~2^-22; exp2(-inf) = 0),
// which is what online softmax needs: it works in the base-2 domain throughout.
__device__ __forceinline__ float fast_exp2(float x) {
#if defined(KTUNE_HIP)
  return exp2f(x);  // ocml lowers it to v_exp_f32 (plus a denormal-range fix-up)
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

// ---------------------------------------------------------------------------------------------
// bf16 on bits.

__device__ __forceinline__ float bf16_to_float(u32 bits16) { return __uint_as_float(bits16 << 16); }
// The two bf16 halves of a 32-bit word (element 0 in the low half, as in memory).
__device__ __forceinline__ float bf16_lo(u32 w) { return __uint_as_float(w << 16); }
__device__ __forceinline__ float bf16_hi(u32 w) { return __uint_as_float(w & 0xffff0000u); }

// Round to nearest even; a NaN stays a (quiet) NaN. Same rule as num::f32_to_bf16.
__device__ __forceinline__ u32 float_to_bf16(float x) {
  const u32 bits = __float_as_uint(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (bits >> 16) | 0x40u;
  return (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
}

__device__ __forceinline__ u32 pack_bf16x2(float lo, float hi) { return float_to_bf16(lo) | (float_to_bf16(hi) << 16); }

// ---------------------------------------------------------------------------------------------
// fp16: the 16-bit format the fp8 paths feed the matrix cores (every E4M3 value is an fp16 value,
// and fp16 keeps 3 more mantissa bits than bf16 for softmax weights in [0, 1]).

// Round to nearest even, overflow to infinity, NaN stays NaN: the hardware conversion.
__device__ __forceinline__ u32 float_to_f16(float x) {
#if defined(KTUNE_CUDA)
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  return h;
#else
  return __builtin_bit_cast(unsigned short, static_cast<_Float16>(x));
#endif
}

// Element 0 in the low half, as in memory.
__device__ __forceinline__ u32 pack_f16x2(float lo, float hi) {
#if defined(KTUNE_CUDA)
  u32 packed;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
#else
  return float_to_f16(lo) | (float_to_f16(hi) << 16);
#endif
}

// A pair of bf16 (element 0 in the low half) to a pair of fp16: exact where the values lie in
// fp16's normal range, 2^-14 .. 65504; smaller ones round to fp16's steps of 2^-24 there, larger
// ones overflow to infinity.
__device__ __forceinline__ u32 bf16x2_to_f16x2(u32 w) { return pack_f16x2(bf16_lo(w), bf16_hi(w)); }

// ---------------------------------------------------------------------------------------------
// fp8 (E4M3) to float, exactly, on bits. Both formats have 4 exponent and 3 mantissa bits and no
// infinities; they differ in bias and NaN codes:
//   fp8_e4m3fn   (OCP; NVIDIA, gfx950): bias 7, NaN = S.1111.111 (0x7f, 0xff), 0x80 is -0.
//   fp8_e4m3fnuz (gfx942):              bias 8, NaN = 0x80 only, no negative zero.
// Every such value is exactly representable in bf16 and float.

template <int BIAS>
__device__ __forceinline__ float e4m3_magnitude(u32 b) {
  const u32 exponent = (b >> 3) & 0xfu;
  const u32 mantissa = b & 0x7u;
  // Normal: 2^(e - BIAS) * 1.m -> float exponent field e - BIAS + 127, mantissa at the top.
  const float normal = __uint_as_float(((exponent + 127u - BIAS) << 23) | (mantissa << 20));
  // Subnormal: m * 2^(1 - BIAS - 3), an exact product.
  const float subnormal = static_cast<float>(mantissa) * __uint_as_float((127u + 1u - BIAS - 3u) << 23);
  return exponent == 0 ? subnormal : normal;
}

__device__ __forceinline__ float fp8_e4m3fn_to_float(u32 b) {
  b &= 0xffu;
  if ((b & 0x7fu) == 0x7fu) return quiet_nan();
  const float m = e4m3_magnitude<7>(b);
  return (b & 0x80u) ? -m : m;
}

__device__ __forceinline__ float fp8_e4m3fnuz_to_float(u32 b) {
  b &= 0xffu;
  if (b == 0x80u) return quiet_nan();
  const float m = e4m3_magnitude<8>(b);
  return (b & 0x80u) ? -m : m;
}

// ---------------------------------------------------------------------------------------------
// 16-byte vectors: the unit of every global and shared-memory access in the kernels
// (global_load_dwordx4 / ld.global.v4, ds_read_b128 / ld.shared.v4). Addresses must be 16-byte
// aligned.

struct alignas(16) u32x4 {
  u32 x, y, z, w;
};

__device__ __forceinline__ u32x4 zero_u32x4() {
  u32x4 v;
  v.x = v.y = v.z = v.w = 0u;
  return v;
}

struct alignas(8) u32x2 {
  u32 x, y;
};

__device__ __forceinline__ u32x2 load8(const void* p) { return *static_cast<const u32x2*>(p); }
__device__ __forceinline__ u32x4 load16(const void* p) { return *static_cast<const u32x4*>(p); }
__device__ __forceinline__ void store16(void* p, const u32x4& v) { *static_cast<u32x4*>(p) = v; }

// Eight floats, each times `scale`, to eight bf16 in one 16-byte vector (element 0 in the low half
// of .x): an output row's vector store.
__device__ __forceinline__ u32x4 pack_bf16x8(const float* x, float scale = 1.f) {
  return u32x4{pack_bf16x2(x[0] * scale, x[1] * scale), pack_bf16x2(x[2] * scale, x[3] * scale),
               pack_bf16x2(x[4] * scale, x[5] * scale), pack_bf16x2(x[6] * scale, x[7] * scale)};
}

// Eight bf16 (one u32x4) widened to float.
__device__ __forceinline__ void bf16x8_to_float(const u32x4& v, float (&f)[8]) {
  f[0] = bf16_lo(v.x), f[1] = bf16_hi(v.x), f[2] = bf16_lo(v.y), f[3] = bf16_hi(v.y);
  f[4] = bf16_lo(v.z), f[5] = bf16_hi(v.z), f[6] = bf16_lo(v.w), f[7] = bf16_hi(v.w);
}


// ---------------------------------------------------------------------------------------------
// float to fp8 (E4M3), the inverse of the decoders above, with the rules of the host encoders
// (num::f32_to_fp8_e4m3fn / _fnuz): round to nearest even, finite values and infinities beyond
// the largest finite value saturate to it (max 448 for fn, 240 for fnuz), NaN stays NaN (fn keeps
// the sign), and fnuz, which has no negative zero, turns a negative value that rounds to zero
// into +0. The result is the code in the low 8 bits.

// Magnitude code of |x| (abs_bits = its fp32 bits, finite and below the format's max), on bits
// exactly as the host does it, so that both agree for every input.
template <int BIAS>
__device__ __forceinline__ u32 e4m3_encode_magnitude(u32 abs_bits) {
  const int biased = static_cast<int>(abs_bits >> 23);
  if (biased == 0) return 0u;  // fp32 subnormals are far below half the smallest fp8 subnormal
  const int e = biased - 127;
  const u32 significand = (abs_bits & 0x7fffffu) | 0x800000u;
  const int min_normal_e = 1 - BIAS;
  const int shift = 20 + (e < min_normal_e ? min_normal_e - e : 0);
  if (shift > 24) return 0u;
  const u32 kept = significand >> shift;
  const u32 rest = significand & ((1u << shift) - 1u);
  const u32 half = 1u << (shift - 1);
  const u32 rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
  const u32 exponent_part = e < min_normal_e ? 0u : static_cast<u32>(e + BIAS - 1) << 3;
  return exponent_part + rounded;
}

__device__ __forceinline__ u32 float_to_fp8_e4m3fn(float x) {
  const u32 bits = __float_as_uint(x);
  const u32 sign = (bits >> 24) & 0x80u;
  const u32 abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return sign | 0x7fu;
  if (abs_bits >= 0x43e00000u) return sign | 0x7eu;  // |x| >= 448
  return sign | e4m3_encode_magnitude<7>(abs_bits);
}

__device__ __forceinline__ u32 float_to_fp8_e4m3fnuz(float x) {
  const u32 bits = __float_as_uint(x);
  const u32 abs_bits = bits & 0x7fffffffu;
  if (abs_bits > 0x7f800000u) return 0x80u;
  const u32 magnitude = abs_bits >= 0x43700000u ? 0x7fu : e4m3_encode_magnitude<8>(abs_bits);  // |x| >= 240
  return magnitude == 0u ? 0u : (((bits >> 24) & 0x80u) | magnitude);
}

// Two floats to two fp8_e4m3fn codes (lo in bits 0..7, hi in bits 8..15). NVIDIA GPUs from sm_89
// convert in one instruction with the same rounding and saturation (cvt.rn.satfinite; only a
// NaN's sign may differ); elsewhere the bit-exact encoder above runs.
__device__ __forceinline__ u32 float2_to_fp8x2_e4m3fn(float lo, float hi) {
#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  unsigned short packed;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(packed) : "f"(hi), "f"(lo));
  return packed;
#else
  return float_to_fp8_e4m3fn(lo) | (float_to_fp8_e4m3fn(hi) << 8);
#endif
}

}  // namespace ktune
