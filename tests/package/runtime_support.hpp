#pragma once
// A GPU API that records instead of launching, so that the runtime's selection, launch geometry,
// statuses and code-object cache are tested on the CPU with the compiled-in packages (the sweeps of
// the device KTUNE_RUNTIME_RESULTS names, by default the H200's: its default sweep of mla_decode and
// smoke sweep of qk_rope_cache, packaged at build time).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "dispatch/runtime/engine.hpp"
#include "ktune/runtime.h"
#include "unit/package_support.hpp"

namespace ktune::runtime::test {

struct RecordedLaunch {
  std::string symbol;  // the kernel's lowered name
  bool combine;        // mla_decode's combine pass
  Launch launch;
  int splits;                   // mla_decode: the last argument of both kernels; 0 for other families
  std::vector<void*> pointers;  // qk_rope_cache: the values of the leading pointer arguments
};

class FakeApi final : public GpuApi {
 public:
  FakeApi(std::string arch, int compute_units) : arch_(std::move(arch)), compute_units_(compute_units) {}

  std::string_view name() const noexcept override { return "fake"; }
  const void* current() const override {
    if (device_ == nullptr) throw Unavailable("the fake API has no current device");
    return device_;
  }
  Device describe(const void* id) const override {
    ++describes;
    return {id, arch_, compute_units_, overlapping_launches};
  }
  void* load(std::string_view code) const override {
    ++loads;
    std::this_thread::sleep_for(load_delay);
    {
      std::lock_guard lock(mutex_);
      loaded.emplace_back(code);
    }
    return new std::string(code);
  }
  void unload(void* module) const noexcept override {
    ++unloads;
    delete static_cast<std::string*>(module);
  }
  // A handle that names the symbol, so that a launch records which kernel it ran.
  void* function(void* module, const std::string& symbol, size_t) const override {
    std::lock_guard lock(mutex_);
    symbols.push_back(symbol);
    return &functions_.emplace_back(symbol);
  }
  void launch(void* function, const Launch& l, void*, void** args) const override {
    if (!record_launches) return;
    std::lock_guard lock(mutex_);
    const std::string& symbol = *static_cast<const std::string*>(function);
    const bool combine = symbol.find("mla_combine") != std::string::npos;
    RecordedLaunch r{symbol, combine, l, 0, {}};
    // The split count is the last argument of mla_decode's main kernel (15 arguments) and combine (6).
    if (symbol.find("mla_") != std::string::npos) r.splits = *static_cast<int*>(args[combine ? 5 : 14]);
    // qk_rope_cache's kernels take at least 3 pointers first.
    else
      for (int i = 0; i < 3; ++i) r.pointers.push_back(*static_cast<void**>(args[i]));
    launches.push_back(std::move(r));
  }

  // Which device is current on every thread (nullptr: none).
  void set_device(const void* id) { device_ = id; }

  // A slow load widens the window in which concurrent first launches could load twice.
  std::chrono::milliseconds load_delay{20};
  mutable std::atomic<int> loads{0}, unloads{0}, describes{0};
  mutable std::vector<std::string> symbols;
  mutable std::vector<std::string> loaded;  // the bytes of every code object loaded
  mutable std::vector<RecordedLaunch> launches;
  bool record_launches = true;        // off: launches cost nothing (benchmarks)
  bool overlapping_launches = false;  // Device::overlapping_launches of the device it describes

