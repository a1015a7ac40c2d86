#pragma once
// Tile geometry of the mla_decode kernel: thread layouts, shared-memory layout and the register
// arrays a thread keeps. Shared verbatim by the kernel template (rendered into the JIT source)
// and by the host (tuner/kernels/mla_decode/ includes this file), so that the shared-memory size
// the host launches with and the layout the kernel uses come from one definition.
// Plain C++14 constexpr code without headers, valid for hipRTC, NVRTC and the host compiler.

// NVRTC accepts no host-only functions, so the functions are __host__ __device__ there; the host
// compiler knows no such attributes.
#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__) || defined(__HIP_DEVICE_COMPILE__)
#define KTUNE_GEOMETRY_FN __host__ __device__ constexpr
#else
#define KTUNE_GEOMETRY_FN constexpr
#endif

namespace ktune {
namespace mla_tile {

constexpr int kHeadDim = 576;                  // q / k row: 512 latent dims + 64 rope dims
constexpr int kValueDim = 512;                 // V is the first 512 dims of the cached k row
constexpr int kVec = 8;                        // bf16 elements per 16-byte vector
constexpr int kSmemStride = kHeadDim + kVec;   // bf16 per shared q / k row (see k_offset)
constexpr int kValueVecs = kValueDim / kVec;   // threads that cover one output row, 8 dims each
constexpr int kMaxShuffleGroup = 32;           // the smaller warp of the two vendors

// Codes of the kv_dtype key field and template parameter.
constexpr int kKvBf16 = 0;
constexpr int kKvFp8E4m3fn = 1;
constexpr int kKvFp8E4m3fnuz = 2;
KTUNE_GEOMETRY_FN int kv_bytes(int kv_dtype) { return kv_dtype == kKvBf16 ? 2 : 1; }

KTUNE_GEOMETRY_FN int min_of(int a, int b) { return a < b ? a : b; }

// The wgmma path (MmaGeometry::qk_wgmma): products of 64 rows, two warpgroups of 4 warps of 32
// lanes; the first takes Q K^T over a whole tile of 32 or 64 keys, both take P V, 256 value dims
// each.
constexpr int kWgmmaRows = 64;
constexpr int kWarpgroupThreads = 4 * 32;
constexpr int kWgmmaThreads = 2 * kWarpgroupThreads;
// math = "wgmma" at kWgmmaThreads + kWarpgroupThreads threads: a third warpgroup, the producer,
// issues the ring's copies and signals each slot on an mbarrier, so that the two math warpgroups
// neither issue copies nor wait for a slot any longer than its data takes to land (copies issued
// by the math warps add to the math's time: experiments/2026-12-04-mla-decode-wgmma-split-time,
// experiments/2026-12-04-mla-decode-producer). setmaxnreg then moves registers from the producer,
// which needs few, to the math warpgroups: the block's 384 x 168 registers as 128 x 40 + 256 x 232.
constexpr int kProducerRegisters = 40;
constexpr int kMathRegisters = 232;
// math = "wgmma" at kWgmmaThreads + 2 * kWarpgroupThreads (MmaGeometry::softmax_warpgroup): the
// first warpgroup takes Q K^T and the softmax alone, a tile ahead of the next two, which take P V,
// so that the tile's chain of products runs as two overlapping halves; the last is the producer.
// (Its constants are MmaGeometry's functions: NVRTC emits every namespace-scope constant into the
// code objects, whose instances would then differ in their symbol tables.)
KTUNE_GEOMETRY_FN bool wgmma_keys(int keys) { return keys == 32 || keys == 64; }

// The matrix-core kernels' ring of shared-memory slots (MmaGeometry::ring_keys): a slot holds at
// most kRingSlotKeys keys, a larger tile takes several, and the ring has up to kMaxRingSlots.
constexpr int kRingSlotKeys = 32;
constexpr int kMaxRingSlots = 10;
KTUNE_GEOMETRY_FN int ceil_div(int a, int b) { return (a + b - 1) / b; }
KTUNE_GEOMETRY_FN bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

struct Geometry {
  int rows;      // query rows (h, l pairs) per CTA
  int keys;      // keys per KV tile
  int threads;   // threads per CTA
  int stages;    // 1: load then compute; 2: the next tile is fetched while this one is computed
  int kv_dtype;

