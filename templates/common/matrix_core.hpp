#pragma once
// Warp-level matrix-core operations for ktune's kernel templates, one implementation per vendor
// behind one interface, so that a kernel's structure is written once:
//   NVIDIA (sm_80+): mma.sync m16n8k16 bf16 -> fp32, operands from shared memory through 16-byte
//                    loads and ldmatrix (.trans for row-major B);
//   AMD CDNA (gfx90a+): v_mfma_f32_16x16x16bf16_1k, operands through ds_read.
// fp8 operands (K and V of an fp8 KV cache) stay fp8 codes in shared memory and are decoded to
// fp16 in registers on their way to the matrix cores (m16n8k16 f16 / v_mfma_f32_16x16x16f16),
// which then meet fp16 queries and softmax weights.
// The unit of work is a 16 x 16 accumulator block (Acc16) held by one warp; which lane holds which
// element differs per vendor and is exposed through acc_row / acc_col / lane_row / row_slot, so
// that a kernel can mask, reduce and store accumulators without knowing the layout.
//
// Shared-memory matrices are addressed through a layout type L with
//   __device__ static u32 offset(int row, int byte)   // byte offset of (row, byte within the row)
//   __device__ static u32 offset(int row, int lane_byte, int step_byte)   // the same at lane_byte + step_byte
// (see SwizzledRows / CodeRows below), so that the caller chooses padding or swizzling. The
// operand loads of Q K^T use the second form: step_byte (known at compile time once the caller's
// loop over the 576 dims unrolls) shares no bit with lane_byte (the lane's share, below the step's
// alignment: 32 or 64 bytes), so a swizzle that XORs bits 4..6 splits into step_byte's 128-byte
// group, which becomes the load's immediate, and a few XOR values a lane computes once. (With byte = their sum the
// compiler recomputed the XOR, the row's offset and the sum at every load: 5 instructions per
// ldmatrix, two thirds of the Q K^T loop's.)
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
  __device__ __forceinline__ static int swizzle(int row) {
    const int r = row & 7;
    return (((r & 1) << 2) | (r >> 1)) << 4;
  }
  __device__ __forceinline__ static u32 offset(int row, int byte) {
    return static_cast<u32>(row * ROW_BYTES + (byte ^ swizzle(row)));
  }
  __device__ __forceinline__ static u32 offset(int row, int lane_byte, int step_byte) {
    return static_cast<u32>(row * ROW_BYTES + (step_byte & ~127) + ((step_byte & 127) ^ lane_byte ^ swizzle(row)));
  }
};

// Rows STRIDE bytes apart, unswizzled; STRIDE = 16 (mod 32) keeps 8 rows of a 16-byte column on
// distinct banks.
template <int STRIDE>
struct PaddedRows {
  __device__ __forceinline__ static u32 offset(int row, int byte) { return static_cast<u32>(row * STRIDE + byte); }
};

