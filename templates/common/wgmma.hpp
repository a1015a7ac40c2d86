#pragma once
// Hopper's warpgroup matrix multiply (wgmma.mma_async, sm_90a): four warps issue one
// m64nNk16 product whose operands the tensor cores read from shared memory themselves (A may
// also come from the warps' registers).
// Where mma.sync makes every warp load its own copy of each operand fragment, a warpgroup reads
// each operand once, and at Hopper's full matrix rate.
//
//   PanelRows<ROWS>          the shared-memory layout wgmma reads (all targets: it is only
//                            arithmetic, and the mma.sync loads of matrix_core.hpp read it too)
//   KMajorRows<ROW_BYTES>    a matrix of 64- or 128-byte rows in the swizzle of that width: an A
//                            operand whose reduction dim is one such row
//   require_swizzle_alignment(p)
//                            traps unless p (the start of the tiles) lies on a 1024-byte boundary
//                            of shared memory, where wgmma's swizzle is anchored
//   proxy_fence()            makes this thread's shared-memory writes (stores, cp.async) visible
//                            to the tensor cores' reads; a barrier then publishes them to all
//                            (a no-op where there are no such reads)
//   start_product<N, DIMS, A_ROWS, B_ROWS, F16>(d, a, b)
//                            issues d = A B^T in fp32 for one warpgroup: A = the 64 rows of a
//                            PanelRows<A_ROWS> matrix at a, B = N rows of a PanelRows<B_ROWS>
//                            matrix at b (a multiple of 8 rows into its panels), DIMS bf16 (F16:
//                            fp16) dims each; d is 64 x N, spread as N / 16 mc::Acc16 blocks per
//                            warp (warp w of the group: rows 16 w .. 16 w + 15). The tensor cores
//                            work on it while the warps go on with anything that leaves d alone ...
//   finish_product(d)        ... until this, which waits for it
//   start_accumulation<K, A_ROW_BYTES, B_PANEL_BYTES>(d, a, b)
//                            issues d += A B in fp32 for one warpgroup, both operands in bf16
//                            from shared memory: d 64 x 256 (16 mc::Acc16 blocks per warp, as
//                            above), A = K dims of each term's 64 rows in KMajorRows<A_ROW_BYTES>
//                            (a[0], a[1], .. : the products of all terms add up), B = K rows of
//                            256 dims read transposed (N-major) from PanelRows panels B_PANEL_BYTES
//                            apart, starting at b; finish_product waits for it
//   load_transposed_f16<L, F16>(a, base, row0, col0)
//                            a = the A fragment (mma.sync m16n8k16 layout) of 16 x 16 of the
//                            transpose of a bf16 matrix in layout L, rows row0 .., cols col0 ..,
//                            converted to fp16 (bf16x2_to_f16x2; F16: of an fp16 matrix, as it is)
//   accumulate_transposed<K, B_ROW_BYTES>(d, load_a, b)
//                            d += A B in fp32 for one warpgroup, in fp16, and waits for it: d is
//                            256 x 64 as four 64 x 64 products (16 mc::Acc16 blocks per warp, block
//                            4 m + j: rows 64 m + 16 w .., cols 16 j ..), A = 256 x K from registers,
//                            load_a(step, m, a) filling warp w's fragment of rows 64 m + 16 w ..
//                            and k 16 step .. (the mma.sync m16n8k16 A layout), B = K x 64 read
//                            K-major from KMajorRows<B_ROW_BYTES> at b (its 64 rows are B's cols)
//   RegisterProducts<N>      products of 64 x N issued one by one, A from registers (as above)
//                            and B = N rows of a K-major matrix in 128-byte swizzled rows, for
//                            kernels that decode A on its way: fence() once the A registers or d
//                            were written, accumulate(d, a, b, byte) per product, commit() after
//                            a group, wait<P>() until at most P groups run, settle(x) after it
//   sync<THREADS>(id)        a barrier of THREADS threads (a warpgroup) on named barrier id (1..15)
//   sync_any<THREADS>(id, p) the same barrier, which also returns whether p held in any of them
//   warp_any(p)              whether p holds in any lane of the caller's warp (all lanes call it)
//   warpgroup_index<THREADS>()
//                            threadIdx.x / THREADS as a value the compiler knows to be the same in
//                            the whole warp, so that what is computed from it (wgmma's shared-memory
//                            descriptors) may live in uniform registers instead of being moved
//                            there before every product
// Only sm_90a has wgmma (__CUDA_ARCH_FEAT_SM90_ALL). Elsewhere product() exists only to be named:
// instantiating it is a compile error, and the families prune the configs that would.
#include "common/matrix_core.hpp"
#include "common/prelude.hpp"