  // Scores S = Q K^T: a score_row_threads x score_key_threads grid of threads over the tile.
  // Thread t owns rows t / score_key_threads() + i * score_row_threads() and keys
  // t % score_key_threads() + j * score_key_threads(): a micro-tile as square as the pair count
  // allows, so that each loaded q / k vector feeds several dot products.
  KTUNE_GEOMETRY_FN int score_pairs() const { return rows * keys / threads; }
  KTUNE_GEOMETRY_FN int score_keys_per_thread() const {
    int mk = 1;
    while (2 * mk <= keys && 4 * mk * mk <= score_pairs()) mk *= 2;
    return mk;
  }
  KTUNE_GEOMETRY_FN int score_rows_per_thread() const { return score_pairs() / score_keys_per_thread(); }
  KTUNE_GEOMETRY_FN int score_key_threads() const { return keys / score_keys_per_thread(); }
  KTUNE_GEOMETRY_FN int score_row_threads() const { return rows / score_rows_per_thread(); }

  // Online softmax: a group of softmax_group() consecutive lanes per row, reduced by shuffles;
  // several passes when there are fewer threads than rows.
  KTUNE_GEOMETRY_FN int softmax_group() const {
    return threads >= rows ? min_of(min_of(threads / rows, keys), kMaxShuffleGroup) : 1;
  }
  KTUNE_GEOMETRY_FN int softmax_rows_per_pass() const { return threads / softmax_group(); }
  KTUNE_GEOMETRY_FN int softmax_passes() const { return ceil_div(rows, softmax_rows_per_pass()); }

  // O += P V: kValueVecs threads per row, each owning 8 consecutive output dims; thread t owns
  // rows t / kValueVecs + i * value_row_threads(). The accumulators stay in registers.
  KTUNE_GEOMETRY_FN int value_row_threads() const { return threads / kValueVecs; }
  KTUNE_GEOMETRY_FN int value_rows_per_thread() const { return rows / value_row_threads(); }
  KTUNE_GEOMETRY_FN int accumulators() const { return value_rows_per_thread() * kVec; }

  // Global loads, in 16-byte vectors.
  KTUNE_GEOMETRY_FN int kv_vecs_per_row() const { return kHeadDim * kv_bytes(kv_dtype) / 16; }
  KTUNE_GEOMETRY_FN int kv_vecs_per_thread() const { return ceil_div(keys * kv_vecs_per_row(), threads); }
  KTUNE_GEOMETRY_FN int q_vecs_per_row() const { return kHeadDim / kVec; }
  KTUNE_GEOMETRY_FN int q_vecs_per_thread() const { return ceil_div(rows * q_vecs_per_row(), threads); }

  // Shared memory, in bytes: q tile (bf16), `stages` k tiles (bf16, fp8 decoded on the way in),
  // probabilities P (fp32), per-row running max, sum and rescale factor (fp32).
  // Rows are kSmemStride = 584 bf16 = 292 words apart: 292 = 4 (mod 32), so the 16-byte reads of
  // 8 different rows (one shared-memory wavefront) fall on distinct banks.
  KTUNE_GEOMETRY_FN int k_offset() const { return rows * kSmemStride * 2; }
  KTUNE_GEOMETRY_FN int k_stage_bytes() const { return keys * kSmemStride * 2; }
  KTUNE_GEOMETRY_FN int p_offset() const { return k_offset() + stages * k_stage_bytes(); }
  KTUNE_GEOMETRY_FN int p_stride() const { return keys + 1; }  // odd: a column of P spans all banks
  KTUNE_GEOMETRY_FN int stats_offset() const { return p_offset() + rows * p_stride() * 4; }
  KTUNE_GEOMETRY_FN int shared_bytes() const { return stats_offset() + 3 * rows * 4; }

  // 32-bit registers a thread keeps live through the tile loop: accumulators, its scores, the
  // prefetched tile (two stages), the q / k vectors of one dot-product step, plus addresses and
  // loop state. An estimate to prune configs that would spill; the compiler has the last word.
  KTUNE_GEOMETRY_FN int live_registers() const {
    return accumulators() + score_pairs() + (stages == 2 ? kv_vecs_per_thread() * 4 : 0) +
           (score_rows_per_thread() + score_keys_per_thread()) * 8 + 40;
  }

