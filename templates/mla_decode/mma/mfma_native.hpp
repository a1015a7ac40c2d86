#pragma once
// math = "mfma_native" (mla_decode_mma.hip, MATH 5): the matrix-core kernel of math = "mma" with
// the MFMA forms of 32-deep reduction that take the cache's own format, where the target has them:
//   gfx942 (MI300X, MI325X), fp8_e4m3fnuz cache: Q K^T on v_mfma_f32_16x16x32_fp8_fp8, which
//     reads fp8_e4m3fnuz codes there: the key codes go to it as the ring holds them, undecoded;
//   gfx950 (MI350X, MI355X), fp8_e4m3fn cache: the same instruction, which reads the OCP
//     fp8_e4m3fn there;
//   gfx950, bf16 cache: Q K^T and P V on v_mfma_f32_16x16x32_bf16, one instruction where math =
//     "mma" issues two v_mfma_f32_16x16x16bf16_1k.
// The fp8 MFMA takes both operands in fp8, so the queries are converted once per CTA, in place in
// the q tile, into two fp8 terms per element with a power-of-two scale per row
// (mla_tile::query_scale_bits): hi + lo holds a bf16 query exactly, and each Q K^T step issues
// two fp8 products, one per term. P V stays as math = "mma" computes it on an fp8 cache (V decoded
// to fp16, P one fp16 term): P in fp8 would need three terms to keep the weights' accuracy.
// Numbers: docs/kernels/mla_decode.md; the host emulation of the fp8 path:
// tests/unit/mla_native_fp8_numbers_test.cpp. Compiled for gfx942 and gfx950 with LLVM's AMDGPU
// back end; no AMD GPU has executed this path yet.
//
// The kernel names Path<KV_DTYPE> only in the branches of MATH 5, so that elsewhere (NVIDIA,
// gfx90a) the class is declared and never defined, and adds nothing to a code object.
#include "common/matrix_core.hpp"
#include "common/prelude.hpp"
#include "mla_decode/geometry.hpp"

namespace ktune {
namespace mfma_native {

template <int KV_DTYPE>
struct Path;

#if defined(__gfx942__) || defined(__gfx950__)
typedef __bf16 bf16x8_t __attribute__((ext_vector_type(8)));

template <int KV_DTYPE>
struct Path {
#if defined(__gfx942__)
  static_assert(KV_DTYPE == mla_tile::kKvFp8E4m3fnuz,
                "gfx942: the fp8 MFMA reads fp8_e4m3fnuz, and there is no 16x16x32 bf16 MFMA");
#else
  static_assert(KV_DTYPE != mla_tile::kKvFp8E4m3fnuz, "gfx950: the fp8 MFMA reads the OCP fp8_e4m3fn");
#endif
  // The cache's fp8 format, to and from float on bits (common/prelude.hpp, the host encoders' twins).
  __device__ __forceinline__ static u32 encode(float x) {
    return KV_DTYPE == mla_tile::kKvFp8E4m3fn ? float_to_fp8_e4m3fn(x) : float_to_fp8_e4m3fnuz(x);
  }
  __device__ __forceinline__ static float decode(u32 code) {
    return KV_DTYPE == mla_tile::kKvFp8E4m3fn ? fp8_e4m3fn_to_float(code) : fp8_e4m3fnuz_to_float(code);
  }

  // The q tile (bf16, QTile rows) to two fp8 terms per element, in place: each 16-byte chunk of 8
  // dims becomes the 8 hi codes (bytes 0..7) and the 8 lo codes (bytes 8..15), so that the
  // chunk's 16-byte read (mc::load_qk_a) holds both terms' A operands of the lane's 8 dims. First
  // each row's largest |q| (bf16 bits, a shared atomic maximum into row_bits[ROWS], zeroed by the
  // caller before `sync`), then the row's scale (mla_tile::query_scale_bits). Every chunk is read
  // and written by one thread; `sync` is the math threads' barrier; the tile loop's first barrier
  // publishes the terms.
  template <class QTile, int ROWS, int THREADS, class Sync>
  __device__ __forceinline__ static void convert_queries(u8* sQ, u32* row_bits, int tid, Sync sync) {
    constexpr int kChunks = mla_tile::kHeadDim / 8;  // 16-byte chunks of a bf16 row
    for (int i = tid; i < ROWS * kChunks; i += THREADS) {
      const u32x4 w = load16(sQ + QTile::offset(i / kChunks, i % kChunks * 16));
      const u32 words[4] = {w.x, w.y, w.z, w.w};
      u32 m = 0u;
#pragma unroll
      for (int j = 0; j < 4; ++j) m = max_u32(max_u32(m, words[j] & 0x7fffu), (words[j] >> 16) & 0x7fffu);
      atomicMax(row_bits + i / kChunks, m);
    }
    sync();
    for (int i = tid; i < ROWS * kChunks; i += THREADS) {
      u8* const chunk = sQ + QTile::offset(i / kChunks, i % kChunks * 16);
      const float scale = __uint_as_float(mla_tile::query_scale_bits(row_bits[i / kChunks]));
      float x[8];
      bf16x8_to_float(load16(chunk), x);
      u32 hi[2] = {0u, 0u}, lo[2] = {0u, 0u};
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const float v = x[e] * scale;  // exact: a power of two
        const u32 h = encode(v);
        hi[e / 4] |= h << (8 * (e % 4));
        lo[e / 4] |= encode(v - decode(h)) << (8 * (e % 4));
      }
      store16(chunk, u32x4{hi[0], hi[1], lo[0], lo[1]});
    }
  }