// Rows of fp8 codes, ROW_BYTES apart (a multiple of 128: the 576-byte cache row is padded to 640),
// 16-byte chunks XOR-swizzled by chunk_xor(row) = 2 ((row >> 1) & 3) ^ 4 (row & 1), so that 4 rows
// reading 32 contiguous bytes each fall on distinct banks in both fp8 operand patterns: 4
// consecutive rows (load_qk_b8, per half warp: bits 1..2 differ within each aligned group of 4)
// and 4 rows of one parity, 2 apart (load_pv_b8: bits 1..2 differ).
template <int ROW_BYTES>
struct CodeRows {
  static_assert(ROW_BYTES % 128 == 0, "swizzled code rows are whole 128-byte groups");
  __device__ __forceinline__ static int chunk_xor(int row) { return (((row >> 1) & 3) << 1) ^ ((row & 1) << 2); }
  __device__ __forceinline__ static u32 offset(int row, int byte) {
    return static_cast<u32>(row * ROW_BYTES + (byte ^ (chunk_xor(row) << 4)));
  }
  __device__ __forceinline__ static u32 offset(int row, int lane_byte, int step_byte) {
    return static_cast<u32>(row * ROW_BYTES + (step_byte & ~127) +
                            ((step_byte & 127) ^ lane_byte ^ (chunk_xor(row) << 4)));
  }
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
// Q K^T operands: 16 rows (A) or 16 keys (B) x 32 reduction dims, both row-major in shared memory
// (load_qk_a, load_qk_b, mma_qk). NVIDIA reads them with ldmatrix, which hands each lane its
// fragment registers in the order mma.sync takes them (16-byte loads of rows g and g + 8 would
// need 4 register moves per product to interleave them); AMD reads 16 contiguous bytes (8 dims)
// per lane, which is its fragment order. The fp8 path's A is the same QkA over the fp16 query
// tile that store_q16 lays out for the decoded keys (below).

#if defined(KTUNE_CUDA)
__device__ __forceinline__ u32 shared_address(const void* p) { return static_cast<u32>(__cvta_generic_to_shared(p)); }

// Four 8 x 8 matrices of 16-bit elements: lane l gives the address of row l % 8 of matrix l / 8
// and receives, per matrix, the pair at row l / 4, cols 2 (l % 4) .. + 1.
__device__ __forceinline__ u32x4 ldmatrix_x4(const u8* row_of_lane) {
  u32x4 r;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "r"(shared_address(row_of_lane)));
  return r;
}

struct QkA {
  u32x4 step[2];  // a0 .. a3 of dims 0..15, then of dims 16..31
};
struct QkB {
  u32x4 step[2];  // per 16 dims: b0, b1 of keys 0..7, then b0, b1 of keys 8..15
};

template <class L>
__device__ __forceinline__ QkA load_qk_a(const u8* base, int row0, int dim0) {
  // Matrices (rows 0-7, dims 0-7), (rows 8-15, dims 0-7), (rows 0-7, dims 8-15), (rows 8-15, dims 8-15).
  const int lane = lane_id();
  const int row = row0 + lane % 16;
  const int lane_byte = 16 * (lane / 16);
  return {{ldmatrix_x4(base + L::offset(row, lane_byte, dim0 * 2)),
           ldmatrix_x4(base + L::offset(row, lane_byte, dim0 * 2 + 32))}};
}

template <class L>
__device__ __forceinline__ QkB load_qk_b(const u8* base, int key0, int dim0) {
  // Matrices (keys 0-7, dims 0-7), (keys 0-7, dims 8-15), (keys 8-15, dims 0-7), (keys 8-15, dims 8-15):
  // a key's row of dims is a column of B, as mma.sync's .col B wants it.
  const int lane = lane_id();
  const int key = key0 + lane % 8 + 8 * (lane / 16);
  const int lane_byte = 16 * (lane / 8 % 2);
  return {{ldmatrix_x4(base + L::offset(key, lane_byte, dim0 * 2)),
           ldmatrix_x4(base + L::offset(key, lane_byte, dim0 * 2 + 32))}};
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
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    const u32x4& x = a.step[s];
    mma_16816(acc.v, x.x, x.y, x.z, x.w, b.step[s].x, b.step[s].y);
    mma_16816(acc.v + 4, x.x, x.y, x.z, x.w, b.step[s].z, b.step[s].w);
  }
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
  return {load16(base + L::offset(row0 + lane % 16, 16 * (lane / 16), dim0 * 2))};
}