  // Layout conditions; the kernel static_asserts them and the host reports which one fails.
  KTUNE_GEOMETRY_FN bool scores_fit() const {
    return score_pairs() >= 1 && (rows * keys) % threads == 0 && score_rows_per_thread() <= rows &&
           score_row_threads() * score_key_threads() == threads;
  }
  KTUNE_GEOMETRY_FN bool values_fit() const {
    return threads % kValueVecs == 0 && value_row_threads() <= rows && rows % value_row_threads() == 0;
  }
  KTUNE_GEOMETRY_FN bool shape_ok() const {
    return is_pow2(rows) && is_pow2(keys) && is_pow2(threads) && (stages == 1 || stages == 2) &&
           kv_dtype >= kKvBf16 && kv_dtype <= kKvFp8E4m3fnuz;
  }
  KTUNE_GEOMETRY_FN bool valid() const { return shape_ok() && scores_fit() && values_fit(); }
};

// Geometry of the matrix-core kernel (mla_decode_mma.hip). The warp's matrix-core unit is a
// 16 x 16 block (templates/common/matrix_core.hpp): rows are padded to m-tiles of 16 and keys and
// value dims come in blocks of 16.
//   S = Q K^T: the first qk_warps() warps form a qk_row_warps x qk_key_warps grid over (m-tiles,
//     key blocks); each owns qk_m_tiles x qk_key_blocks accumulator blocks. Warps beyond the grid
//     (more warps than blocks: few rows and short tiles) sit Q K^T out.
//     With qk_wgmma (sm_90a), S comes from wgmma instead: the first warpgroup's 4 warps take all of
//     the tile's keys for all 64 rows (warp w holding m-tile w), in one product as wide as the tile,
//     since the tensor cores read q from shared memory once per product: two warpgroups with half
//     of the keys each would read it twice for the same work.
//   O = P V: warps split the 512 value dims (pv_blocks blocks of 16 each) and every warp covers all
//     rows, so that 16 rows x 512 dims of fp32 accumulators spread over the whole block. P crosses
//     from the key-split to the dim-split layout through shared memory. With qk_wgmma, each
//     warpgroup takes 256 dims (pv_m_tiles: 1, 16 blocks a warp) in one of two forms: O^T = V^T
//     P^T, four products of 64 dims x 64 rows per 16 keys, V^T from registers in fp16 and P^T from
//     shared memory (math = "wgmma"); or with pv_ss, O = P V, one product of 64 rows x 256 dims
//     per 16 keys and term of P, both read from shared memory (math = "wgmma_ss"; its warp w holds
//     m-tile w % 4). The first halves the products, the second spends no instruction on V; which
//     pays depends on the rows and keys (experiments/2026-12-03-mla-decode-fp16-p-b32).
// Shared memory does not depend on the warp size (launch_info has no target); registers do.
// The matrix-core kernel's variants (MmaGeometry::variant): what a config's math path, thread
// count and cache type select, named once for the kernel (mla_decode_mma.hip branches on it) and
// for the host (tuner/kernels/mla_decode/family.cpp).
enum class MmaVariant {
  kMma,            // math = "mma": mma.sync / MFMA, every warp copies and computes
  kWgmma,          // math = "wgmma" at 256 threads: two warpgroups copy and compute
  kWgmmaProducer,  // math = "wgmma" at 384 threads: two math warpgroups and a producer warpgroup
  kWgmmaSoftmax,   // math = "wgmma" at 512 threads: a softmax warpgroup, two P V warpgroups, a producer
  kWgmmaSs,        // math = "wgmma_ss": P V as O = P V, both operands from shared memory
};
// What a producer warpgroup does (MmaGeometry::producer_kind): copy the tiles into the ring, or
// copy fp8 codes and decode them into fp16 tiles (an fp8 cache on wgmma, MmaGeometry::decoded).
enum class MmaProducer { kNone, kCopies, kDecoding };

struct MmaGeometry {
  int rows;      // query rows per CTA, a multiple of 16
  int keys;      // keys per KV tile, a multiple of 16
  int threads;   // threads per CTA, the producer warpgroup's included
  int stages;    // slots of the shared-memory ring (ring_keys() keys each), 2 tiles' worth or more
  int kv_dtype;
  int warp;      // 32 (NVIDIA) or 64 (AMD CDNA)
  int qk_wgmma;  // 1: Q K^T on wgmma (math = "wgmma" or "wgmma_ss"), 0: on mma.sync / MFMA (math = "mma")
  int pv_ss;     // with qk_wgmma, 1: P V's operands both from shared memory (math = "wgmma_ss")

