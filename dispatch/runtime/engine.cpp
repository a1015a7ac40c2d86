#include "dispatch/runtime/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "dispatch/runtime/compiled_table.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "kernels/mla_decode/split_policy.hpp"

namespace ktune::runtime {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t rows_of(const ktune_mla_decode_key& k) { return k.batch * k.block_len * k.heads; }

// Split partials: fp32 o of every row per split, then fp32 lse of every row per split.
size_t workspace_for(const ktune_mla_decode_key& k, int splits) {
  if (splits <= 1) return 0;
  return static_cast<size_t>(splits) * static_cast<size_t>(rows_of(k)) * (mla::kValueDim + 1) * sizeof(float);
}

// (const u16* q, const u8* kv_cache, const i32* block_table, const i32* kv_lens, u16* o, float* lse,
//  float* part_o, float* part_lse, float softmax_scale, float kv_scale, int heads, int block_len,
//  int max_pages, int page_size, int num_splits), returning void.
constexpr std::string_view kMainParameters = "EvPKtPKhPKiS6_PtPfS8_S8_ffiiiii";
// (const float* part_o, const float* part_lse, u16* o, float* lse, int total_rows, int num_splits)
constexpr std::string_view kCombineParameters = "EvPKfS2_PtPfii";

}  // namespace

bool takes_runtime_arguments(const CodeObjectInfo& object) noexcept {
  return object.main_symbol.ends_with(kMainParameters) && object.combine_symbol.ends_with(kCombineParameters);
}

ktune_status report(ktune_result* out, ktune_status status, std::string_view message, const Choice* choice,
                    int splits, bool from_override) noexcept {
  if (out == nullptr) return status;
  *out = ktune_result{};
  out->status = status;
  if (choice != nullptr) {
    out->has_fallback_key = choice->has_fallback_key ? 1 : 0;
    out->fallback_key = choice->fallback_key;
  }
  out->splits = splits;
  out->from_override = from_override ? 1 : 0;
  const size_t n = std::min(message.size(), sizeof(out->message) - 1);
  std::memcpy(out->message, message.data(), n);
  out->message[n] = '\0';
  return status;
}

Engine::Engine(Setup setup) : setup_(std::move(setup)), cache_(setup_.package_dirs) {}

Engine::Current Engine::current() {
  std::string why;
  for (const auto& api : setup_.apis) {
    const void* id = nullptr;
    try {
      id = api->current();
    } catch (const Error& e) {
      why += fmt::format("{}{}: {}", why.empty() ? "" : "; ", api->name(), e.what());
      continue;
    }
    std::lock_guard lock(devices_mutex_);
    auto it = devices_.find(id);
    if (it == devices_.end()) it = devices_.emplace(id, api->describe(id)).first;
    return {api.get(), &it->second};
  }
  if (!setup_.no_api_reason.empty()) why += (why.empty() ? "" : "; ") + setup_.no_api_reason;
  throw Unavailable("no GPU to launch on (" + why + ")");
}

const OverrideTable* Engine::override_table() noexcept {
  std::call_once(override_once_, [this] {
    if (!setup_.override_db) return;
    try {
      override_ = std::make_unique<OverrideTable>(*setup_.override_db, compiled_package().template_hash);
    } catch (const std::exception& e) {
      override_error_ = fmt::format("KTUNE_DB={} refused, the compiled-in table serves instead: {}",
                                    *setup_.override_db, e.what());
    }
  });
  return override_.get();
}

Choice Engine::choose(std::string_view arch, const ktune_mla_decode_key& key, bool& from_override) noexcept {
  from_override = false;
  if (const auto* table = override_table()) {
    try {
      if (auto c = table->select(arch, key); c && c->status != KTUNE_UNSUPPORTED) {
        from_override = true;
        return *c;
      }
    } catch (const std::exception&) {  // allocation failure: the compiled table still answers
    }
  }
  return select_compiled(arch, key);
}

ktune_status Engine::select_for_arch(std::string_view arch, const ktune_mla_decode_key& key,
                                     ktune_result& out) noexcept {
  bool from_override = false;
  const Choice c = choose(arch, key, from_override);
  return report(&out, c.status, c.reason, &c, 0, from_override);
}

ktune_status Engine::select(const ktune_mla_decode_key& key, ktune_result& out) noexcept {
  try {
    const auto cur = current();
    return select_for_arch(cur.device->arch, key, out);
  } catch (const Unavailable& e) {
    return report(&out, KTUNE_NO_DEVICE, e.what());
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what());
  }
}

ktune_status Engine::override_status(ktune_result& out) noexcept {
  if (const auto* table = override_table()) return report(&out, KTUNE_OK, "KTUNE_DB in use: " + table->summary());
  if (!override_error_.empty()) return report(&out, KTUNE_INVALID_ARGUMENT, override_error_);
  return report(&out, KTUNE_UNSUPPORTED, "KTUNE_DB is not set: the compiled-in table serves");
}

