#pragma once
// Warp-level matrix-core operations for ktune's kernel templates, one implementation per vendor
// behind one interface, so that a kernel's structure is written once:
//   NVIDIA (sm_80+): mma.sync m16n8k16 bf16 -> fp32, operands from shared memory through 16-byte
//                    loads and ldmatrix (.trans for row-major B);
//   AMD CDNA (gfx90a+): v_mfma_f32_16x16x16bf16_1k, operands through ds_read.
// The unit of work is a 16 x 16 accumulator block (Acc16) held by one warp; which lane holds which
// element differs per vendor and is exposed through acc_row / acc_col / lane_row / row_slot, so
// that a kernel can mask, reduce and store accumulators without knowing the layout.
//
// Shared-memory matrices are addressed through a layout type L with
//   __device__ static u32 offset(int row, int byte)   // byte offset of (row, byte within the row)
// (see SwizzledRows / PaddedRows below), so that the caller chooses padding or swizzling.
#include "common/prelude.hpp"

namespace ktune {
namespace mc {

// ---------------------------------------------------------------------------------------------
// Shared-memory layouts.

// Rows of ROW_BYTES (a multiple of 128) whose 16-byte chunks are XOR-swizzled by the row within
// each 128-byte group: chunk ^ sigma(row % 8) with sigma = 0, 4, 1, 5, 2, 6, 3, 7. Conflict-free
// (one 128-byte shared-memory wavefront per quarter warp) for both access patterns below:
// 8 consecutive rows reading the same chunk (ldmatrix) and 2 consecutive rows reading 4 chunks
// each (the 16-byte operand loads of load_qk_a / load_qk_b), where sigma of the two rows differs
// in bit 2 and sends them to different halves of the 128 bytes.
template <int ROW_BYTES>
struct SwizzledRows {
  static_assert(ROW_BYTES % 128 == 0, "swizzled rows are whole 128-byte groups");
  __device__ __forceinline__ static u32 offset(int row, int byte) {
    const int r = row & 7;
    const int sigma = ((r & 1) << 2) | (r >> 1);
    return static_cast<u32>(row * ROW_BYTES + (byte ^ (sigma << 4)));
  }
};

// Rows STRIDE bytes apart, unswizzled; STRIDE = 16 (mod 32) keeps 8 rows of a 16-byte column on
// distinct banks.
template <int STRIDE>
struct PaddedRows {
  __device__ __forceinline__ static u32 offset(int row, int byte) { return static_cast<u32>(row * STRIDE + byte); }
};

// ---------------------------------------------------------------------------------------------
// The 16 x 16 fp32 accumulator block of one warp.

constexpr int kLaneAcc = 256 / kWarp;  // accumulator elements per lane

struct Acc16 {
  float v[kLaneAcc];
};

__device__ __forceinline__ void zero(Acc16& a) {
#pragma unroll
  for (int e = 0; e < kLaneAcc; ++e) a.v[e] = 0.f;
}

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarp; }

#if defined(KTUNE_CUDA)
// m16n8k16 C layout, two n8 tiles: v[0..3] cols 0..7, v[4..7] cols 8..15; lane = 4 g + c holds
// rows g (v[0], v[1]) and g + 8 (v[2], v[3]) at cols 2c, 2c + 1 of each tile.
constexpr int kLaneRows = 2;  // distinct rows per lane
constexpr int kRowLanes = 4;  // consecutive lanes that share a row
__device__ __forceinline__ int lane_row(int i) { return lane_id() / 4 + 8 * i; }
__device__ __forceinline__ int row_slot(int e) { return (e >> 1) & 1; }
__device__ __forceinline__ int acc_col(int e) { return 8 * (e >> 2) + 2 * (lane_id() % 4) + (e & 1); }
#else
// 16x16x16 MFMA C layout: lane = 16 q + i holds rows 4q .. 4q + 3 of col i.
constexpr int kLaneRows = 4;
constexpr int kRowLanes = 16;
__device__ __forceinline__ int lane_row(int i) { return 4 * (lane_id() / 16) + i; }
__device__ __forceinline__ int row_slot(int e) { return e; }
__device__ __forceinline__ int acc_col(int e) { return lane_id() % 16; }
#endif
__device__ __forceinline__ int acc_row(int e) { return lane_row(row_slot(e)); }

// ---------------------------------------------------------------------------------------------
// Q K^T operands: 16 rows (A) or 16 keys (B) x 32 reduction dims, bf16, both row-major in shared
// memory. Each lane reads 16 contiguous bytes (8 dims) per row and feeds them to two k-steps, so
// the dims meet the matrix core in a permuted order; A and B use the same permutation, and a dot
// product does not depend on the order of its terms.

#if defined(KTUNE_CUDA)
struct QkA {
  u32x4 lo, hi;  // rows g and g + 8
};
struct QkB {
  u32x4 k0, k1;  // keys g and g + 8
};

template <class L>
__device__ __forceinline__ QkA load_qk_a(const u8* base, int row0, int dim0) {
  const int lane = lane_id();
  const int byte = dim0 * 2 + 16 * (lane % 4);
  return {load16(base + L::offset(row0 + lane / 4, byte)), load16(base + L::offset(row0 + lane / 4 + 8, byte))};
}

template <class L>
__device__ __forceinline__ QkB load_qk_b(const u8* base, int key0, int dim0) {
  const int lane = lane_id();
  const int byte = dim0 * 2 + 16 * (lane % 4);
  return {load16(base + L::offset(key0 + lane / 4, byte)), load16(base + L::offset(key0 + lane / 4 + 8, byte))};
}

// d += a b for one m16n8k16 step: a = 4 registers (bf16 pairs), b = 2.
__device__ __forceinline__ void mma_16816(float* d, u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma_qk(Acc16& acc, const QkA& a, const QkB& b) {
  // k-step 0 takes words x, y of each 16-byte row piece, k-step 1 words z, w.
  mma_16816(acc.v, a.lo.x, a.hi.x, a.lo.y, a.hi.y, b.k0.x, b.k0.y);
  mma_16816(acc.v, a.lo.z, a.hi.z, a.lo.w, a.hi.w, b.k0.z, b.k0.w);
  mma_16816(acc.v + 4, a.lo.x, a.hi.x, a.lo.y, a.hi.y, b.k1.x, b.k1.y);
  mma_16816(acc.v + 4, a.lo.z, a.hi.z, a.lo.w, a.hi.w, b.k1.z, b.k1.w);
}
#else
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));