  // A producer warpgroup (math = "wgmma" at 384 threads, kMathRegisters): the last warpgroup,
  // which only copies; the math threads are the others, and everything below but the copies
  // counts them.
  KTUNE_GEOMETRY_FN bool producer() const {
    return qk_wgmma && !pv_ss && (threads == kWgmmaThreads + kWarpgroupThreads || softmax_warpgroup());
  }
  // With the producer, a fourth warpgroup (math = "wgmma" at 512 threads): the first math
  // warpgroup takes Q K^T and the softmax, the other two P V, 256 value dims each.
  KTUNE_GEOMETRY_FN bool softmax_warpgroup() const {
    return qk_wgmma && !pv_ss && threads == kWgmmaThreads + 2 * kWarpgroupThreads;
  }
  // The variant these fields select, named from producer() and softmax_warpgroup(), which read
  // the thread count. (Those two stay as they are: the kernel reaches them at run time through
  // functions such as qk_m_tile_of, and a change to their code changes the kernels' code:
  // experiments/2026-12-07-mla-decode-variant-split.)
  KTUNE_GEOMETRY_FN MmaVariant variant() const {
    return !qk_wgmma            ? MmaVariant::kMma
           : pv_ss               ? MmaVariant::kWgmmaSs
           : softmax_warpgroup() ? MmaVariant::kWgmmaSoftmax
           : producer()          ? MmaVariant::kWgmmaProducer
                                 : MmaVariant::kWgmma;
  }
  KTUNE_GEOMETRY_FN MmaProducer producer_kind() const {
    return !producer() ? MmaProducer::kNone : decoded() ? MmaProducer::kDecoding : MmaProducer::kCopies;
  }
  KTUNE_GEOMETRY_FN int math_threads() const {
    return producer() ? kWgmmaThreads + (softmax_warpgroup() ? kWarpgroupThreads : 0) : threads;
  }
  // setmaxnreg's counts for the producer, the softmax warpgroup and the P V warpgroups, whose sum
  // stays within the block's file (128 x (32 + 80 + 2 x 200) = 65536 at 64 keys): the splits at
  // which ptxas 13.0 allocates the instances without spills (with 64 keys it spills 28 bytes at the
  // 32-key split, and 16 with 32 keys at the 64-key one). A producer that decodes (decoded()) takes
  // more from the math warpgroups: 56 against 2 x 224 at 384 threads; at 512, 40 and the softmax
  // warpgroup 72 against 2 x 200 (32 and 80 also went without; with the P V warpgroups at 192 every
  // split of the rest spilled 4 to 8 bytes, producer 40 to 64 and softmax 64 to 88; 48 and 64 beside
  // 200, 4 to 20).
  KTUNE_GEOMETRY_FN int softmax_registers() const { return decoded() ? 72 : 80; }
  KTUNE_GEOMETRY_FN int producer_registers() const {
    return decoded() ? (softmax_warpgroup() ? 40 : 56) : softmax_warpgroup() && keys == 64 ? 32 : kProducerRegisters;
  }
  KTUNE_GEOMETRY_FN int value_registers() const {
    return softmax_warpgroup() ? (keys == 64 || decoded() ? 200 : 192) : decoded() ? 224 : kMathRegisters;
  }
  KTUNE_GEOMETRY_FN int copy_threads() const { return producer() ? kWarpgroupThreads : threads; }
  KTUNE_GEOMETRY_FN int m_tiles() const { return rows / 16; }
  KTUNE_GEOMETRY_FN int key_blocks() const { return keys / 16; }
  KTUNE_GEOMETRY_FN int warps() const { return math_threads() / warp; }
  KTUNE_GEOMETRY_FN int qk_key_warps() const { return qk_wgmma ? 1 : min_of(warps(), key_blocks()); }
  KTUNE_GEOMETRY_FN int qk_row_warps() const { return min_of(warps() / qk_key_warps(), m_tiles()); }
  KTUNE_GEOMETRY_FN int qk_warps() const { return qk_key_warps() * qk_row_warps(); }
  KTUNE_GEOMETRY_FN int qk_m_tiles() const { return m_tiles() / qk_row_warps(); }
  KTUNE_GEOMETRY_FN int qk_key_blocks() const { return key_blocks() / qk_key_warps(); }
  // Warp w's column (share of the keys) and first m-tile in the Q K^T grid. (wgmma: one column of 4
  // warps, the first warpgroup, one m-tile each.)
  KTUNE_GEOMETRY_FN int qk_key_warp_of(int w) const { return w % qk_key_warps(); }
  KTUNE_GEOMETRY_FN int qk_m_tile_of(int w) const { return (w / qk_key_warps()) * qk_m_tiles(); }
  // P V: its warps (all math warps but a softmax warpgroup's), the m-tiles of a warp's O rows,
  // and its blocks of 16 value dims.
  KTUNE_GEOMETRY_FN int pv_warps() const { return softmax_warpgroup() ? warps() - 4 : warps(); }
  KTUNE_GEOMETRY_FN int pv_m_tiles() const { return qk_wgmma ? 1 : m_tiles(); }
  KTUNE_GEOMETRY_FN int pv_blocks() const { return kValueDim / 16 / (qk_wgmma ? pv_warps() / 4 : pv_warps()); }
  // Independent accumulator chains per S block in Q K^T. A warp with one or two S blocks would
  // wait out the matrix core's latency at each of its 36 dependent steps; three chains (both the
  // 18 bf16 and the 9 fp8 steps divide by 3) keep several in flight.
  // (Where the O accumulators already take a quarter of the registers, the S blocks get one chain.)
  // (wgmma keeps its own chain of products in flight: one chain.)
  KTUNE_GEOMETRY_FN int qk_chains() const {
    return !qk_wgmma && qk_m_tiles() * qk_key_blocks() <= 2 && accumulators() <= 64 ? 3 : 1;
  }
  KTUNE_GEOMETRY_FN int lane_acc() const { return 256 / warp; }   // fp32 per lane of a 16 x 16 block
  KTUNE_GEOMETRY_FN int accumulators() const { return pv_m_tiles() * pv_blocks() * lane_acc(); }
  KTUNE_GEOMETRY_FN int s_accumulators() const { return qk_chains() * qk_m_tiles() * qk_key_blocks() * lane_acc(); }
  // Whether Q K^T's loop over the 576 dims unrolls fully, which turns the operands' addresses into
  // immediates (mc layouts) but keeps more of them live, or by 2. Fully where the O and S
  // accumulators leave room: NVRTC 13.0 for sm_90a then spills in none of the rows x keys x
  // threads instances that do not spill unrolled by 2, and fully unrolled with more accumulators
  // spills in most; the fp8 path's decode needs more room (fully unrolled at 88 accumulators, fp8
  // rows=16 keys=32 threads=128 takes 252 registers, no spill, and runs slower).
  KTUNE_GEOMETRY_FN bool qk_unrolled() const { return accumulators() + s_accumulators() <= (fp8() ? 64 : 96); }