ktune_status Engine::plan(const ktune_mla_decode_args& a, Plan& p, ktune_result& out) noexcept {
  const auto& k = a.key;
  if (k.heads < 1 || k.block_len < 1 || k.batch < 1 || a.page_size < 1 || a.max_pages < 1 ||
      a.max_kv_len < k.block_len)
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  fmt::format("need heads, block_len, batch, page_size, max_pages >= 1 and max_kv_len >= block_len; "
                              "got heads={} block_len={} batch={} page_size={} max_pages={} max_kv_len={}",
                              k.heads, k.block_len, k.batch, a.page_size, a.max_pages, a.max_kv_len));
  try {
    p.current = current();
  } catch (const Unavailable& e) {
    return report(&out, KTUNE_NO_DEVICE, e.what());
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what());
  }
  p.choice = choose(p.current.device->arch, k, p.from_override);
  if (p.choice.status != KTUNE_OK && p.choice.status != KTUNE_OK_FALLBACK)
    return report(&out, p.choice.status, p.choice.reason, &p.choice, 0, p.from_override);
  const auto& kc = *p.choice.kernel;
  p.splits = mla::num_splits({static_cast<int>(k.batch), static_cast<int>(ceil_div(k.heads * k.block_len, kc.rows)),
                              a.max_kv_len, p.current.device->compute_units, kc.split, kc.keys});
  p.workspace_bytes = workspace_for(k, p.splits);
  return report(&out, p.choice.status, p.choice.reason, &p.choice, p.splits, p.from_override);
}

ktune_status Engine::workspace_size(const ktune_mla_decode_args& a, size_t& bytes, ktune_result& out) noexcept {
  Plan p;
  const auto status = plan(a, p, out);
  bytes = p.workspace_bytes;
  return status;
}

ktune_status Engine::mla_decode(const ktune_mla_decode_args& a, ktune_result& out) noexcept {
  if (!a.q || !a.kv_cache || !a.block_table || !a.kv_lens || !a.o)
    return report(&out, KTUNE_INVALID_ARGUMENT, "q, kv_cache, block_table, kv_lens and o must not be null");
  Plan p;
  const auto status = plan(a, p, out);
  if (status != KTUNE_OK && status != KTUNE_OK_FALLBACK) return status;
  if (a.workspace_bytes < p.workspace_bytes || (p.workspace_bytes > 0 && a.workspace == nullptr))
    return report(&out, KTUNE_INVALID_ARGUMENT,
                  fmt::format("this launch splits the keys {} ways and needs {} bytes of workspace, got {} at {} "
                              "(ask ktune_mla_decode_workspace_size)",
                              p.splits, p.workspace_bytes, a.workspace_bytes, a.workspace),
                  &p.choice, p.splits, p.from_override);
  const auto& kc = *p.choice.kernel;
  if (!takes_runtime_arguments(code_object(kc.code_object)))
    return report(&out, KTUNE_NO_CODE_OBJECT,
                  fmt::format("the packaged kernel {} does not take the arguments this runtime passes: rebuild "
                              "ktune_runtime with the ktune that made the package",
                              code_object(kc.code_object).main_symbol),
                  &p.choice, p.splits, p.from_override);
  LoadedKernels kernels;
  try {
    kernels = cache_.get(*p.current.api, *p.current.device, kc.code_object, static_cast<size_t>(kc.shared_bytes));
  } catch (const MissingCodeObject& e) {
    return report(&out, KTUNE_NO_CODE_OBJECT, e.what(), &p.choice, p.splits, p.from_override);
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what(), &p.choice, p.splits, p.from_override);
  }

  // Kernel arguments in the order of the kernel's parameter list (templates/mla_decode).
  const auto& k = a.key;
  const void* q = a.q;
  const void* kv = a.kv_cache;
  const void* block_table = a.block_table;
  const void* kv_lens = a.kv_lens;
  void* o = a.o;
  void* lse = a.lse;
  auto* part_o = p.splits > 1 ? static_cast<float*>(a.workspace) : nullptr;
  float* part_lse = p.splits > 1 ? part_o + static_cast<size_t>(p.splits) * rows_of(k) * mla::kValueDim : nullptr;
  float softmax_scale = a.softmax_scale, kv_scale = a.kv_scale;
  int heads = static_cast<int>(k.heads), block_len = static_cast<int>(k.block_len), max_pages = a.max_pages,
      page_size = a.page_size, splits = p.splits;
  void* main_args[] = {&q,        &kv,       &block_table,   &kv_lens,  &o,     &lse,       &part_o,    &part_lse,
                       &softmax_scale, &kv_scale, &heads, &block_len, &max_pages, &page_size, &splits};
  Launch main;
  main.grid[0] = static_cast<unsigned>(ceil_div(k.heads * k.block_len, kc.rows));
  main.grid[1] = static_cast<unsigned>(p.splits);
  main.grid[2] = static_cast<unsigned>(k.batch);
  main.block = static_cast<unsigned>(kc.threads);
  main.shared_bytes = static_cast<size_t>(kc.shared_bytes);
  try {
    p.current.api->launch(kernels.main, main, a.stream, main_args);
    if (p.splits > 1) {
      int total_rows = static_cast<int>(rows_of(k));
      void* combine_args[] = {&part_o, &part_lse, &o, &lse, &total_rows, &splits};
      Launch combine;
      combine.grid[0] = static_cast<unsigned>(total_rows);
      combine.block = mla::kCombineThreads;
      p.current.api->launch(kernels.combine, combine, a.stream, combine_args);
    }
  } catch (const std::exception& e) {
    return report(&out, KTUNE_LAUNCH_FAILED, e.what(), &p.choice, p.splits, p.from_override);
  }
  return status;
}

}  // namespace ktune::runtime