template <class L>
__device__ __forceinline__ QkB load_qk_b(const u8* base, int key0, int dim0) {
  const int lane = lane_id();
  return {load16(base + L::offset(key0 + lane % 16, 16 * (lane / 16), dim0 * 2))};
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
// P V operands: A = 16 rows x 16 keys of a row-major 16-bit matrix (P), B = 16 keys x 16 dims of a
// row-major bf16 matrix (V: the keys' rows, so B is read transposed). P is a bf16 term and V meets
// it as the tile holds it (mma_pv; docs/kernels/mla_decode.md, number formats).

#if defined(KTUNE_CUDA)
struct PvA {
  u32 r[4];
};
struct PvB {
  u32 r[4];  // two n8 tiles: r[0], r[1] dims 0..7; r[2], r[3] dims 8..15
};

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

// d += a b for one m16n8k16 fp16 step.
__device__ __forceinline__ void mma_16816_f16(float* d, u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// acc += P V in bf16: a bf16 term of P times a V block as the tile holds it.
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

typedef _Float16 half4_t __attribute__((ext_vector_type(4)));

__device__ __forceinline__ half4_t as_half4(u32 lo, u32 hi) { return __builtin_bit_cast(half4_t, u32x2{lo, hi}); }

__device__ __forceinline__ void mfma_16x16x16_f16(Acc16& acc, half4_t a, half4_t b) {
  float4_t c;
  c[0] = acc.v[0], c[1] = acc.v[1], c[2] = acc.v[2], c[3] = acc.v[3];
  c = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0);
  acc.v[0] = c[0], acc.v[1] = c[1], acc.v[2] = c[2], acc.v[3] = c[3];
}

// acc += P V in bf16: a bf16 term of P times a V block as the tile holds it.
__device__ __forceinline__ void mma_pv(Acc16& acc, const PvA& a, const PvB& b) { mfma_16x16x16(acc, a.s, b.s); }
#endif

// ---------------------------------------------------------------------------------------------
// fp8 operands, decoded to fp16 in registers. DECODE is a type with
//   __device__ static u32x2 quad(u32 word)   // codes 0, 1 of `word` -> .x, codes 2, 3 -> .y, fp16x2
//
// Q K^T: B = 16 fp8 keys x 32 dims (CodeRows), 8 codes (8 consecutive dims) per lane and key, which
// decode() turns into a QkB16 in fp16 and mma_qk_f16 feeds to two k-steps: the dims meet the
// matrix core in a permuted order. store_q16 writes the fp16 query tile in the same order, so
// that load_qk_a reads A to match (a dot product does not depend on the order of its terms).
//
// P V with fp8 V, 32 value dims (two 16 x 16 accumulator blocks) a step: A = P (load_pv_a), B = 16
// keys x 32 dims of codes. NVIDIA: a lane reads one 32-bit word (4 dims) of 4 keys and
// byte-permutes pairs of keys into the B fragments of 4 n8 tiles, so n8 tile t, column n holds
// dim 4 n + t of the step; pv8_dim() maps accumulator elements back to dims. AMD: one byte per key
// and block, in the order of the bf16 path.

#if defined(KTUNE_CUDA)
struct QkB8 {
  u32x2 k0, k1;  // codes of keys g and g + 8, dims 8 c .. + 7
};

template <class L>
__device__ __forceinline__ QkB8 load_qk_b8(const u8* base, int key0, int dim0) {
  const int lane = lane_id();
  const int lane_byte = 8 * (lane % 4);
  return {load8(base + L::offset(key0 + lane / 4, lane_byte, dim0)),
          load8(base + L::offset(key0 + lane / 4 + 8, lane_byte, dim0))};
}

struct QkB16 {
  u32x4 k0, k1;  // keys g and g + 8, dims 8 c .. + 7
};

template <class DECODE>
__device__ __forceinline__ QkB16 decode(const QkB8& b) {
  const u32x2 a = DECODE::quad(b.k0.x), c = DECODE::quad(b.k0.y), d = DECODE::quad(b.k1.x), e = DECODE::quad(b.k1.y);
  return {{a.x, a.y, c.x, c.y}, {d.x, d.y, e.x, e.y}};
}

// k-step s takes words 2 s, 2 s + 1 of each key's 8 decoded dims: lane 4 g + c pairs dims
// 8 c + 4 s + {0, 1} (logical k 2 c, 2 c + 1) and 8 c + 4 s + {2, 3} (logical k 2 c + 8, + 9).
__device__ __forceinline__ void mma_qk_f16(Acc16& acc, const QkA& a, const QkB16& b) {
  const u32x4 &s0 = a.step[0], &s1 = a.step[1];
  mma_16816_f16(acc.v, s0.x, s0.y, s0.z, s0.w, b.k0.x, b.k0.y);
  mma_16816_f16(acc.v, s1.x, s1.y, s1.z, s1.w, b.k0.z, b.k0.w);
  mma_16816_f16(acc.v + 4, s0.x, s0.y, s0.z, s0.w, b.k1.x, b.k1.y);
  mma_16816_f16(acc.v + 4, s1.x, s1.y, s1.z, s1.w, b.k1.z, b.k1.w);
}

// 32 dims of a query row (f: floats in dim order) as fp16 at logical positions 0..31 of the
// row's 32-dim step at dim0, where load_qk_a reads k-step s = position / 16: position
// 16 s + 8 h + 2 c + e holds dim 8 c + 4 s + 2 h + e, the dim mma_qk_f16 pairs with it.
template <class L>
__device__ __forceinline__ void store_q16(u8* base, int row, int dim0, const float (&f)[32]) {
#pragma unroll
  for (int chunk = 0; chunk < 4; ++chunk) {
    u32 w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int p = chunk * 8 + i * 2;  // positions p, p + 1
      const int s = p / 16, h = p % 16 / 8, c = p % 8 / 2;
      const int dim = 8 * c + 4 * s + 2 * h;
      w[i] = pack_f16x2(f[dim], f[dim + 1]);
    }
    store16(base + L::offset(row, dim0 * 2 + chunk * 16), u32x4{w[0], w[1], w[2], w[3]});
  }
}