  // Shared memory, in bytes: the q tile (bf16 queries; fp16, pre-scaled, on the fp8 path) has rows
  // of 1152 bytes with XOR-swizzled 16-byte chunks (mc::SwizzledRows); the ring's slots hold KV rows
  // as they are in memory: bf16 rows like the q tile, or fp8 codes in rows padded to 640
  // bytes (mc::CodeRows), which the matrix-core operands decode in registers; on wgmma, fp16 rows
  // decoded from the code slots after the ring (decoded(), above). P (one 16-bit matrix
  // per term) has rows padded by 16 bytes; for wgmma, rows of keys x 2 bytes in wgmma's swizzle
  // (wg::KMajorRows), and only the first term has its own: wgmma_ss's second goes into the tile's
  // rope panel (dims 512 .. 575, keys x 128 bytes, as many), which Q K^T has read and P V does not.
  // With a softmax warpgroup, P of every tile goes into its rope panel, whose 64 rows x keys x 2
  // bytes is exactly P's 64 x keys in fp16, so there is no sP.
  // Then one fp32 per (key block, row) for the cross-warp row reductions, and with a producer
  // two mbarriers per ring slot: full (its copies landed) and empty (its last reader is done);
  // with a softmax warpgroup also a rescale record per slot before them and a third mbarrier, ready
  // (the slot's P and record are written). The record is the softmax warpgroup's word to the P V
  // warpgroups about a tile: the factor by which each of the 64 rows' O is rescaled, then one byte
  // per softmax warp, nonzero where one of its rows moved its maximum; padded to 16 bytes.
  // An fp8 cache on wgmma (decoded()): wgmma reads B from shared memory only, so the producer
  // decodes each slot's codes once for the CTA's 64 rows into an fp16 tile in the ring (as a bf16
  // tile lies), from a ring of its own, code_slots() slots of code rows after the ring, which its
  // copies fill: the copies stay in flight while the decode runs, and each code is decoded once
  // per 64 rows where math = "wgmma_t" decodes it per 16 or 32 (its A operands).
  KTUNE_GEOMETRY_FN bool fp8() const { return kv_dtype != kKvBf16; }
  KTUNE_GEOMETRY_FN bool decoded() const { return fp8() && qk_wgmma; }
  KTUNE_GEOMETRY_FN int tile_row_bytes() const { return kHeadDim * 2; }
  KTUNE_GEOMETRY_FN int raw_row_bytes() const { return kHeadDim * kv_bytes(kv_dtype); }
  KTUNE_GEOMETRY_FN int code_row_bytes() const { return 640; }
  KTUNE_GEOMETRY_FN int ring_row_bytes() const { return fp8() && !decoded() ? code_row_bytes() : tile_row_bytes(); }
  KTUNE_GEOMETRY_FN int ring_offset() const { return rows * tile_row_bytes(); }
  // The ring: `stages` slots of ring_keys() keys; tile t takes tile_slots() consecutive slots
  // (mod stages), and the copies run stages - 2 tile_slots() slots ahead of the tile in compute.
  // Slots smaller than a tile let a ring hold a fractional number of tiles: rows = 16 with 64-key
  // tiles fits 5 slots of 32 keys (1.5 tiles in flight during compute) where 3 whole tiles do not
  // fit. wgmma reads a warpgroup's keys as one operand of panels, so its slot is the whole tile.
  KTUNE_GEOMETRY_FN int ring_keys() const { return qk_wgmma ? keys : min_of(keys, kRingSlotKeys); }
  KTUNE_GEOMETRY_FN int tile_slots() const { return keys / ring_keys(); }
  KTUNE_GEOMETRY_FN int stage_bytes() const { return ring_keys() * ring_row_bytes(); }
  KTUNE_GEOMETRY_FN int code_slots() const { return decoded() ? 2 : 0; }
  KTUNE_GEOMETRY_FN int code_offset() const { return ring_offset() + stages * stage_bytes(); }
  KTUNE_GEOMETRY_FN int code_stage_bytes() const { return ring_keys() * code_row_bytes(); }
  KTUNE_GEOMETRY_FN int p_stride() const { return qk_wgmma ? keys * 2 : keys * 2 + 16; }
  // P's terms (docs/kernels/mla_decode.md, number formats): two bf16 terms where P V meets bf16 V, one
  // fp16 term where it meets fp16 V (decoded fp8, or bf16 converted on wgmma's way).
  KTUNE_GEOMETRY_FN int p_terms() const { return fp8() || (qk_wgmma && !pv_ss) ? 1 : 2; }
  KTUNE_GEOMETRY_FN int p_term_bytes() const { return rows * p_stride(); }
  KTUNE_GEOMETRY_FN int p_offset() const { return code_offset() + code_slots() * code_stage_bytes(); }
  KTUNE_GEOMETRY_FN int p_bytes() const {
    return softmax_warpgroup() ? 0 : (qk_wgmma ? 1 : p_terms()) * p_term_bytes();
  }
  KTUNE_GEOMETRY_FN int reduce_offset() const { return p_offset() + p_bytes(); }
  KTUNE_GEOMETRY_FN int record_offset() const { return reduce_offset() + key_blocks() * rows * 4; }
  KTUNE_GEOMETRY_FN int record_bytes() const { return (kWgmmaRows + 4) * 4; }
  KTUNE_GEOMETRY_FN int barrier_offset() const {
    return record_offset() + (softmax_warpgroup() ? stages * record_bytes() : 0);
  }
  KTUNE_GEOMETRY_FN int shared_bytes() const {
    return barrier_offset() + (producer() ? (softmax_warpgroup() ? 3 : 2) * stages * 8 : 0);
  }

