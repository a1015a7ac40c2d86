// mla_decode through the engine: its key, its split-KV plan and workspace, and its launch as
// tuner/kernels/mla_decode/instance.cpp does it (the main kernel, then the combine pass when the
// keys are split).
#include "dispatch/runtime/engine.hpp"
#include "dispatch/runtime/message.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "kernels/mla_decode/split_policy.hpp"

namespace ktune::runtime {
namespace {

constexpr std::string_view kKeyFields[] = {"heads", "block_len", "causal", "kv_dtype", "batch"};
constexpr std::string_view kConfigFields[] = {"rows", "keys", "threads", "stages", "split", "math"};
constexpr size_t kRows = field_index(kConfigFields, "rows");
constexpr size_t kKeys = field_index(kConfigFields, "keys");
constexpr size_t kSplit = field_index(kConfigFields, "split");

// (const u16* q, const u8* kv_cache, const i32* block_table, const i32* kv_lens, u16* o, float* lse,
//  float* part_o, float* part_lse, float softmax_scale, float kv_scale, int heads, int block_len,
//  int max_pages, int page_size, int num_splits), returning void.
constexpr std::string_view kMainParameters = "EvPKtPKhPKiS6_PtPfS8_S8_ffiiiii";
// (const float* part_o, const float* part_lse, u16* o, float* lse, int total_rows, int num_splits)
constexpr std::string_view kCombineParameters = "EvPKfS2_PtPfii";

bool takes_runtime_arguments(const CodeObject& object) noexcept {
  return object.count == 2 && std::string_view(object.symbols[0]).ends_with(kMainParameters) &&
         std::string_view(object.symbols[1]).ends_with(kCombineParameters);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t rows_of(const ktune_mla_decode_key& k) { return k.batch * k.block_len * k.heads; }

// Split partials: fp32 o of every row per split, then fp32 lse of every row per split.
size_t workspace_for(const ktune_mla_decode_key& k, int splits) {
  if (splits <= 1) return 0;
  return static_cast<size_t>(splits) * static_cast<size_t>(rows_of(k)) * (mla::kValueDim + 1) * sizeof(float);
}

// How the selected kernel splits this launch's keys.
int splits_of(const ktune_mla_decode_args& a, const KernelChoice& kc, int compute_units) {
  const auto& k = a.key;
  return mla::num_splits({static_cast<int>(k.batch),
                          static_cast<int>(ceil_div(k.heads * k.block_len, kc.config[kRows])), a.max_kv_len,
                          compute_units, static_cast<int>(kc.config[kSplit]), static_cast<int>(kc.config[kKeys])});
}

ktune_status check_shape(const ktune_mla_decode_args& a, ktune_result& out) {
  const auto& k = a.key;
  if (k.heads < 1 || k.block_len < 1 || k.batch < 1 || a.page_size < 1 || a.max_pages < 1 ||
      a.max_kv_len < k.block_len)
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  Message("need heads, block_len, batch, page_size, max_pages >= 1 and max_kv_len >= block_len; "
                              "got heads={} block_len={} batch={} page_size={} max_pages={} max_kv_len={}",
                              k.heads, k.block_len, k.batch, a.page_size, a.max_pages, a.max_kv_len));
  return KTUNE_OK;
}

}  // namespace

const RuntimeFamily kMlaDecode{0, "mla_decode", kKeyFields, kConfigFields, takes_runtime_arguments};

ktune_status Engine::mla_decode_workspace_size(const ktune_mla_decode_args& a, size_t& bytes,
                                               ktune_result& out) noexcept {
  bytes = 0;
  if (const auto s = check_shape(a, out); s != KTUNE_OK) return s;
  Selected s;
  if (const auto status = select_on_device(kMlaDecode, key_values(a.key), s, out); !launched(status)) return status;
  try {
    const int splits = splits_of(a, *s.choice.kernel, s.current.device->compute_units);
    bytes = workspace_for(a.key, splits);
    return report(&out, s.choice.status, s.choice.reason, &s.choice, splits, s.from_override);
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what(), &s.choice, 0, s.from_override);
  }
}

ktune_status Engine::mla_decode(const ktune_mla_decode_args& a, ktune_result& out) noexcept {
  if (!a.q || !a.kv_cache || !a.block_table || !a.kv_lens || !a.o)
    return report(&out, KTUNE_INVALID_ARGUMENT, "q, kv_cache, block_table, kv_lens and o must not be null");
  if (const auto s = check_shape(a, out); s != KTUNE_OK) return s;
  Selected s;
  if (const auto status = select_on_device(kMlaDecode, key_values(a.key), s, out); !launched(status)) return status;
  const KernelChoice& kc = *s.choice.kernel;
  int splits = 1;
  try {
    splits = splits_of(a, kc, s.current.device->compute_units);
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what(), &s.choice, 0, s.from_override);
  }
  const size_t workspace_bytes = workspace_for(a.key, splits);
  if (a.workspace_bytes < workspace_bytes || (workspace_bytes > 0 && a.workspace == nullptr))
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  Message("this launch splits the keys {} ways and needs {} bytes of workspace, got {} at {} "
                              "(ask ktune_mla_decode_workspace_size)",
                              splits, workspace_bytes, a.workspace_bytes, a.workspace),
                  &s.choice, splits, s.from_override);
  LoadedKernels kernels;
  if (const auto status = load(kMlaDecode, s, kernels, out, splits); !launched(status)) return status;

  // Kernel arguments in the order of the kernels' parameter lists (templates/mla_decode).
  const auto& k = a.key;
  const void* q = a.q;
  const void* kv = a.kv_cache;
  const void* block_table = a.block_table;
  const void* kv_lens = a.kv_lens;
  void* o = a.o;
  void* lse = a.lse;
  auto* part_o = splits > 1 ? static_cast<float*>(a.workspace) : nullptr;
  float* part_lse = splits > 1 ? part_o + static_cast<size_t>(splits) * rows_of(k) * mla::kValueDim : nullptr;
  float softmax_scale = a.softmax_scale, kv_scale = a.kv_scale;
  int heads = static_cast<int>(k.heads), block_len = static_cast<int>(k.block_len), max_pages = a.max_pages,
      page_size = a.page_size, num_splits = splits, total_rows = static_cast<int>(rows_of(k));
  void* main_args[] = {&q,        &kv,       &block_table, &kv_lens,   &o,         &lse,      &part_o,    &part_lse,
                       &softmax_scale, &kv_scale, &heads, &block_len, &max_pages, &page_size, &num_splits};
  void* combine_args[] = {&part_o, &part_lse, &o, &lse, &total_rows, &num_splits};
  Launch launches[2];
  launches[0].grid[0] = static_cast<unsigned>(ceil_div(k.heads * k.block_len, kc.config[kRows]));
  launches[0].grid[1] = static_cast<unsigned>(splits);
  launches[0].grid[2] = static_cast<unsigned>(k.batch);
  launches[0].block = static_cast<unsigned>(kc.threads);
  launches[0].shared_bytes = static_cast<size_t>(kc.shared_bytes);
  launches[1].grid[0] = static_cast<unsigned>(total_rows);
  launches[1].block = mla::kCombineThreads;
  launches[1].overlaps_previous = s.current.device->overlapping_launches;  // the combine waits itself
  void** const args[] = {main_args, combine_args};
  report(&out, s.choice.status, s.choice.reason, &s.choice, splits, s.from_override);
  return launch(s, kernels, std::span<const Launch>(launches, splits > 1 ? 2 : 1), a.stream, args, out, splits);
}

}  // namespace ktune::runtime
