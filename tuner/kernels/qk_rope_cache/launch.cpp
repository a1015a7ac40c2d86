#include "kernels/qk_rope_cache/launch.hpp"

#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune::rope {
namespace {

unsigned blocks(int64_t items, int64_t threads) { return static_cast<unsigned>((items + threads - 1) / threads); }

LaunchShape line_of(int64_t items, const Config& config) {
  LaunchShape s;
  s.grid[0] = blocks(items, config.threads);
  s.block = static_cast<unsigned>(config.threads);
  return s;
}

}  // namespace

KernelLaunch<FusedArguments> fused_launch(const LaunchProblem& p, const Config& config) noexcept {
  KernelLaunch<FusedArguments> l;
  l.arguments = {{p.q_nope, p.q_pe, p.kv_c, p.k_pe, p.positions, p.slot_mapping, p.cos, p.sin, p.kv_cache, p.q_out,
                  1.f / p.k_scale, 1.f / p.q_scale, static_cast<int>(p.tokens), static_cast<int>(p.heads), p.table_rows,
                  p.is_neox ? 1 : 0}};
  l.shape.grid = {blocks(p.tokens, config.tokens_per_cta),
                  config.layout == Layout::token ? 1u : static_cast<unsigned>(p.heads + 1), 1};
  l.shape.block = static_cast<unsigned>(config.threads);
  return l;
}

UnfusedLaunches unfused_launches(const LaunchProblem& p, const Config& config) noexcept {
  const int tokens = static_cast<int>(p.tokens), heads = static_cast<int>(p.heads), is_neox = p.is_neox ? 1 : 0;
  const int64_t q_rows = p.tokens * p.heads, elements = q_rows * kRowDim;
  uint16_t* const q_cat = p.q_dtype != num::KvDtype::bf16 ? p.q_cat : reinterpret_cast<uint16_t*>(p.q_out);
  UnfusedLaunches u;
  u.rope = {{{p.q_pe, p.k_pe, p.positions, p.cos, p.sin, p.q_pe_rot, p.k_pe_rot, tokens, heads, p.table_rows, is_neox}},
            line_of((q_rows + p.tokens) * (kRopeDim / config.vec), config)};
  u.cache = {{{p.kv_c, p.k_pe_rot, p.slot_mapping, p.kv_cache, 1.f / p.k_scale, tokens}},
             line_of(p.tokens * (kRowDim / config.vec), config)};
  u.concat = {{{p.q_nope, p.q_pe_rot, q_cat, tokens, heads}}, line_of(q_rows * (kRowDim / config.vec), config)};
  if (p.q_dtype != num::KvDtype::bf16)
    u.quantise = {{{q_cat, p.q_out, 1.f / p.q_scale, elements}}, line_of(elements / config.vec, config)};
  return u;
}

}  // namespace ktune::rope
