// qk_rope_cache through the engine: its key, the precondition check of the selected kernel against
// the call, the unfused baseline's workspace, and its launch as tuner/kernels/qk_rope_cache/
// instance.cpp does it (the fused kernel, or the unfused sequence: rope, cache write, concat, and
// quantise for an fp8 q_out).
#include <cmath>

#include "dispatch/runtime/engine.hpp"
#include "dispatch/runtime/message.hpp"
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
constexpr size_t kFused = field_index(kConfigFields, "fused");

// Parameter lists of templates/qk_rope_cache (u16 = unsigned short, i64 = long long), returning void:
// qk_rope_cache(const u16* q_nope, const u16* q_pe, const u16* kv_c, const u16* k_pe, const i64* positions,
//   const i64* slot_mapping, const float* cos, const float* sin, u8* kv_cache, u8* q_out, float k_inv_scale,
//   float q_inv_scale, int tokens, int heads, i64 table_rows, int is_neox)
constexpr std::string_view kFusedParameters = "EvPKtS2_S2_S2_PKxS4_PKfS6_PhS7_ffiixi";
// The unfused sequence, in launch order:
// unfused_rope(const u16* q_pe, const u16* k_pe, const i64* positions, const float* cos, const float* sin,
//   u16* q_pe_rot, u16* k_pe_rot, int tokens, int heads, i64 table_rows, int is_neox)
// unfused_cache(const u16* kv_c, const u16* k_pe_rot, const i64* slot_mapping, u8* kv_cache, float k_inv_scale,
//   int tokens)
// unfused_concat(const u16* q_nope, const u16* q_pe_rot, u16* q_cat, int tokens, int heads)
// unfused_quantise(const u16* q_cat, u8* q_out, float q_inv_scale, i64 elements)
constexpr std::string_view kUnfusedParameters[] = {"EvPKtS2_PKxPKfS6_PtS7_iixi", "EvPKtS2_PKxPhfi", "EvPKtS2_Ptii",
                                                   "EvPKtPhfx"};

bool takes_runtime_arguments(const CodeObject& object) noexcept {
  if (object.count == 1) return std::string_view(object.symbols[0]).ends_with(kFusedParameters);
  if (object.count != 3 && object.count != 4) return false;
  for (size_t i = 0; i < object.count; ++i)
    if (!std::string_view(object.symbols[i]).ends_with(kUnfusedParameters[i])) return false;
  return true;
}

unsigned blocks(int64_t items, int64_t threads) { return static_cast<unsigned>((items + threads - 1) / threads); }

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
// identity rope whatever its key says (DESIGN.md: the identity is a 1-row table with positions
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
  if (!a.q_nope || !a.q_pe || !a.kv_c || !a.k_pe || !a.positions || !a.slot_mapping || !a.cos_table ||
      !a.sin_table || !a.kv_cache || !a.q_out)
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
    return report(&out, KTUNE_NO_CODE_OBJECT,
                  Message("the selected kernel holds {} kernels, this call launches {}", kc.name_expression_count,
                              kernel_count),
                  &s.choice, 0, s.from_override);
  LoadedKernels kernels;
  if (const auto status = load(kQkRopeCache, s, kernels, out); !launched(status)) return status;

  // Kernel arguments in the order of the kernels' parameter lists (templates/qk_rope_cache).
  const auto& k = a.key;
  const void *q_nope = a.q_nope, *q_pe = a.q_pe, *kv_c = a.kv_c, *k_pe = a.k_pe, *positions = a.positions,
             *slots = a.slot_mapping, *cos = a.cos_table, *sin = a.sin_table;
  void *kv_cache = a.kv_cache, *q_out = a.q_out;
  float k_inv_scale = 1.f / a.k_scale, q_inv_scale = 1.f / a.q_scale;
  int tokens = static_cast<int>(k.tokens), heads = static_cast<int>(k.heads), is_neox = k.is_neox != 0 ? 1 : 0;
  int64_t table_rows = a.table_rows;
  const int64_t threads = kc.threads, vec = kc.config[kVec], q_rows = k.tokens * k.heads;
  report(&out, s.choice.status, s.choice.reason, &s.choice, 0, s.from_override);
  if (kc.config[kFused] != 0) {
    void* args[] = {&q_nope,      &q_pe,        &kv_c,   &k_pe,  &positions,  &slots,   &cos,    &sin,
                    &kv_cache,    &q_out,       &k_inv_scale, &q_inv_scale, &tokens, &heads, &table_rows, &is_neox};
    Launch l;
    l.grid[0] = blocks(k.tokens, kc.config[kTokensPerCta]);
    l.grid[1] = kc.config[kLayout] == static_cast<int64_t>(rope::Layout::token) ? 1u : static_cast<unsigned>(k.heads + 1);
    l.block = static_cast<unsigned>(threads);
    void** const all[] = {args};
    return launch(s, kernels, std::span<const Launch>(&l, 1), a.stream, all, out);
  }
  char* const base = static_cast<char*>(a.workspace);
  void *q_pe_rot = base + w.q_pe_rot, *k_pe_rot = base + w.k_pe_rot;
  void* q_cat = k.q_dtype != 0 ? base + w.q_cat : a.q_out;
  int64_t elements = q_rows * rope::kRowDim;
  void* rope_args[] = {&q_pe, &k_pe, &positions, &cos, &sin, &q_pe_rot, &k_pe_rot, &tokens, &heads, &table_rows,
                       &is_neox};
  void* cache_args[] = {&kv_c, &k_pe_rot, &slots, &kv_cache, &k_inv_scale, &tokens};
  void* concat_args[] = {&q_nope, &q_pe_rot, &q_cat, &tokens, &heads};
  void* quantise_args[] = {&q_cat, &q_out, &q_inv_scale, &elements};
  Launch l[4];
  l[0].grid[0] = blocks((q_rows + k.tokens) * (rope::kRopeDim / vec), threads);
  l[1].grid[0] = blocks(k.tokens * (rope::kRowDim / vec), threads);
  l[2].grid[0] = blocks(q_rows * (rope::kRowDim / vec), threads);
  l[3].grid[0] = blocks(elements / vec, threads);
  for (auto& x : l) x.block = static_cast<unsigned>(threads);
  void** const all[] = {rope_args, cache_args, concat_args, quantise_args};
  return launch(s, kernels, std::span<const Launch>(l, kernel_count), a.stream, all, out);
}

}  // namespace ktune::runtime