namespace ktune {
namespace wg {

// Rows of a matrix with 64 bf16 (128 bytes) of its reduction dim per row, cut into panels of 64
// dims: byte b of row r lies in panel b / 128, which holds all ROWS rows, 128 bytes apart. Within
// the panel, 16-byte chunk c of row r sits at chunk c ^ (r % 8): wgmma's 128-byte swizzle, which
// it applies to bits 4..6 of the address from bits 7..9, so panels start on 1024-byte boundaries.
// The swizzle also keeps 8 consecutive rows reading one chunk (ldmatrix) on distinct banks.
template <int ROWS>
struct PanelRows {
  static_assert(ROWS % 8 == 0, "a panel holds whole groups of 8 rows");
  static constexpr int kPanelBytes = ROWS * 128;
  __device__ __forceinline__ static u32 offset(int row, int byte) {
    return static_cast<u32>((byte >> 7) * kPanelBytes + row * 128 + ((byte & 127) ^ ((row & 7) << 4)));
  }
};

// Rows of ROW_BYTES (64 or 128) bytes, 16-byte chunks XOR-swizzled as wgmma reads them in the
// swizzle mode of that width: address bits 4.. take bits 7.. (ROW_BYTES / 16 chunks per row), so
// that 8 rows of one chunk lie on distinct banks. Whole matrices start on 1024-byte boundaries.
template <int ROW_BYTES>
struct KMajorRows {
  static_assert(ROW_BYTES == 64 || ROW_BYTES == 128, "wgmma swizzles rows of 64 or 128 bytes");
  __device__ __forceinline__ static u32 offset(int row, int byte) {
    const u32 a = static_cast<u32>(row * ROW_BYTES + byte);
    return a ^ (((a >> 7) & (ROW_BYTES / 16 - 1)) << 4);
  }
};

#if defined(KTUNE_CUDA) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void require_swizzle_alignment(const void* p) {
  if (static_cast<u32>(__cvta_generic_to_shared(p)) % 1024 != 0) __trap();
}
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

namespace detail {

// Descriptor of an operand in shared memory. The start address field holds bits 4..17 of the
// shared address, so a later step adds its byte offset / 16 to the descriptor.
//   k_major<ROW_BYTES>: rows of ROW_BYTES (PanelRows: 128; KMajorRows), the matrix starting at a
//     row (a multiple of 8) and at a 16-dim step within the row (32 bytes); 8-row groups are
//     8 ROW_BYTES apart (the stride dimension offset), the leading dimension offset is unused with
//     swizzling (1), and the swizzle mode is the rows' (1: 128 bytes, 2: 64 bytes).
//   n_major<PANEL_BYTES>: B read transposed from PanelRows: its K rows are the panel's rows (128
//     bytes apart, 8-row groups 1024 apart: the stride dimension offset) and its N dims run 64 per
//     panel, panels PANEL_BYTES apart (the leading dimension offset); 128-byte swizzle.
struct Desc {
  u64 bits;
  __device__ __forceinline__ static u64 address(const void* smem) {
    return (static_cast<u32>(__cvta_generic_to_shared(smem)) & 0x3ffffu) >> 4;
  }
  template <int ROW_BYTES = 128>
  __device__ __forceinline__ static Desc k_major(const void* smem) {
    constexpr u64 mode = ROW_BYTES == 128 ? 1 : 2;
    return {address(smem) | (1ull << 16) | (static_cast<u64>(8 * ROW_BYTES >> 4) << 32) | (mode << 62)};
  }
  template <int PANEL_BYTES>
  __device__ __forceinline__ static Desc n_major(const void* smem) {
    return {address(smem) | (static_cast<u64>(PANEL_BYTES >> 4) << 16) | (static_cast<u64>(1024 >> 4) << 32) |
            (1ull << 62)};
  }
  __device__ __forceinline__ Desc plus(u32 bytes) const { return {bits + (bytes >> 4)}; }
};

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// The compiler must neither read nor move accumulators between a product's issue and its wait,
// nor reuse the registers of an A operand before the products reading them finished: these empty
// statements claim to read and write each one after the wait.
template <int BLOCKS>
__device__ __forceinline__ void settle(mc::Acc16 (&d)[BLOCKS]) {
#pragma unroll
  for (int b = 0; b < BLOCKS; ++b)
#pragma unroll
    for (int e = 0; e < 8; ++e) asm volatile("" : "+f"(d[b].v[e])::"memory");
}
template <int N>
__device__ __forceinline__ void settle(u32 (&a)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(a[i][e])::"memory");
}

// d (64 x N) = A B (+ d when `accumulate`) in bf16 (mma_f16: fp16), both from shared memory: A
// K-major, B K-major or, with B_N_MAJOR, N-major (read transposed). The accumulator of m64nNk16
// holds, per warp of the group, 16 rows x N cols in n8 tiles: lane 4 g + c holds rows g and g + 8
// at cols 2 c, 2 c + 1 of each tile, the mma.sync C layout, so that tiles 2 j and 2 j + 1 are
// exactly mc::Acc16 block j (v[0..3], v[4..7]).
template <int N, bool B_N_MAJOR = false>
__device__ __forceinline__ void mma_bf16(mc::Acc16 (&d)[N / 16], Desc a, Desc b, bool accumulate);
template <int N, bool B_N_MAJOR = false>
__device__ __forceinline__ void mma_f16(mc::Acc16 (&d)[N / 16], Desc a, Desc b, bool accumulate);

#define KTUNE_WG_ACC(b)                                                                                   \
  "+f"(d[b].v[0]), "+f"(d[b].v[1]), "+f"(d[b].v[2]), "+f"(d[b].v[3]), "+f"(d[b].v[4]), "+f"(d[b].v[5]), \
      "+f"(d[b].v[6]), "+f"(d[b].v[7])

// The K-major products of 32 and 64 cols, as NAME<N> for one element TYPE.
#define KTUNE_WG_SS_K_MAJOR(NAME, TYPE)                                                                        \
  template <>                                                                                                  \
  __device__ __forceinline__ void NAME<32, false>(mc::Acc16(&d)[2], Desc a, Desc b, bool accumulate) {    \
    asm volatile(                                                                                              \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"                                                          \
        "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {"                                       \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "                              \
        "%16, %17, p, 1, 1, 0, 0;\n}\n"                                                                        \
        : KTUNE_WG_ACC(0), KTUNE_WG_ACC(1)                                                                     \
        : "l"(a.bits), "l"(b.bits), "r"(accumulate ? 1 : 0));                                                  \
  }                                                                                                            \
  template <>                                                                                                  \
  __device__ __forceinline__ void NAME<64, false>(mc::Acc16(&d)[4], Desc a, Desc b, bool accumulate) {    \
    asm volatile(                                                                                              \
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                          \
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {"                                       \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                               \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "                    \
        "%32, %33, p, 1, 1, 0, 0;\n}\n"                                                                        \
        : KTUNE_WG_ACC(0), KTUNE_WG_ACC(1), KTUNE_WG_ACC(2), KTUNE_WG_ACC(3)                                   \
        : "l"(a.bits), "l"(b.bits), "r"(accumulate ? 1 : 0));                                                  \
  }
KTUNE_WG_SS_K_MAJOR(mma_bf16, "bf16")
KTUNE_WG_SS_K_MAJOR(mma_f16, "f16")
#undef KTUNE_WG_SS_K_MAJOR

template <>
__device__ __forceinline__ void mma_bf16<256, true>(mc::Acc16 (&d)[16], Desc a, Desc b, bool accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, p, 1, 1, 0, 1;\n}\n"
      : KTUNE_WG_ACC(0), KTUNE_WG_ACC(1), KTUNE_WG_ACC(2), KTUNE_WG_ACC(3),
        KTUNE_WG_ACC(4), KTUNE_WG_ACC(5), KTUNE_WG_ACC(6), KTUNE_WG_ACC(7),
        KTUNE_WG_ACC(8), KTUNE_WG_ACC(9), KTUNE_WG_ACC(10), KTUNE_WG_ACC(11),
        KTUNE_WG_ACC(12), KTUNE_WG_ACC(13), KTUNE_WG_ACC(14), KTUNE_WG_ACC(15)
      : "l"(a.bits), "l"(b.bits), "r"(accumulate ? 1 : 0));
}

// d (64 x N: the N / 16 mc::Acc16 blocks from d on, per warp) += A B in fp16 with A from
// registers: per warp, 16 of the 64 rows x 16 k in the mma.sync m16n8k16 A layout (a[0]: row g,
// k 2c, 2c + 1; a[1]: row g + 8; a[2], a[3]: the same rows at k + 8), and B K-major in shared
// memory.
template <int N>
__device__ __forceinline__ void mma_f16_registers(mc::Acc16* d, const u32 (&a)[4], Desc b);

template <>
__device__ __forceinline__ void mma_f16_registers<16>(mc::Acc16* d, const u32 (&a)[4], Desc b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0, %1, %2, %3, %4, %5, %6, %7}, "
      "{%8, %9, %10, %11}, %12, 1, 1, 1, 0;\n"
      : KTUNE_WG_ACC(0)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b.bits));
}

