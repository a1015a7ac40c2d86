// qk_rope_cache through the engine: its key, the precondition check of the selected kernel against
// the call, the unfused baseline's workspace, and its launch, which tuner/kernels/qk_rope_cache/
// launch.hpp builds for the tuner and the runtime alike (the fused kernel, or the unfused sequence:
// rope, cache write, concat, and quantise for an fp8 q_out).
#include <cmath>

#include "dispatch/runtime/engine.hpp"
#include "dispatch/runtime/message.hpp"
#include "dispatch/runtime/shaped_launch.hpp"
#include "kernels/qk_rope_cache/launch.hpp"
#include "kernels/qk_rope_cache/problem.hpp"
#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune::runtime {
namespace {

constexpr std::string_view kKeyFields[] = {"heads", "kv_dtype", "q_dtype", "rope", "is_neox", "tokens"};
constexpr std::string_view kConfigFields[] = {"layout", "vec", "tokens_per_cta", "threads", "clamp", "fused"};
constexpr size_t kRope = field_index(kKeyFields, "rope");
constexpr size_t kLayout = field_index(kConfigFields, "layout");
constexpr size_t kVec = field_index(kConfigFields, "vec");
constexpr size_t kTokensPerCta = field_index(kConfigFields, "tokens_per_cta");
constexpr size_t kClamp = field_index(kConfigFields, "clamp");
constexpr size_t kFused = field_index(kConfigFields, "fused");

bool takes_runtime_arguments(const CodeObject& object) noexcept {
  if (object.count == 1) return std::string_view(object.symbols[0]).ends_with(rope::kFusedParameters);
  if (object.count != 3 && object.count != 4) return false;
  for (size_t i = 0; i < object.count; ++i)
    if (!std::string_view(object.symbols[i]).ends_with(rope::kUnfusedParameters[i])) return false;
  return true;
}

// The selected kernel's config; its threads are the block the table records for it.
rope::Config config_of(const KernelChoice& kc) noexcept {
  rope::Config c;
  c.layout = static_cast<rope::Layout>(kc.config[kLayout]);
  c.vec = static_cast<int>(kc.config[kVec]);
  c.tokens_per_cta = static_cast<int>(kc.config[kTokensPerCta]);
  c.threads = kc.threads;
  c.clamp = kc.config[kClamp] != 0;
  c.fused = kc.config[kFused] != 0;
  return c;
}

// Rope, cache write, concat, and the quantisation of an fp8 q_out.
size_t unfused_kernels(const ktune_qk_rope_cache_key& k) { return k.q_dtype != 0 ? 4 : 3; }

// The unfused baseline's intermediates: rotated q_pe [T, H, 64] and k_pe [T, 64] (bf16), then the
// bf16 concatenation [T, H, 576] when q_out is fp8 (a bf16 q_out is the concatenation itself).
struct Workspace {
  size_t q_pe_rot = 0, k_pe_rot = 0, q_cat = 0, bytes = 0;  // offsets and the total
};
Workspace workspace_of(const ktune_qk_rope_cache_key& k, const KernelChoice& kc) {
  if (kc.config[kFused] != 0) return {};
  Workspace w;
  const size_t q_rows = static_cast<size_t>(k.tokens) * static_cast<size_t>(k.heads);
  w.k_pe_rot = q_rows * rope::kRopeDim * sizeof(uint16_t);
  w.q_cat = w.k_pe_rot + static_cast<size_t>(k.tokens) * rope::kRopeDim * sizeof(uint16_t);
  w.bytes = w.q_cat + (k.q_dtype != 0 ? q_rows * rope::kRowDim * sizeof(uint16_t) : 0);
  return w;
}

ktune_status check_shape(const ktune_qk_rope_cache_args& a, ktune_result& out) {
  const auto& k = a.key;
  if (k.heads < 1 || k.tokens < 1 || a.table_rows < 1 || !(a.k_scale > 0) || !(a.q_scale > 0) ||
      !std::isfinite(a.k_scale) || !std::isfinite(a.q_scale))
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  Message("need heads, tokens, table_rows >= 1 and finite k_scale, q_scale > 0; got heads={} "
                          "tokens={} table_rows={} k_scale={} q_scale={}",
                          k.heads, k.tokens, a.table_rows, a.k_scale, a.q_scale));
  return KTUNE_OK;
}

// The key the selected kernel's precondition is checked with: a call with a 1-row table is an
// identity rope whatever its key says (docs/kernels/qk_rope_cache.md: the identity is a 1-row table with positions
// clamped into it), so that a kernel that trusts positions never reads past such a table.
Values precondition_key(const ktune_qk_rope_cache_args& a) {
  Values key = key_values(a.key);
  if (a.table_rows == 1) key[kRope] = static_cast<int64_t>(rope::RopeMode::identity);
  return key;
}

}  // namespace

const RuntimeFamily kQkRopeCache{1, "qk_rope_cache", kKeyFields, kConfigFields, takes_runtime_arguments};

ktune_status Engine::qk_rope_cache_workspace_size(const ktune_qk_rope_cache_args& a, size_t& bytes,
                                                  ktune_result& out) noexcept {
  bytes = 0;
  if (const auto s = check_shape(a, out); s != KTUNE_OK) return s;
  Selected s;
  if (const auto status = select_on_device(kQkRopeCache, key_values(a.key), s, out); !launched(status)) return status;
  bytes = workspace_of(a.key, *s.choice.kernel).bytes;
  return s.choice.status;
}

