#pragma once
// A GPU API that records instead of launching, so that the runtime's selection, launch geometry,
// statuses and code-object cache are tested on the CPU with the compiled-in package (the
// committed H200 table, packaged at build time).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "dispatch/runtime/engine.hpp"
#include "ktune/runtime.h"

namespace ktune::runtime::test {

struct RecordedLaunch {
  bool combine;  // the combine pass (else the main kernel)
  Launch launch;
  int splits;  // the last argument of both kernels
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
    return {id, arch_, compute_units_};
  }
  void* load(std::string_view code) const override {
    ++loads;
    std::this_thread::sleep_for(load_delay);
    return new std::string(code);
  }
  void unload(void* module) const noexcept override {
    ++unloads;
    delete static_cast<std::string*>(module);
  }
  // The module's address for the main kernel, one byte past it for the combine (modules are
  // aligned, so the low bit tells them apart at launch).
  void* function(void* module, const std::string& symbol, size_t) const override {
    std::lock_guard lock(mutex_);
    symbols.push_back(symbol);
    return static_cast<char*>(module) + (symbol.find("mla_combine") != std::string::npos ? 1 : 0);
  }
  void launch(void* function, const Launch& l, void*, void** args) const override {
    if (!record_launches) return;
    std::lock_guard lock(mutex_);
    const bool combine = (reinterpret_cast<uintptr_t>(function) & 1) != 0;
    // The split count is the last argument of the main kernel (15 arguments) and the combine (6).
    launches.push_back({combine, l, *static_cast<int*>(args[combine ? 5 : 14])});
  }

  // Which device is current on every thread (nullptr: none).
  void set_device(const void* id) { device_ = id; }

  // A slow load widens the window in which concurrent first launches could load twice.
  std::chrono::milliseconds load_delay{20};
  mutable std::atomic<int> loads{0}, unloads{0}, describes{0};
  mutable std::vector<std::string> symbols;
  mutable std::vector<RecordedLaunch> launches;
  bool record_launches = true;  // off: launches cost nothing (benchmarks)

 private:
  std::string arch_;
  int compute_units_;
  std::atomic<const void*> device_{reinterpret_cast<const void*>(1)};
  mutable std::mutex mutex_;
};

// The package whose code objects the tests load: $KTUNE_PACKAGE_DIR (on the GPU machine, where the
// build tree is not), else the package this build compiled in.
inline std::string package_dir() {
  const char* dir = std::getenv("KTUNE_PACKAGE_DIR");
  return dir != nullptr && *dir != '\0' ? dir : KTUNE_RUNTIME_PACKAGE_DIR;
}

// An engine over one FakeApi (kept by the test through `api`), the build's package directory and
// an optional KTUNE_DB.
inline std::unique_ptr<Engine> fake_engine(FakeApi*& api, std::string arch = "sm_90a", int compute_units = 132,
                                           std::optional<std::string> override_db = std::nullopt,
                                           std::vector<std::string> dirs = {package_dir()}) {
  Engine::Setup s;
  auto fake = std::make_unique<FakeApi>(std::move(arch), compute_units);
  api = fake.get();
  s.apis.push_back(std::move(fake));
  s.package_dirs = std::move(dirs);
  s.override_db = std::move(override_db);
  return std::make_unique<Engine>(std::move(s));
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