template <>
__device__ __forceinline__ void mma_f16_registers<32>(mc::Acc16* d, const u32 (&a)[4], Desc b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, %20, 1, 1, 1, 0;\n"
      : KTUNE_WG_ACC(0), KTUNE_WG_ACC(1)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b.bits));
}

template <>
__device__ __forceinline__ void mma_f16_registers<64>(mc::Acc16* d, const u32 (&a)[4], Desc b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, 1, 1, 1, 0;\n"
      : KTUNE_WG_ACC(0), KTUNE_WG_ACC(1), KTUNE_WG_ACC(2), KTUNE_WG_ACC(3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b.bits));
}

#undef KTUNE_WG_ACC

}  // namespace detail

template <int N>
struct RegisterProducts {
  static_assert(N == 16 || N == 32, "RegisterProducts: n16 and n32 only");
  __device__ __forceinline__ static void fence() { detail::fence(); }
  __device__ __forceinline__ static void commit() { detail::commit(); }
  template <int PENDING>
  __device__ __forceinline__ static void wait() {
    detail::wait<PENDING>();
  }
  // d: the N / 16 accumulator blocks from d on. B: N rows of 128 bytes from `rows` (a 1024-byte
  // boundary), 8-row groups 1024 bytes apart; the product's 16 k start `byte` bytes on (a multiple
  // of 32; whole 1024-byte panels allowed).
  __device__ __forceinline__ static void accumulate(mc::Acc16* d, const u32 (&a)[4], const u8* rows, u32 byte) {
    detail::mma_f16_registers<N>(d, a, detail::Desc::k_major(rows).plus(byte));
  }
  template <int BLOCKS>
  __device__ __forceinline__ static void settle(mc::Acc16 (&d)[BLOCKS]) {
    detail::settle(d);
  }
  template <int SETS>
  __device__ __forceinline__ static void settle(u32 (&a)[SETS][4]) {
    detail::settle(a);
  }
};