 private:
  std::string arch_;
  int compute_units_;
  std::atomic<const void*> device_{reinterpret_cast<const void*>(1)};
  mutable std::mutex mutex_;
  mutable std::deque<std::string> functions_;
};

// Where the tests' code objects are: $KTUNE_PACKAGE_DIR (on the GPU machine, where the build tree
// is not), else the root of the packages this build compiled in.
inline std::string package_root() {
  const char* dir = std::getenv("KTUNE_PACKAGE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : KTUNE_RUNTIME_PACKAGE_ROOT;
}

struct FakeSetup {
  std::string arch = "sm_90a";
  int compute_units = 132;
  std::optional<std::string> override_db;
  std::vector<std::string> roots = {package_root()};
  std::vector<const CompiledTable*> tables = {compiled_tables().begin(), compiled_tables().end()};
  JitCompilerFor jit;  // empty: compiling at run time is off
};

// An engine over one FakeApi (kept by the test through `api`).
inline std::unique_ptr<Engine> fake_engine(FakeApi*& api, FakeSetup f) {
  Engine::Setup s;
  auto fake = std::make_unique<FakeApi>(std::move(f.arch), f.compute_units);
  api = fake.get();
  s.apis.push_back(std::move(fake));
  s.package_roots = std::move(f.roots);
  s.override_db = std::move(f.override_db);
  s.tables = std::move(f.tables);
  s.jit = std::move(f.jit);
  return std::make_unique<Engine>(std::move(s));
}

// The same with the build's packages and an optional KTUNE_DB.
inline std::unique_ptr<Engine> fake_engine(FakeApi*& api, std::string arch = "sm_90a", int compute_units = 132,
                                           std::optional<std::string> override_db = std::nullopt,
                                           std::vector<std::string> roots = {package_root()}) {
  FakeSetup f;
  f.arch = std::move(arch);
  f.compute_units = compute_units;
  f.override_db = std::move(override_db);
  f.roots = std::move(roots);
  return fake_engine(api, std::move(f));
}

// The compiled-in table of `family` for sm_90a.
inline const CompiledTable& sm90_table(const RuntimeFamily& family) {
  const CompiledTable* t = find_table(compiled_tables(), family, "sm_90a");
  if (t == nullptr) throw Error(fmt::format("this build compiled in no {} table for sm_90a", family.name));
  return *t;
}

inline Params key_params(const ktune_mla_decode_key& k) {
  return package_test::mla_key(static_cast<int>(k.heads), static_cast<int>(k.block_len), k.causal != 0,
                               static_cast<num::KvDtype>(k.kv_dtype), static_cast<int>(k.batch));
}

inline Choice compiled(const ktune_mla_decode_key& k) { return sm90_table(kMlaDecode).select(key_values(k).data()); }

// The compiled table's kernel for `k`: the committed H200 results change with every re-sweep, so
// the tests read the winner from the table instead of repeating it, with `split` (a host knob) as
// given.
inline Params compiled_config(const ktune_mla_decode_key& k, int split) {
  const Choice c = compiled(k);
  if (!c.kernel) throw Error("the compiled table has no kernel for " + key_params(k).canonical());
  Params config;
  for (size_t i = 0; i < kMlaDecode.config_fields.size(); ++i)
    config.set(kMlaDecode.config_fields[i], c.kernel->config[i]);
  config.set("split", split);
  return config;
}

// A launch of `key` with fake (non-null) pointers and no workspace.
inline ktune_mla_decode_args launch_args(ktune_mla_decode_key key, int max_kv_len = 4096) {
  static char memory[64];
  ktune_mla_decode_args a{};
  a.q = a.kv_cache = a.o = memory;
  a.block_table = a.kv_lens = reinterpret_cast<const int32_t*>(memory);
  a.softmax_scale = 0.07f;
  a.kv_scale = 1.0f;
  a.max_pages = 64;
  a.page_size = 64;
  a.max_kv_len = max_kv_len;
  a.key = key;
  return a;
}

}  // namespace ktune::runtime::test

namespace ktune::runtime::test {

// A launch of qk_rope_cache for `key` with fake (non-null) pointers and no workspace.
inline ktune_qk_rope_cache_args rope_args(ktune_qk_rope_cache_key key, int64_t table_rows = 4096) {
  static char memory[64];
  ktune_qk_rope_cache_args a{};
  a.q_nope = a.q_pe = a.kv_c = a.k_pe = a.kv_cache = a.q_out = memory;
  a.positions = a.slot_mapping = reinterpret_cast<const int64_t*>(memory);
  a.cos_table = a.sin_table = reinterpret_cast<const float*>(memory);
  a.k_scale = a.q_scale = 1.0f;
  a.table_rows = table_rows;
  a.key = key;
  return a;
}

inline constexpr size_t kClamp = 4;  // qk_rope_cache config field

// The kernel of the compiled-in sm_90a qk_rope_cache table for `k`, a tuned key.
inline const KernelChoice& compiled_kernel(const ktune_qk_rope_cache_key& k) {
  const Choice c = sm90_table(kQkRopeCache).select(key_values(k).data());
  if (c.kernel == nullptr) throw Error("the compiled qk_rope_cache table has no kernel for the test key");
  return *c.kernel;
}

// A tuned full-rope key whose winner trusts its positions (no clamp): the key whose calls with a
// 1-row table the runtime must refuse. Which keys these are depends on the sweep (6 of the 8 in the
// committed H200 smoke sweep); a table without one would leave the refusal untested, so the tests
// fail rather than skip.
inline ktune_qk_rope_cache_key non_clamping_full_key() {
  for (int64_t heads : {16, 128})
    for (int64_t q_dtype : {0, 1})
      for (int64_t tokens : {64, 4096}) {
        const ktune_qk_rope_cache_key k{heads, 1, q_dtype, 0, 1, tokens};
        if (compiled_kernel(k).config[kClamp] == 0) return k;
      }
  throw Error("every full-rope winner of the compiled qk_rope_cache table clamps: no call to refuse");
}

}  // namespace ktune::runtime::test