ktune_status Engine::qk_rope_cache(const ktune_qk_rope_cache_args& a, ktune_result& out) noexcept {
  if (!a.q_nope || !a.q_pe || !a.kv_c || !a.k_pe || !a.positions || !a.slot_mapping || !a.cos_table || !a.sin_table ||
      !a.kv_cache || !a.q_out)
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  "q_nope, q_pe, kv_c, k_pe, positions, slot_mapping, cos_table, sin_table, kv_cache and q_out must "
                  "not be null (an identity rope passes a 1-row table of cos 1, sin 0)");
  if (const auto s = check_shape(a, out); s != KTUNE_OK) return s;
  Selected s;
  if (const auto status = select_on_device(kQkRopeCache, key_values(a.key), s, out); !launched(status)) return status;
  const KernelChoice& kc = *s.choice.kernel;
  Workspace w;
  try {
    std::string scratch;
    if (const auto why = precondition_violated(kQkRopeCache, precondition_key(a), kc, scratch); !why.empty())
      return report(&out, KTUNE_INVALID_ARGUMENT,
                    Message("the selected kernel {} cannot serve this call: {} (table_rows={}; an identity rope "
                            "calls with key rope=1)",
                            kc.name_expressions[0], why, a.table_rows),
                    &s.choice, 0, s.from_override);
    w = workspace_of(a.key, kc);
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what(), &s.choice, 0, s.from_override);
  }
  if (a.workspace_bytes < w.bytes || (w.bytes > 0 && a.workspace == nullptr))
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  Message("the selected kernel is the unfused baseline, which needs {} bytes of workspace, got {} "
                          "at {} (ask ktune_qk_rope_cache_workspace_size)",
                          w.bytes, a.workspace_bytes, a.workspace),
                  &s.choice, 0, s.from_override);
  const size_t kernel_count = kc.config[kFused] != 0 ? 1 : unfused_kernels(a.key);
  if (kc.name_expression_count != kernel_count)
    return report(
        &out, KTUNE_NO_CODE_OBJECT,
        Message("the selected kernel holds {} kernels, this call launches {}", kc.name_expression_count, kernel_count),
        &s.choice, 0, s.from_override);
  LoadedKernels kernels;
  if (const auto status = load(kQkRopeCache, s, kernels, out); !launched(status)) return status;

  const auto& k = a.key;
  rope::LaunchProblem problem;
  problem.q_nope = static_cast<const uint16_t*>(a.q_nope);
  problem.q_pe = static_cast<const uint16_t*>(a.q_pe);
  problem.kv_c = static_cast<const uint16_t*>(a.kv_c);
  problem.k_pe = static_cast<const uint16_t*>(a.k_pe);
  problem.positions = reinterpret_cast<const rope::i64*>(a.positions);
  problem.slot_mapping = reinterpret_cast<const rope::i64*>(a.slot_mapping);
  problem.cos = a.cos_table;
  problem.sin = a.sin_table;
  problem.kv_cache = static_cast<uint8_t*>(a.kv_cache);
  problem.q_out = static_cast<uint8_t*>(a.q_out);
  problem.k_scale = a.k_scale;
  problem.q_scale = a.q_scale;
  problem.tokens = k.tokens;
  problem.heads = k.heads;
  problem.table_rows = a.table_rows;
  problem.is_neox = k.is_neox != 0;
  problem.q_dtype = static_cast<num::KvDtype>(k.q_dtype);
  const rope::Config config = config_of(kc);
  const Device& device = *s.current.device;
  report(&out, s.choice.status, s.choice.reason, &s.choice, 0, s.from_override);
  if (config.fused) {
    auto fused = rope::fused_launch(problem, config);
    const Launch l = shaped_launch(fused.shape, device);
    auto args = fused.arguments.pointers();
    void** const all[] = {args.data()};
    return launch(s, kernels, std::span<const Launch>(&l, 1), a.stream, all, out);
  }
  char* const base = static_cast<char*>(a.workspace);
  problem.q_pe_rot = reinterpret_cast<uint16_t*>(base + w.q_pe_rot);
  problem.k_pe_rot = reinterpret_cast<uint16_t*>(base + w.k_pe_rot);
  if (k.q_dtype != 0) problem.q_cat = reinterpret_cast<uint16_t*>(base + w.q_cat);
  auto u = rope::unfused_launches(problem, config);
  const Launch l[4] = {shaped_launch(u.rope.shape, device), shaped_launch(u.cache.shape, device),
                       shaped_launch(u.concat.shape, device),
                       u.quantise ? shaped_launch(u.quantise->shape, device) : Launch{}};
  auto rope_args = u.rope.arguments.pointers();
  auto cache_args = u.cache.arguments.pointers();
  auto concat_args = u.concat.arguments.pointers();
  std::array<void*, rope::QuantiseArguments::kCount> quantise_args{};
  if (u.quantise) quantise_args = u.quantise->arguments.pointers();
  void** const all[] = {rope_args.data(), cache_args.data(), concat_args.data(), quantise_args.data()};
  return launch(s, kernels, std::span<const Launch>(l, kernel_count), a.stream, all, out);
}

}  // namespace ktune::runtime