template <int THREADS>
__device__ __forceinline__ void sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}
template <int THREADS>
__device__ __forceinline__ bool sync_any(int id, bool p) {
  u32 any;
  asm volatile(
      "{\n.reg .pred p, q;\nsetp.ne.u32 p, %1, 0;\nbar.red.or.pred q, %2, %3, p;\nselp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(any)
      : "r"(static_cast<u32>(p)), "r"(id), "n"(THREADS)
      : "memory");
  return any != 0;
}
__device__ __forceinline__ bool warp_any(bool p) { return __any_sync(0xffffffffu, p) != 0; }
template <int THREADS>
__device__ __forceinline__ int warpgroup_index() {
  // A broadcast from lane 0: the compiler treats its result as warp-uniform.
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / THREADS, 0);
}

template <int N, int DIMS, int A_ROWS, int B_ROWS, bool F16>
__device__ __forceinline__ void start_product(mc::Acc16 (&d)[N / 16], const u8* a, const u8* b) {
  static_assert(DIMS % 64 == 0, "whole panels of 64 dims");
  const detail::Desc da = detail::Desc::k_major(a), db = detail::Desc::k_major(b);
  detail::fence();  // d was read and written by ordinary instructions since the last product
#pragma unroll
  for (int step = 0; step < DIMS / 16; ++step) {
    const u32 within = (step % 4) * 32;  // 16 dims = 32 bytes into the 128-byte panel row
    const detail::Desc sa = da.plus((step / 4) * PanelRows<A_ROWS>::kPanelBytes + within);
    const detail::Desc sb = db.plus((step / 4) * PanelRows<B_ROWS>::kPanelBytes + within);
    if constexpr (F16)
      detail::mma_f16<N>(d, sa, sb, step > 0);
    else
      detail::mma_bf16<N>(d, sa, sb, step > 0);
  }
  detail::commit();
}

template <int K, int A_ROW_BYTES, int B_PANEL_BYTES, int TERMS>
__device__ __forceinline__ void start_accumulation(mc::Acc16 (&d)[16], const u8* const (&a)[TERMS], const u8* b) {
  static_assert(K % 16 == 0 && K * 2 <= A_ROW_BYTES, "steps of 16 within an A row");
  const detail::Desc db = detail::Desc::n_major<B_PANEL_BYTES>(b);
  detail::fence();  // d was rescaled by ordinary instructions since the last product
#pragma unroll
  for (int step = 0; step < K / 16; ++step)
#pragma unroll
    for (int term = 0; term < TERMS; ++term)  // 16 rows of B = 2 groups of 8: 2048 bytes
      detail::mma_bf16<256, true>(d, detail::Desc::k_major<A_ROW_BYTES>(a[term]).plus(step * 32),
                                  db.plus(step * 2048), true);
  detail::commit();
}