  // The factor that takes row r's fp8 products to scores: its inverse query scale.
  __device__ __forceinline__ static float row_unscale(const u32* row_bits, int r) {
    return __uint_as_float(mla_tile::query_unscale_bits(row_bits[r]));
  }

  // acc += Q K^T over one 32-dim step: a = the lane's 16 bytes of the converted q tile (hi codes,
  // then lo codes, of dims 8 (lane / 16) .. + 7), k = the key's codes of the same dims
  // (mc::load_qk_b8): lane 16 g + i holds row / key i and reduction indices 8 g .. 8 g + 7 in
  // both operands, the order the instruction reads them in.
  __device__ __forceinline__ static void mma_qk8(mc::Acc16& acc, const mc::QkA& a, const mc::QkB8& k) {
    const long key = __builtin_bit_cast(long, k.k);
    mc::float4_t c;
    c[0] = acc.v[0], c[1] = acc.v[1], c[2] = acc.v[2], c[3] = acc.v[3];
    c = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(__builtin_bit_cast(long, u32x2{a.x.x, a.x.y}), key, c, 0, 0, 0);
    c = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(__builtin_bit_cast(long, u32x2{a.x.z, a.x.w}), key, c, 0, 0, 0);
    acc.v[0] = c[0], acc.v[1] = c[1], acc.v[2] = c[2], acc.v[3] = c[3];
  }

#if defined(__gfx950__)
  // acc += A B over 32 reduction indices, 8 bf16 a lane in each operand (lane 16 g + i: row / col
  // i, indices 8 g .. 8 g + 7).
  __device__ __forceinline__ static void mfma_bf16(mc::Acc16& acc, const u32x4& a, const u32x4& b) {
    mc::float4_t c;
    c[0] = acc.v[0], c[1] = acc.v[1], c[2] = acc.v[2], c[3] = acc.v[3];
    c = __builtin_amdgcn_mfma_f32_16x16x32_bf16(__builtin_bit_cast(bf16x8_t, a), __builtin_bit_cast(bf16x8_t, b), c,
                                                0, 0, 0);
    acc.v[0] = c[0], acc.v[1] = c[1], acc.v[2] = c[2], acc.v[3] = c[3];
  }

  // acc += Q K^T over one 32-dim step of a bf16 cache: mc::load_qk_a / load_qk_b give each lane 8
  // dims of its row / key, as the instruction reads them.
  __device__ __forceinline__ static void mma_qk(mc::Acc16& acc, const mc::QkA& a, const mc::QkB& k) {
    mfma_bf16(acc, a.x, k.x);
  }

  // O += P V over 32 keys at key0 of one ring slot (a bf16 cache: P as two bf16 terms, V as the
  // tile holds it). A = P: row lane % 16, keys 8 (lane / 16) .. + 7, one 16-byte read per term;
  // B = V: dim lane % 16 of the same keys, eight 16-bit reads (CDNA has no transposing LDS read).
  template <int MT, int PVB, class PRows, class Tile>
  __device__ __forceinline__ static void pv(mc::Acc16 (&acc)[MT][PVB], const u8* sP, const u8* sP_lo,
                                            const u8* slot, int key0, int slot_key0, int live_m_tiles,
                                            int dim0) {
    const int lane = mc::lane_id();
    u32x4 p[MT], p_lo[MT];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
      if (mt < live_m_tiles) {
        const u32 at = PRows::offset(mt * 16 + lane % 16, (key0 + 8 * (lane / 16)) * 2);
        p[mt] = load16(sP + at), p_lo[mt] = load16(sP_lo + at);
      }
#pragma unroll
    for (int pb = 0; pb < PVB; ++pb) {
      const int key = slot_key0 + 8 * (lane / 16);
      const int byte = (dim0 + pb * 16 + lane % 16) * 2;
      u32 v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[j] = static_cast<u32>(*reinterpret_cast<const u16*>(slot + Tile::offset(key + 2 * j, byte))) |
               static_cast<u32>(*reinterpret_cast<const u16*>(slot + Tile::offset(key + 2 * j + 1, byte))) << 16;
      const u32x4 b{v[0], v[1], v[2], v[3]};
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
        if (mt < live_m_tiles) mfma_bf16(acc[mt][pb], p[mt], b), mfma_bf16(acc[mt][pb], p_lo[mt], b);
    }
  }
#endif

 private:
  __device__ __forceinline__ static u32 max_u32(u32 a, u32 b) { return a > b ? a : b; }
};
#endif

}  // namespace mfma_native
}  // namespace ktune