  // Copies, in 16-byte chunks, one ring slot at a time: a group of copy_threads_per_key() threads
  // moves one key row (9 chunks each, 128 or 64 contiguous bytes per group and instruction), so
  // that each thread looks up a page once per key rather than once per chunk.
  KTUNE_GEOMETRY_FN int chunks_per_row() const { return raw_row_bytes() / 16; }
  KTUNE_GEOMETRY_FN int copy_threads_per_key() const { return chunks_per_row() / 9; }
  KTUNE_GEOMETRY_FN int copy_keys_per_pass() const { return copy_threads() / copy_threads_per_key(); }
  KTUNE_GEOMETRY_FN int copy_passes() const { return ceil_div(ring_keys(), copy_keys_per_pass()); }
  KTUNE_GEOMETRY_FN int q_chunks_per_thread() const { return ceil_div(rows * (kHeadDim * 2 / 16), math_threads()); }

  // 32-bit registers a thread keeps live in the tile loop: O accumulators, S blocks (in
  // qk_chains() chains), one step's Q K^T operands (32 dims, 1 KiB per 16 rows or keys per warp;
  // fp8 keys also as codes), the P V operands (P of every m-tile; bf16: one V block; fp8: 32 dims
  // of V as codes and decoded),
  // running max / rescale / sum per lane row, addresses and loop state. (With a softmax warpgroup,
  // the P V warpgroups' count, the larger: O but no S blocks.) An estimate to prune configs that
  // would spill; the compiler has the last word.
  KTUNE_GEOMETRY_FN int live_registers() const {
    const int qk_operands =
        qk_wgmma ? 0 : (qk_m_tiles() + qk_key_blocks()) * 256 / warp + (fp8() ? 128 / warp : 0);
    const int pv_operands = qk_wgmma ? 0 : (m_tiles() * p_terms() * 128 + (fp8() ? 384 : 128)) / warp;
    const int stats = 3 * m_tiles() * (warp / 16);
    return accumulators() + (softmax_warpgroup() ? 0 : s_accumulators()) + qk_operands + pv_operands + stats + 40;
  }