struct QkA {
  u32x4 x;  // row i = lane % 16, dims 8 (lane / 16) .. + 7
};
struct QkB {
  u32x4 x;  // key i = lane % 16, same dims
};

template <class L>
__device__ __forceinline__ QkA load_qk_a(const u8* base, int row0, int dim0) {
  const int lane = lane_id();
  return {load16(base + L::offset(row0 + lane % 16, dim0 * 2 + 16 * (lane / 16)))};
}

template <class L>
__device__ __forceinline__ QkB load_qk_b(const u8* base, int key0, int dim0) {
  const int lane = lane_id();
  return {load16(base + L::offset(key0 + lane % 16, dim0 * 2 + 16 * (lane / 16)))};
}

__device__ __forceinline__ short4_t as_short4(u32 lo, u32 hi) {
  short4_t s;
  s[0] = static_cast<short>(lo & 0xffffu), s[1] = static_cast<short>(lo >> 16);
  s[2] = static_cast<short>(hi & 0xffffu), s[3] = static_cast<short>(hi >> 16);
  return s;
}

__device__ __forceinline__ void mfma_16x16x16(Acc16& acc, short4_t a, short4_t b) {
  float4_t c;
  c[0] = acc.v[0], c[1] = acc.v[1], c[2] = acc.v[2], c[3] = acc.v[3];
  c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
  acc.v[0] = c[0], acc.v[1] = c[1], acc.v[2] = c[2], acc.v[3] = c[3];
}