struct PvB8 {
  u32 w[4];  // dims 4 g .. 4 g + 3 of keys 2 c, 2 c + 1, 2 c + 8, 2 c + 9
};
struct PvB16 {
  u32 b[4][2];  // n8 tile t: b0, b1 (fp16 pairs)
};

template <class L>
__device__ __forceinline__ PvB8 load_pv_b8(const u8* base, int key0, int dim0) {
  const int lane = lane_id();
  const int key = key0 + 2 * (lane % 4);
  const int byte = dim0 + 4 * (lane / 4);
  return {{*reinterpret_cast<const u32*>(base + L::offset(key, byte)),
           *reinterpret_cast<const u32*>(base + L::offset(key + 1, byte)),
           *reinterpret_cast<const u32*>(base + L::offset(key + 8, byte)),
           *reinterpret_cast<const u32*>(base + L::offset(key + 9, byte))}};
}

template <class DECODE>
__device__ __forceinline__ PvB16 decode(const PvB8& v) {
  PvB16 d;
#pragma unroll
  for (int t = 0; t < 4; t += 2) {
    // Tile t's pair (byte t of the first key's word, then of the next key's) in the low half,
    // tile t + 1's in the high half: one byte permute feeds two tiles.
    const u32 select = static_cast<u32>(t | (t + 4) << 4 | (t + 1) << 8 | (t + 5) << 12);
    const u32x2 k01 = DECODE::quad(__byte_perm(v.w[0], v.w[1], select));
    const u32x2 k89 = DECODE::quad(__byte_perm(v.w[2], v.w[3], select));
    d.b[t][0] = k01.x, d.b[t + 1][0] = k01.y, d.b[t][1] = k89.x, d.b[t + 1][1] = k89.y;
  }
  return d;
}

// lo += P V (dims of n8 tiles 0, 1), hi += P V (tiles 2, 3).
__device__ __forceinline__ void mma_pv16(Acc16& lo, Acc16& hi, const PvA& a, const PvB16& b) {
  mma_16816_f16(lo.v, a.r[0], a.r[1], a.r[2], a.r[3], b.b[0][0], b.b[0][1]);
  mma_16816_f16(lo.v + 4, a.r[0], a.r[1], a.r[2], a.r[3], b.b[1][0], b.b[1][1]);
  mma_16816_f16(hi.v, a.r[0], a.r[1], a.r[2], a.r[3], b.b[2][0], b.b[2][1]);
  mma_16816_f16(hi.v + 4, a.r[0], a.r[1], a.r[2], a.r[3], b.b[3][0], b.b[3][1]);
}