  // Layout conditions; the kernel static_asserts them and the host reports which one fails.
  KTUNE_GEOMETRY_FN bool shape_ok() const {
    return is_pow2(rows) && rows >= 16 && is_pow2(keys) && keys >= 16 &&
           (is_pow2(math_threads()) || softmax_warpgroup()) &&
           stages >= 2 * tile_slots() && stages <= kMaxRingSlots && kv_dtype >= kKvBf16 &&
           kv_dtype <= kKvFp8E4m3fnuz && (warp == 32 || warp == 64) && threads >= warp;
  }
  // The fp8 path's P V step covers two 16-dim blocks.
  KTUNE_GEOMETRY_FN bool values_fit() const {
    return kValueDim % (16 * pv_warps()) == 0 && (!fp8() || pv_blocks() % 2 == 0);
  }
  KTUNE_GEOMETRY_FN bool copies_fit() const { return copy_keys_per_pass() >= 1; }
  // wgmma's products are 64 rows by 32 or 64 keys (Q K^T) and 64 rows by 256 dims (P V), two P V
  // warpgroups (and with O^T = V^T P^T optionally the producer, or the producer and a softmax
  // warpgroup), bf16 operands, or fp16 ones decoded from an fp8 cache by the producer, which that
  // takes (decoded()). (Its tiles' panels and P start on 1024-byte boundaries: rows x 1152, keys x
  // 1152 and keys x 640 bytes are multiples of 1024 for these sizes.) pv_ss is a form of wgmma's P V.
  KTUNE_GEOMETRY_FN bool wgmma_fits() const {
    return qk_wgmma ? rows == kWgmmaRows && pv_warps() * warp == kWgmmaThreads && warp == 32 && wgmma_keys(keys) &&
                          (!fp8() || producer())
                    : !pv_ss;
  }
  KTUNE_GEOMETRY_FN bool valid() const { return shape_ok() && values_fit() && copies_fit() && wgmma_fits(); }
};

// Geometry of the transposed kernel (mla_decode_transposed.hip, math = "wgmma_t", sm_90a, fp8
// caches): both products with the keys or the value dims as wgmma's 64 rows and the CTA's query
// rows as its N, S^T = K Q^T and O^T = V^T P^T, so that few query rows (a decode step's 16 heads)
// still fill whole products and each fp8 code is decoded once per product straight into the
// A registers. Each warpgroup streams its own tiles (every warpgroups()-th tile of the CTA's keys)
// through its own ring; the warpgroups meet only in the q tile and, at the end, in one merge.
// N is 16 or 32 query rows: at 32 a code's decode serves twice the rows (the CTAs of a request
// read and decode its cache half as often) and the O^T accumulators take 128 registers a thread
// (64 would take all 255), which leaves too few for the producer's split: 32 rows run without one.
KTUNE_GEOMETRY_FN bool transposed_rows(int rows) { return rows == 16 || rows == 32; }
constexpr int kTransposedKeys = 64;   // M of S^T: keys per tile
constexpr int kTransposedProducerRows = 16;  // the N whose accumulators leave room for a producer
struct TransposedGeometry {
  int rows;
  int keys;
  int threads;  // one or two math warpgroups, or two and a producer (producer())
  int stages;   // ring slots per warpgroup, one tile each
  int kv_dtype;