__device__ __forceinline__ void mma_qk(Acc16& acc, const QkA& a, const QkB& b) {
  mfma_16x16x16(acc, as_short4(a.x.x, a.x.y), as_short4(b.x.x, b.x.y));
  mfma_16x16x16(acc, as_short4(a.x.z, a.x.w), as_short4(b.x.z, b.x.w));
}
#endif

// ---------------------------------------------------------------------------------------------
// P V operands: A = 16 rows x 16 keys of a row-major bf16 matrix (P), B = 16 keys x 16 dims of a
// row-major bf16 matrix (V: the keys' rows, so B is read transposed).

#if defined(KTUNE_CUDA)
struct PvA {
  u32 r[4];
};
struct PvB {
  u32 r[4];  // two n8 tiles: r[0], r[1] dims 0..7; r[2], r[3] dims 8..15
};

__device__ __forceinline__ u32 shared_address(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

template <class L>
__device__ __forceinline__ PvA load_pv_a(const u8* base, int row0, int key0) {
  // Matrices (rows 0-7, keys 0-7), (rows 8-15, keys 0-7), (rows 0-7, keys 8-15), (rows 8-15,
  // keys 8-15) = a0 .. a3; lane l gives the address of row l % 16 of matrix l / 8.
  const int lane = lane_id();
  const u32 addr = shared_address(base + L::offset(row0 + lane % 16, (key0 + 8 * (lane / 16)) * 2));
  PvA a;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(a.r[0]), "=r"(a.r[1]), "=r"(a.r[2]), "=r"(a.r[3])
               : "r"(addr));
  return a;
}

template <class L>
__device__ __forceinline__ PvB load_pv_b(const u8* base, int key0, int dim0) {
  // Matrices (keys 0-7, dims 0-7), (keys 8-15, dims 0-7), (keys 0-7, dims 8-15), (keys 8-15,
  // dims 8-15), each transposed on the way: b0, b1 of the first n8 tile, then of the second.
  const int lane = lane_id();
  const int key = key0 + lane % 8 + 8 * ((lane / 8) % 2);
  const u32 addr = shared_address(base + L::offset(key, (dim0 + 8 * (lane / 16)) * 2));
  PvB b;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(b.r[0]), "=r"(b.r[1]), "=r"(b.r[2]), "=r"(b.r[3])
               : "r"(addr));
  return b;
}

__device__ __forceinline__ void mma_pv(Acc16& acc, const PvA& a, const PvB& b) {
  mma_16816(acc.v, a.r[0], a.r[1], a.r[2], a.r[3], b.r[0], b.r[1]);
  mma_16816(acc.v + 4, a.r[0], a.r[1], a.r[2], a.r[3], b.r[2], b.r[3]);
}
#else
struct PvA {
  short4_t s;  // row lane % 16, keys 4 (lane / 16) .. + 3
};
struct PvB {
  short4_t s;  // keys 4 (lane / 16) .. + 3 of dim lane % 16
};

template <class L>
__device__ __forceinline__ PvA load_pv_a(const u8* base, int row0, int key0) {
  const int lane = lane_id();
  const u32* p = reinterpret_cast<const u32*>(base + L::offset(row0 + lane % 16, (key0 + 4 * (lane / 16)) * 2));
  return {as_short4(p[0], p[1])};
}

template <class L>
__device__ __forceinline__ PvB load_pv_b(const u8* base, int key0, int dim0) {
  // CDNA has no transposing LDS read: four 16-bit reads, one per key.
  const int lane = lane_id();
  const int key = key0 + 4 * (lane / 16);
  const int byte = (dim0 + lane % 16) * 2;
  PvB b;
#pragma unroll
  for (int j = 0; j < 4; ++j) b.s[j] = *reinterpret_cast<const short*>(base + L::offset(key + j, byte));
  return b;
}

__device__ __forceinline__ void mma_pv(Acc16& acc, const PvA& a, const PvB& b) { mfma_16x16x16(acc, a.s, b.s); }
#endif

}  // namespace mc
}  // namespace ktune