// The value dim of accumulator element e of block `half` (0: lo, 1: hi) of the step at dim0.
__device__ __forceinline__ int pv8_dim(int dim0, int half, int e) {
  return dim0 + 4 * acc_col(e % 4) + 2 * half + e / 4;
}
#else
struct QkB8 {
  u32x2 k;  // codes of key lane % 16, dims 8 (lane / 16) .. + 7
};

template <class L>
__device__ __forceinline__ QkB8 load_qk_b8(const u8* base, int key0, int dim0) {
  const int lane = lane_id();
  return {load8(base + L::offset(key0 + lane % 16, 8 * (lane / 16), dim0))};
}

typedef QkB QkB16;
template <class DECODE>
__device__ __forceinline__ QkB16 decode(const QkB8& b) {
  const u32x2 lo = DECODE::quad(b.k.x), hi = DECODE::quad(b.k.y);
  return {{lo.x, lo.y, hi.x, hi.y}};
}

__device__ __forceinline__ void mma_qk_f16(Acc16& acc, const QkA& a, const QkB16& b) {
  mfma_16x16x16_f16(acc, as_half4(a.x.x, a.x.y), as_half4(b.x.x, b.x.y));
  mfma_16x16x16_f16(acc, as_half4(a.x.z, a.x.w), as_half4(b.x.z, b.x.w));
}

// 32 dims of a query row (f: floats in dim order) as fp16 in dim order, load_qk_a's order here.
template <class L>
__device__ __forceinline__ void store_q16(u8* base, int row, int dim0, const float (&f)[32]) {
#pragma unroll
  for (int chunk = 0; chunk < 4; ++chunk) {
    const float* x = f + chunk * 8;
    store16(base + L::offset(row, dim0 * 2 + chunk * 16), u32x4{pack_f16x2(x[0], x[1]), pack_f16x2(x[2], x[3]),
                                                                pack_f16x2(x[4], x[5]), pack_f16x2(x[6], x[7])});
  }
}

struct PvB8 {
  u32 c[2];  // block h: the codes of keys 4 (lane / 16) .. + 3 at dim 16 h + lane % 16
};
struct PvB16 {
  u32 b[2][2];
};

template <class L>
__device__ __forceinline__ PvB8 load_pv_b8(const u8* base, int key0, int dim0) {
  // CDNA has no transposing LDS read: one byte per key.
  const int lane = lane_id();
  const int key = key0 + 4 * (lane / 16);
  PvB8 v;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int byte = dim0 + 16 * h + lane % 16;
    v.c[h] = 0u;
#pragma unroll
    for (int j = 0; j < 4; ++j) v.c[h] |= static_cast<u32>(base[L::offset(key + j, byte)]) << (8 * j);
  }
  return v;
}

template <class DECODE>
__device__ __forceinline__ PvB16 decode(const PvB8& v) {
  PvB16 d;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const u32x2 k = DECODE::quad(v.c[h]);
    d.b[h][0] = k.x, d.b[h][1] = k.y;
  }
  return d;
}

__device__ __forceinline__ void mma_pv16(Acc16& lo, Acc16& hi, const PvA& a, const PvB16& b) {
  const half4_t pa = __builtin_bit_cast(half4_t, a.s);
  mfma_16x16x16_f16(lo, pa, as_half4(b.b[0][0], b.b[0][1]));
  mfma_16x16x16_f16(hi, pa, as_half4(b.b[1][0], b.b[1][1]));
}

__device__ __forceinline__ int pv8_dim(int dim0, int half, int e) { return dim0 + 16 * half + acc_col(e); }
#endif

}  // namespace mc
}  // namespace ktune
