// mla_decode through the engine: its key, its split-KV plan and workspace, and its launch, which
// tuner/kernels/mla_decode/launch.hpp builds for the tuner and the runtime alike (the main kernel,
// then the combine pass when the keys are split).
#include "dispatch/runtime/engine.hpp"
#include "dispatch/runtime/message.hpp"
#include "dispatch/runtime/shaped_launch.hpp"
#include "kernels/mla_decode/launch.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "kernels/mla_decode/split_policy.hpp"

namespace ktune::runtime {
namespace {

constexpr std::string_view kKeyFields[] = {"heads", "block_len", "causal", "kv_dtype", "batch"};
constexpr std::string_view kConfigFields[] = {"rows", "keys", "threads", "stages", "split", "math"};
constexpr size_t kRows = field_index(kConfigFields, "rows");
constexpr size_t kKeys = field_index(kConfigFields, "keys");
constexpr size_t kStages = field_index(kConfigFields, "stages");
constexpr size_t kSplit = field_index(kConfigFields, "split");
constexpr size_t kMath = field_index(kConfigFields, "math");

bool takes_runtime_arguments(const CodeObject& object) noexcept {
  return object.count == 2 && std::string_view(object.symbols[0]).ends_with(mla::kMainParameters) &&
         std::string_view(object.symbols[1]).ends_with(mla::kCombineParameters);
}

// The selected kernel's config; its threads are the block the table records for it.
mla::Config config_of(const KernelChoice& kc) noexcept {
  const auto field = [&](size_t i) { return static_cast<int>(kc.config[i]); };
  return {field(kRows), field(kKeys), kc.threads, field(kStages), field(kSplit), field(kMath)};
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
  if (k.heads < 1 || k.block_len < 1 || k.batch < 1 || a.page_size < 1 || a.max_pages < 1 || a.max_kv_len < k.block_len)
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

  const auto& k = a.key;
  mla::LaunchProblem problem{static_cast<const uint16_t*>(a.q),
                             static_cast<const uint8_t*>(a.kv_cache),
                             a.block_table,
                             a.kv_lens,
                             static_cast<uint16_t*>(a.o),
                             a.lse};
  if (splits > 1) {
    problem.part_o = static_cast<float*>(a.workspace);
    problem.part_lse = problem.part_o + static_cast<size_t>(splits) * rows_of(k) * mla::kValueDim;
  }
  problem.softmax_scale = a.softmax_scale;
  problem.kv_scale = a.kv_scale;
  problem.heads = k.heads;
  problem.block_len = k.block_len;
  problem.batch = k.batch;
  problem.max_pages = a.max_pages;
  problem.page_size = a.page_size;
  auto plan = mla::launch_plan(problem, config_of(kc), static_cast<size_t>(kc.shared_bytes), splits);
  const Launch launches[2] = {shaped_launch(plan.main.shape, *s.current.device),
                              plan.combine ? shaped_launch(plan.combine->shape, *s.current.device) : Launch{}};
  auto main_args = plan.main.arguments.pointers();
  std::array<void*, mla::CombineArguments::kCount> combine_args{};
  if (plan.combine) combine_args = plan.combine->arguments.pointers();
  void** const args[] = {main_args.data(), combine_args.data()};
  report(&out, s.choice.status, s.choice.reason, &s.choice, splits, s.from_override);
  return launch(s, kernels, std::span<const Launch>(launches, plan.combine ? 2 : 1), a.stream, args, out, splits);
}

}  // namespace ktune::runtime
