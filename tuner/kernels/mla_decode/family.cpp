#include "kernels/mla_decode/family.hpp"

#include <algorithm>
#include <bit>
#include <initializer_list>

#include <fmt/format.h>

#include "bench/rotations.hpp"
#include "common/seed.hpp"
#include "kernels/mfma_formats.hpp"
#include "kernels/mla_decode/equivalent_templates.hpp"
#include "kernels/mla_decode/geometry.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/instance.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune::mla {
namespace {

bool one_of(int v, std::initializer_list<int> allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

// Live registers (Geometry::live_registers) may take this share of a thread's budget; the rest is
// the compiler's. Calibrated on ptxas (sm_90a) and hipRTC (gfx90a) register reports of the
// SIMT kernel: beyond it, compiles start to spill. The matrix-core kernel's estimate
// (MmaGeometry::live_registers) already holds its slack: ptxas reports of sm_90a instances land
// at 0.9 to 1.1 times it, without spills up to the full budget (e.g. rows=64 keys=32 threads=256:
// estimate 252, ptxas 247 to 253 registers, no spill).
constexpr int kRegisterSharePercent = 90;
constexpr int kMmaRegisterSharePercent = 100;

// "mma" or "wgmma": the path a reason is about, as the space files spell it.
std::string math_name(const Config& c) {
  for (const auto& f : config_fields())
    if (f.name == "math") return f.format(c.math);
  return std::to_string(c.math);
}

// `budget`: registers a thread may have, registers_per_thread_budget's unless the kernel moves
// them between warpgroups itself.
std::optional<std::string> register_excess(int live, int share_percent, const Config& c, const TargetLimits& target,
                                           int64_t budget) {
  if (live * 100 <= budget * share_percent) return std::nullopt;
  return fmt::format("keeps about {} registers per thread live (accumulators, scores, operands); {} allows {} "
                     "at threads={}, of which ktune plans with {}%",
                     live, target.arch, budget, c.threads, share_percent);
}

int64_t registers_per_thread_budget(const Config& c, const TargetLimits& target) {
  return std::min<int64_t>(target.registers_per_thread_max, target.registers_per_block / c.threads);
}

std::optional<std::string> shared_excess(int bytes, const TargetLimits& target) {
  if (bytes <= target.shared_per_block) return std::nullopt;
  return fmt::format("needs {} bytes of shared memory, {} allows {}", bytes, target.arch, target.shared_per_block);
}

std::optional<std::string> simt_infeasible(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  if (!one_of(c.stages, {1, 2}))
    return fmt::format("stages={}: math=simt has 1 or 2 (a deeper ring is mma's)", c.stages);
  const mla_tile::Geometry g = geometry(c, kv_dtype);
  if (!g.scores_fit())
    return fmt::format("rows x keys = {} scores do not spread evenly over threads={}", c.rows * c.keys, c.threads);
  if (!g.values_fit())
    return fmt::format("threads={} cover {} output rows at a time, more than rows={}", c.threads,
                       c.threads / mla_tile::kValueVecs, c.rows);
  if (auto why = shared_excess(g.shared_bytes(), target)) return why;
  return register_excess(g.live_registers(), kRegisterSharePercent, c, target, registers_per_thread_budget(c, target));
}

// How many CTAs of a matrix-core config a compute unit holds at once (the kernels' launch bounds
// ask for one, so ptxas may take every register a thread can have).
int64_t resident_ctas(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  return resident_blocks(target, shared_bytes(c, kv_dtype), c.threads);
}

// Configs of the matrix-core kernels that fit but cannot beat a sibling that also fits, with as
// many CTAs per compute unit: pruned so that sweeps and the compile check (which compiles every
// instance of the default space) spend no time on them.
std::optional<std::string> mma_cannot_win(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  const int64_t resident = resident_ctas(c, kv_dtype, target);
  const auto beats = [&](const Config& other) {
    return shared_bytes(other, kv_dtype) <= target.shared_per_block &&
           resident_ctas(other, kv_dtype, target) >= resident;
  };
  const std::string math = math_name(c);
  // A ring of 2 tiles of 32 keys holds the bytes of 4 tiles of 16 keys with half the barriers per
  // key and twice the warps in Q K^T.
  Config wider = c;
  wider.keys = 32, wider.stages = 2;
  if (c.keys == 16 && beats(wider))
    return fmt::format("math={}: keys=16 where a ring of 2 tiles of 32 keys fits {} (same bytes, half the barriers)",
                       math, target.arch);
  // The ring is what hides the memory latency: a shallower one than fits keeps fewer bytes in
  // flight, unless the deeper one would leave room for fewer CTAs per compute unit: the deepest
  // ring that lets two CTAs share one holds their two rings in flight. (Two CTAs of shallow rings
  // per SM beat one CTA of a deep ring on many keys: experiments/2026-12-02-mla-decode-two-ctas.)
  Config deeper = c;
  deeper.stages = c.stages + 1;
  if (c.stages < mla_tile::kMaxRingSlots && beats(deeper))
    return fmt::format("math={}: a ring of {} slots fits {} as many times per compute unit and keeps more bytes "
                       "in flight",
                       math, deeper.stages, target.arch);
  if (c.math == kMathWgmmaT) return std::nullopt;  // every warp takes part in both of its products
  const mla_tile::MmaGeometry g = mma_geometry(c, kv_dtype, target.warp_size);
  // (The P V warpgroups beside a softmax warpgroup sit Q K^T out by design: it runs a tile ahead.)
  if (g.variant() == mla_tile::MmaVariant::kWgmmaSoftmax) return std::nullopt;
  // Warps beyond the Q K^T grid idle through it. (More warps otherwise pay: they keep more loads
  // in flight.)
  if (2 * g.qk_warps() < g.warps())
    return fmt::format("math={}: {} of {} warps would sit Q K^T out (rows={} x keys={} has {} blocks of 16)", math,
                       g.warps() - g.qk_warps(), g.warps(), c.rows, c.keys, g.m_tiles() * g.key_blocks());
  return std::nullopt;
}

// Hopper's warpgroup products (wgmma) take 64 rows per product and read their operands from
// shared memory as they lie; the kernel gives the first warpgroup Q K^T over a whole tile and each
// warpgroup P V over half of the 512 value dims (both forms of P V, wgmma and wgmma_ss).
std::optional<std::string> wgmma_unrunnable(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  const std::string math = math_name(c);
  if (!target.warpgroup_mma)
    return fmt::format("math={} needs sm_90a's warpgroup products, which {} lacks", math, target.arch);
  // Only math=wgmma has a producer warpgroup (384 threads, 512 with a softmax warpgroup), and an
  // fp8 cache needs it: it decodes the tiles into fp16.
  const bool producer = mma_geometry(c, kv_dtype, target.warp_size).producer();
  if (kv_dtype != num::KvDtype::bf16 && !producer)
    return fmt::format("math={} reads K as the cache holds it at threads={}, so bf16 only (an fp8 cache takes "
                       "math=wgmma at {} or {} threads, whose producer warpgroup decodes its tiles)",
                       math, c.threads, kWgmmaProducerThreads, kWgmmaSoftmaxThreads);
  if (c.rows != mla_tile::kWgmmaRows)
    return fmt::format("rows={}: math={}'s products have {} rows", c.rows, math, mla_tile::kWgmmaRows);
  if (c.threads != mla_tile::kWgmmaThreads && !producer)
    return fmt::format("threads={}: math={} runs two math warpgroups ({} threads){}", c.threads, math,
                       mla_tile::kWgmmaThreads,
                       c.math == kMathWgmma ? fmt::format(", or {} with a producer warpgroup, or {} with a producer "
                                                          "and a softmax warpgroup",
                                                          kWgmmaProducerThreads, kWgmmaSoftmaxThreads)
                                            : "");
  if (!mla_tile::wgmma_keys(c.keys)) return fmt::format("keys={}: math={} takes 32 or 64 keys per tile", c.keys, math);
  return std::nullopt;
}

// The transposed kernel (math=wgmma_t, mla_decode_transposed.hip): Hopper's warpgroup products
// with the keys and value dims as their 64 rows and 16 or 32 query rows as their N, fp8 codes decoded
// into their A registers; one or two warpgroups, each with its own ring of 64-key tiles, and at
// 384 threads (16 rows) a producer warpgroup that fills both. (No register estimate: with CUDA
// 13.0's ptxas the default space's 16-row instances take 236 to 244 registers without spills, with
// the producer the math warpgroups' 232, also without (tests/compile/mla_decode_compile_test.cpp);
// the 32-row ones 255, without spills but for fp8_e4m3fnuz causal: 4 bytes. With the producer,
// 32 rows spilled 36 to 44 bytes.)
std::optional<std::string> transposed_infeasible(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  if (!target.warpgroup_mma)
    return fmt::format("math=wgmma_t needs sm_90a's warpgroup products, which {} lacks", target.arch);
  if (kv_dtype == num::KvDtype::bf16)
    return std::string("math=wgmma_t decodes fp8 codes on their way to the products: fp8 caches only (bf16 ones "
                       "take wgmma or wgmma_ss)");
  if (!mla_tile::transposed_rows(c.rows))
    return fmt::format("rows={}: math=wgmma_t's products have 16 or 32 query rows (their N)", c.rows);
  if (c.keys != mla_tile::kTransposedKeys)
    return fmt::format("keys={}: math=wgmma_t's S^T products have {} keys (their 64 rows)", c.keys,
                       mla_tile::kTransposedKeys);
  if (!one_of(c.threads, {mla_tile::kWarpgroupThreads, mla_tile::kWgmmaThreads, kWgmmaProducerThreads}))
    return fmt::format("threads={}: math=wgmma_t runs one or two warpgroups ({} or {} threads), or two and a "
                       "producer ({})",
                       c.threads, mla_tile::kWarpgroupThreads, mla_tile::kWgmmaThreads, kWgmmaProducerThreads);
  if (c.rows != mla_tile::kTransposedProducerRows && c.threads == kWgmmaProducerThreads)
    return fmt::format("threads={} at rows={}: math=wgmma_t's math warpgroups get {} registers beside a producer, "
                       "too few for the O^T accumulators of {} rows (ptxas spills)",
                       c.threads, c.rows, mla_tile::kMathRegisters, c.rows);
  if (!transposed_geometry(c, kv_dtype).valid())
    return fmt::format("stages={}: math=wgmma_t gives each warpgroup a ring of 2..{} tiles", c.stages,
                       mla_tile::kMaxRingSlots);
  return shared_excess(shared_bytes(c, kv_dtype), target);
}

// math=mfma_native (mla_decode_mma.hip, templates/mla_decode/mma/mfma_native.hpp): math=mma with the
// MFMA forms that take the cache's own format, so it runs only where the target has the form for
// the key's cache. Its code is compiled for gfx942 and gfx950 here; no AMD GPU has executed it, and
// the sweep on such a GPU decides whether it beats math=mma.
std::optional<std::string> mfma_native_unrunnable(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  const MfmaFormats formats = mfma_formats(target.arch);
  const auto lacks = [&](std::string_view what) {
    return fmt::format("math=mfma_native needs {}, which {} lacks (the path is compiled for gfx942 and gfx950; no "
                       "AMD GPU has executed it yet)",
                       what, target.arch);
  };
  switch (kv_dtype) {
    case num::KvDtype::bf16:
      if (!formats.bf16_k32) return lacks("the 16x16x32 bf16 MFMA (gfx950) for a bf16 cache");
      if (c.keys < 32) return fmt::format("keys={}: math=mfma_native's bf16 P V takes 32 keys a product", c.keys);
      return std::nullopt;
    case num::KvDtype::fp8_e4m3fn:
      return formats.fp8_e4m3fn ? std::nullopt
                                : std::optional(lacks("an fp8 MFMA that reads the OCP fp8_e4m3fn (gfx950)"));
    case num::KvDtype::fp8_e4m3fnuz:
      return formats.fp8_e4m3fnuz ? std::nullopt : std::optional(lacks("an fp8 MFMA that reads fp8_e4m3fnuz (gfx942)"));
  }
  return std::nullopt;
}

// The matrix-core kernel's limits, for math=mma, wgmma, wgmma_ss and mfma_native (named in the reasons).
std::optional<std::string> mma_infeasible(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  const std::string math = math_name(c);
  const mla_tile::MmaGeometry g = mma_geometry(c, kv_dtype, target.warp_size);
  if (c.stages < 2 * g.tile_slots() || c.stages > mla_tile::kMaxRingSlots)
    return fmt::format("stages={}: math={} streams keys={} tiles through a ring of {}..{} slots of {} keys (two "
                       "tiles' worth at least)",
                       c.stages, math, c.keys, 2 * g.tile_slots(), mla_tile::kMaxRingSlots, g.ring_keys());
  if (!g.values_fit())
    return fmt::format("math={}: {} warps cannot split the 512 value dims into blocks of 16", math, g.warps());
  if (auto why = shared_excess(g.shared_bytes(), target)) return why;
  // With a producer warpgroup the kernel moves registers between warpgroups (setmaxnreg): to the P V
  // warpgroups value_registers() each, to the producer producer_registers(), and to a softmax
  // warpgroup softmax_registers().
  if (g.producer()) {
    const int64_t softmax = g.softmax_warpgroup() ? int64_t{g.softmax_registers()} * mla_tile::kWarpgroupThreads : 0;
    const int64_t moved = int64_t{g.value_registers()} * g.pv_warps() * g.warp + softmax +
                          int64_t{g.producer_registers()} * g.copy_threads();
    if (moved > target.registers_per_block)
      return fmt::format("threads={}: math={} gives its P V warpgroups {} registers a thread, its producer {}{}, {} "
                         "in all, more than {}'s {} per block",
                         c.threads, math, g.value_registers(), g.producer_registers(),
                         g.softmax_warpgroup() ? fmt::format(" and its softmax warpgroup {}", g.softmax_registers())
                                               : "",
                         moved, target.arch, target.registers_per_block);
    return register_excess(g.live_registers(), kMmaRegisterSharePercent, c, target,
                           std::min<int64_t>(target.registers_per_thread_max, g.value_registers()));
  }
  return register_excess(g.live_registers(), kMmaRegisterSharePercent, c, target,
                         registers_per_thread_budget(c, target));
}

class MlaDecodeFamily final : public Family {
 public:
  std::string_view name() const noexcept override { return "mla_decode"; }
  std::string_view summary() const noexcept override {
    return "paged MLA decode attention: q [B, L, H, 576] bf16 against a latent KV cache (bf16 or fp8), "
           "heads and draft / verify block tokens folded into the rows of a CTA";
  }
  const std::vector<FieldSpec>& key_fields() const noexcept override { return mla::key_fields(); }
  const std::vector<FieldSpec>& config_fields() const noexcept override { return mla::config_fields(); }
  const std::vector<FieldSpec>& shape_fields() const noexcept override { return mla::shape_fields(); }
  std::string_view template_file() const noexcept override { return "mla_decode/mla_decode.hip"; }
  std::span<const EquivalentTemplates> equivalent_templates() const noexcept override {
    return mla::equivalent_templates;
  }

  std::vector<std::string> name_expressions(const Params& key, const Params& config) const override {
    const Key k = key_of(key);
    return {main_kernel_name(config_of(config), k.kv_dtype, k.causal), combine_kernel_name()};
  }

  std::optional<std::string> infeasible(const Params& key, const Params& config,
                                        const TargetLimits& target) const override {
    const Key k = key_of(key);
    const Config c = config_of(config);
    if (auto why = unrunnable(c, k.kv_dtype, target)) return why;
    if (c.math != kMathSimt)
      if (auto why = mma_cannot_win(c, k.kv_dtype, target)) return why;
    const int rows_needed = k.heads * k.block_len;
    const int useful_tile = std::max(16, static_cast<int>(std::bit_ceil(static_cast<unsigned>(rows_needed))));
    // (wgmma's products have 64 rows whatever the key needs: its padding is the price of the path.)
    if (c.rows > useful_tile && !is_wgmma(c.math))
      return fmt::format("rows={} for H x L = {} rows: more than half of every CTA would be padding", c.rows,
                         rows_needed);
    return std::nullopt;
  }

  LaunchInfo launch_info(const Params& key, const Params& config) const override {
    const Config c = config_of(config);
    return {c.threads, shared_bytes(c, key_of(key).kv_dtype)};
  }

  std::optional<std::string> shape_unfit(const Params& key, const Params& shape) const override {
    return mla::shape_unfit(key_of(key), shape_of(shape));
  }

  // H and L are run-time arguments of the kernel, which masks the padding rows.
  bool covers_larger(std::string_view field) const noexcept override {
    return field == "heads" || field == "block_len";
  }

  // The cache type picks the math path (fp8: mma, wgmma_t or wgmma) and the batch the split and the tile
  // depth; then L and H, which set the rows a tile carries. Ranked by these, a key's first
  // candidate comes much closer to its best than it does by the previous key of the plan
  // (scripts/run_order.py measures both over a swept database).
  std::vector<std::string> ranking_fields() const override {
    return {"kv_dtype", "batch", "block_len", "heads", "causal"};
  }

  std::vector<Params> verify_shapes(const Params& key) const override {
    const Key k = key_of(key);
    // kv_len == L (the whole context is the block), kv_lens that are no multiple of any tile and
    // differ within a batch (including one of L), pages of 1, 16, 64 and 1536 tokens (one page
    // holding a whole request), and a context long enough for every split knob to split.
    return {to_params(Shape{k.block_len, 1, 2, false}), to_params(Shape{77, 16, 3, true}),
            to_params(Shape{1013, 64, 2, true}), to_params(Shape{200, 1536, 1, false})};
  }
  // Each verify shape names its batch.
  std::vector<std::string> fields_verification_ignores() const override { return {"batch"}; }

  std::unique_ptr<Instance> instantiate(backend::Context& ctx, const Params& key, const Params& shape, uint64_t seed,
                                        bool with_reference) const override {
    HostProblem problem = make_problem(key_of(key), shape_of(shape), seed);
    const int rotations = rotations_of(problem, ctx.info());
    const int split_capacity = policy_split_bound(problem, ctx.info().compute_units);
    return std::make_unique<DeviceInstance>(ctx, std::move(problem), with_reference, rotations, split_capacity);
  }

  // The cache's contents depend on nothing but its type and size (a key's block table maps its
  // requests onto any of its pages), so keys of one cache type, batch and timing shape, whatever
  // their heads, block length or mask, time on one device copy, drawn from a seed of its id.
  std::unique_ptr<Instance> instantiate_for_timing(backend::Context& ctx, const Params& key, const Params& shape,
                                                   uint64_t seed, InputCache& inputs) const override {
    HostProblem problem = make_problem(key_of(key), shape_of(shape), seed, CacheContents::none);
    const int rotations = rotations_of(problem, ctx.info());
    const int split_capacity = policy_split_bound(problem, ctx.info().compute_units);
    const size_t bytes = cache_bytes(problem);
    const std::string id = fmt::format("mla_decode kv cache: kv_dtype={} bytes={} rotations={}",
                                       static_cast<int>(problem.kv_dtype), bytes, rotations);
    auto kv = inputs.get(id, [&] {
      const auto cache = random_cache(problem.kv_dtype, bytes, seed_of(id));
      return upload_copies(ctx, cache.data(), cache.size(), rotations);
    });
    return std::make_unique<DeviceInstance>(ctx, std::move(problem), rotations, split_capacity, std::move(kv));
  }

 private:
  // Copies of q and the cache for cold-L2 timing.
  static int rotations_of(const HostProblem& p, const backend::DeviceInfo& info) {
    const auto copy_bytes = static_cast<int64_t>(p.q.size() * sizeof(uint16_t) + cache_bytes(p));
    return std::min(kMaxRotations, bench::rotations_for(copy_bytes, info.last_level_cache_bytes()));
  }
};

}  // namespace

std::optional<std::string> unrunnable(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target) {
  if (!one_of(c.rows, {16, 32, 64, 128})) return fmt::format("rows={} is not 16, 32, 64 or 128", c.rows);
  if (!one_of(c.keys, {16, 32, 64, 128})) return fmt::format("keys={} is not 16, 32, 64 or 128", c.keys);
  // 128-key tiles exist for the matrix-core kernel's fp8 rings (80 KiB a tile: two fit, with all
  // eight warps of a CTA in Q K^T); the SIMT kernel keeps the tiles its tests cover.
  if (c.keys == 128 && c.math != kMathMma && c.math != kMathMfmaNative)
    return std::string("keys=128 is math=mma's and mfma_native's (simt has 16, 32 or 64)");
  if (c.math == kMathMfmaNative)
    if (auto why = mfma_native_unrunnable(c, kv_dtype, target)) return why;
  if (c.math == kMathWgmmaT) return transposed_infeasible(c, kv_dtype, target);
  if (is_wgmma(c.math))
    if (auto why = wgmma_unrunnable(c, kv_dtype, target)) return why;
  // (wgmma_unrunnable has taken the thread counts of math=wgmma and wgmma_ss.)
  if (!is_wgmma(c.math) && !one_of(c.threads, {64, 128, 256, 512}))
    return fmt::format("threads={} is not 64, 128, 256 or 512 (math={}; {} is math=wgmma's and wgmma_t's, with a "
                       "producer)",
                       c.threads, math_name(c), kWgmmaProducerThreads);
  if (c.threads % target.warp_size != 0)
    return fmt::format("threads={} is not a multiple of {}'s warp of {}", c.threads, target.arch, target.warp_size);
  if (c.threads > target.max_threads_per_block)
    return fmt::format("threads={} exceeds {}'s {} per block", c.threads, target.arch, target.max_threads_per_block);
  return c.math == kMathSimt ? simt_infeasible(c, kv_dtype, target) : mma_infeasible(c, kv_dtype, target);
}

const Family& mla_decode_family() {
  static const MlaDecodeFamily family;
  return family;
}

}  // namespace ktune::mla