  // At kWgmmaThreads + kWarpgroupThreads a third warpgroup, the producer, fills both math
  // warpgroups' rings (as MmaGeometry::producer does for math = "wgmma").
  KTUNE_GEOMETRY_FN bool producer() const { return threads == kWgmmaThreads + kWarpgroupThreads; }
  KTUNE_GEOMETRY_FN int warpgroups() const {  // the math warpgroups
    return (producer() ? kWgmmaThreads : threads) / kWarpgroupThreads;
  }
  // Shared memory, in bytes: the q tile in fp16 (rows x 576, panels of 64 dims in wgmma's
  // 128-byte swizzle: the B of S^T = K Q^T), then per warpgroup its ring (stages tiles of 576-byte
  // code rows, 16-byte chunks swizzled: TransposedCodes), P^T (rows x keys fp16, the B of O^T =
  // V^T P^T) and its row maxima (4 warps x rows fp32), then the row sums (4 warps
  // x rows per warpgroup) and the other warpgroups' maxima for the merge; with a producer, two
  // mbarriers per ring slot (full, empty).
  KTUNE_GEOMETRY_FN int q_bytes() const { return rows * kHeadDim * 2; }
  KTUNE_GEOMETRY_FN int stage_bytes() const { return keys * kHeadDim; }
  KTUNE_GEOMETRY_FN int ring_offset(int wg) const { return q_bytes() + wg * stages * stage_bytes(); }
  KTUNE_GEOMETRY_FN int p_bytes() const { return rows * keys * 2; }
  KTUNE_GEOMETRY_FN int p_offset(int wg) const { return ring_offset(warpgroups()) + wg * p_bytes(); }
  KTUNE_GEOMETRY_FN int max_offset(int wg) const { return p_offset(warpgroups()) + wg * 4 * rows * 4; }
  KTUNE_GEOMETRY_FN int sum_offset() const { return max_offset(warpgroups()); }
  KTUNE_GEOMETRY_FN int merge_max_offset() const { return sum_offset() + warpgroups() * 4 * rows * 4; }
  KTUNE_GEOMETRY_FN int barrier_offset() const { return merge_max_offset() + warpgroups() * rows * 4; }
  KTUNE_GEOMETRY_FN int shared_bytes() const {
    return barrier_offset() + (producer() ? 2 * warpgroups() * stages * 8 : 0);
  }
  // A warpgroup's O^T accumulators (8 products of 64 dims x rows) staged for the merge in its own
  // ring, which the last tile has left by then.
  KTUNE_GEOMETRY_FN int merge_bytes() const { return kValueDim * rows * 4; }

  KTUNE_GEOMETRY_FN bool valid() const {
    return transposed_rows(rows) && keys == kTransposedKeys &&
           (threads == kWarpgroupThreads || threads == kWgmmaThreads || (producer() && rows == kTransposedProducerRows)) &&
           stages >= 2 && stages <= kMaxRingSlots && kv_dtype != kKvBf16 && kv_dtype <= kKvFp8E4m3fnuz &&
           stages * stage_bytes() >= merge_bytes();
  }
};

// math = "mfma_native" on an fp8 cache (mla_decode_mma.hip, mma/mfma_native.hpp): Q K^T on the
// fp8 MFMA, whose A operand is fp8 too, so each query row r is scaled by a power of two s_r and
// split into two fp8 terms of the cache's format, hi = fp8(q s_r) and lo = fp8(q s_r - hi), which
// hold a bf16 query exactly (8 significant bits: hi takes 4, the remainder is at most half of hi's
// step and a multiple of q's last bit, so 4 more suffice) wherever lo stays above the format's
// smallest step. s_r takes the row's largest |q| into [64, 128): below both formats' largest
// values (448, 240), and lo's steps reach 2^-9 (fn) or 2^-10 (fnuz), so only elements below 2^-2
// or 2^-3 after scaling can lose bits, by at most half that step. Both functions read the row's largest
// magnitude as bf16 bits (exponent field bits 7..14) and return fp32 bits: the scale s_r and its
// inverse, which the kernel multiplies into the row's score scale. (Clamped so that both stay
// normal floats: rows whose largest |q| is below 2^-120, all-zero padding rows among them, keep
// s_r = 2^126.) The host's emulation of the path (tests/unit/mla_native_fp8_numbers_test.cpp)
// quantizes with the same functions.
KTUNE_GEOMETRY_FN unsigned query_exponent(unsigned bf16_abs_max) {
  return (bf16_abs_max >> 7) < 7u ? 7u : (bf16_abs_max >> 7) > 254u ? 254u : bf16_abs_max >> 7;
}
KTUNE_GEOMETRY_FN unsigned query_scale_bits(unsigned bf16_abs_max) {
  return (260u - query_exponent(bf16_abs_max)) << 23;
}
KTUNE_GEOMETRY_FN unsigned query_unscale_bits(unsigned bf16_abs_max) {
  return (query_exponent(bf16_abs_max) - 6u) << 23;
}

}  // namespace mla_tile
}  // namespace ktune