template <int BLOCKS>
__device__ __forceinline__ void finish_product(mc::Acc16 (&d)[BLOCKS]) {
  detail::wait<0>();
  detail::settle(d);
}

template <class L, bool F16>
__device__ __forceinline__ void load_transposed_f16(u32 (&a)[4], const u8* base, int row0, int col0) {
  // mma.sync's B of rows row0 .. (k) and cols col0 .. (n) is this A, its registers in the order
  // (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15); A takes (m = n 0-7, k 0-7),
  // (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15).
  const mc::PvB b = mc::load_pv_b<L>(base, row0, col0);
  const int order[4] = {0, 2, 1, 3};
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = F16 ? b.r[order[i]] : bf16x2_to_f16x2(b.r[order[i]]);
}

template <int K, int B_ROW_BYTES, class LoadA>
__device__ __forceinline__ void accumulate_transposed(mc::Acc16 (&d)[16], LoadA load_a, const u8* b) {
  static_assert(K % 16 == 0 && K * 2 <= B_ROW_BYTES, "steps of 16 within a B row");
  const detail::Desc db = detail::Desc::k_major<B_ROW_BYTES>(b);
  // Two sets of A registers: step s + 1's are loaded while step s's products run, and a set is
  // reused only once the products that read it two steps earlier are done (wait<1>).
  u32 a[2][4][4];
#pragma unroll
  for (int step = 0; step < K / 16; ++step) {
    u32(&set)[4][4] = a[step % 2];
    if (step >= 2) {
      detail::wait<1>();
      detail::settle(set);
    }
#pragma unroll
    for (int m = 0; m < 4; ++m) load_a(step, m, set[m]);
    detail::fence();  // the A registers, and d (rescaled by ordinary instructions before step 0)
#pragma unroll
    for (int m = 0; m < 4; ++m) detail::mma_f16_registers<64>(d + 4 * m, set[m], db.plus(step * 32));
    detail::commit();
  }
  detail::wait<0>();
  detail::settle(d);
  detail::settle(a[0]);
  detail::settle(a[1]);
}

#else

__device__ __forceinline__ void require_swizzle_alignment(const void*) {}
__device__ __forceinline__ void proxy_fence() {}

template <int N>
struct Unavailable {
  static constexpr bool kValue = false;
};
template <int N, int DIMS, int A_ROWS, int B_ROWS, bool F16>
__device__ void start_product(mc::Acc16 (&)[N / 16], const u8*, const u8*) {
  static_assert(Unavailable<N>::kValue, "wgmma is sm_90a's (math=wgmma is pruned for other targets)");
}
template <int K, int A_ROW_BYTES, int B_PANEL_BYTES, int TERMS>
__device__ void start_accumulation(mc::Acc16 (&)[16], const u8* const (&)[TERMS], const u8*) {
  static_assert(Unavailable<K>::kValue, "wgmma is sm_90a's");
}
template <int BLOCKS>
__device__ void finish_product(mc::Acc16 (&)[BLOCKS]) {
  static_assert(Unavailable<BLOCKS>::kValue, "wgmma is sm_90a's");
}
template <class L, bool F16>
__device__ void load_transposed_f16(u32 (&)[4], const u8*, int, int) {
  static_assert(Unavailable<sizeof(L)>::kValue, "wgmma is sm_90a's");
}
template <int K, int B_ROW_BYTES, class LoadA>
__device__ void accumulate_transposed(mc::Acc16 (&)[16], LoadA, const u8*) {
  static_assert(Unavailable<K>::kValue, "wgmma is sm_90a's");
}
template <int N>
struct RegisterProducts {
  static_assert(Unavailable<N>::kValue, "wgmma is sm_90a's");
};
template <int THREADS>
__device__ void sync(int) {
  static_assert(Unavailable<THREADS>::kValue, "named warpgroup barriers are used with wgmma, sm_90a's");
}
template <int THREADS>
__device__ bool sync_any(int, bool) {
  static_assert(Unavailable<THREADS>::kValue, "named warpgroup barriers are used with wgmma, sm_90a's");
  return false;
}
__device__ bool warp_any(bool p);  // (named only in branches that other targets never instantiate)
template <int THREADS>
__device__ int warpgroup_index() {
  static_assert(Unavailable<THREADS>::kValue, "warpgroups are wgmma's, sm_90a's");
  return 0;
}

#endif

}  // namespace wg
}  // namespace ktune
