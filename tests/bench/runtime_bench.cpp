// Costs of ktune_runtime: select() from the compiled-in table of the device's arch
// (target: under 20 ns; the runtime's path: the table of (family, arch), then its select()) for
// both families, and from a KTUNE_DB override table, and launches through the engine: with a GPU API that does
// nothing (the runtime's own host cost, any machine) and, where an NVIDIA GPU is, through CUDA:
// the first launch of a code object on a fresh engine (read, hash check, cuModuleLoadData,
// symbols) and later launches (the host side of ktune::mla_decode up to cuLaunchKernel).
//   build/tests/ktune_runtime_bench [--benchmark_format=json]
// Each benchmark first checks that its call answers as it is named; the CUDA ones report an
// error (not a figure) without a GPU.
#include <dlfcn.h>

#include <optional>
#include <string>

#include <benchmark/benchmark.h>

#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/runtime/engine.hpp"
#include "package/runtime_support.hpp"
#include "unit/package_support.hpp"

namespace {

using namespace ktune;
using namespace ktune::runtime;

constexpr ktune_mla_decode_key kExact{16, 1, 1, 0, 32};
constexpr ktune_mla_decode_key kCovered{20, 5, 1, 0, 32};          // untuned in the default table: 24 x 8 covers it
constexpr ktune_mla_decode_key kOverrideCovered{12, 3, 1, 0, 32};  // the override's 16 x 4 covers it
constexpr ktune_qk_rope_cache_key kRopeExact{16, 1, 0, 0, 1, 64};
constexpr ktune_qk_rope_cache_key kRopeCovered{12, 1, 0, 0, 1, 64};

// KTUNE_DB for the benchmarks: 16 and 128 heads, blocks of 1, 2 and 4, each with the compiled
// table's (packaged) config of its key.
struct OverrideDb {
  package_test::MlaDb m;
  OverrideDb() {
    const auto& table = test::sm90_table(kMlaDecode);
    const auto run = m.run("sm_90a", "NVIDIA H200", std::string(table.template_hash));
    for (int heads : {16, 128})
      for (int block_len : {1, 2, 4})
        for (bool causal : {false, true})
          for (auto kv : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn}) {
            const ktune_mla_decode_key key{heads, block_len, causal ? 1 : 0, static_cast<int64_t>(kv), 32};
            const Choice c = table.select(key_values(key).data());
            if (c.kernel == nullptr) continue;
            Params config;
            for (size_t i = 0; i < kMlaDecode.config_fields.size(); ++i)
              config.set(kMlaDecode.config_fields[i], c.kernel->config[i]);
            m.ok(run, package_test::mla_key(heads, block_len, causal, kv), config, 1.0);
          }
  }
};

const OverrideDb& override_db() {
  static const OverrideDb db;
  return db;
}

bool answers(benchmark::State& state, ktune_status got, ktune_status expected, std::string_view what) {
  if (got == expected) return true;
  state.SkipWithError((std::string(what) + ": got status " + std::to_string(static_cast<int>(got))).c_str());
  return false;
}

// The runtime's compiled select on a device: the table of the device's arch is found at the
// device's first call (Engine::current), so a call is that table's select() (after the override's
// once-flag). `for_arch` adds the lookup of the table of (family, arch) that a select without a
// device (ktune_*_select_for_arch) makes on every call.
template <class CKey>
void BM_select_compiled(benchmark::State& state, const RuntimeFamily* family, CKey key, ktune_status expected,
                        bool for_arch) {
  std::string_view arch = "sm_90a";
  const auto tables = compiled_tables();
  const CompiledTable* device_table = find_table(tables, *family, arch);
  auto select = [&] {
    const CompiledTable* t = for_arch ? find_table(tables, *family, arch) : device_table;
    return t->select(key_values(key).data());
  };
  if (!answers(state, select().status, expected, "compiled select")) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(arch);
    auto c = select();
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK_CAPTURE(BM_select_compiled, mla_decode_exact, &kMlaDecode, kExact, KTUNE_OK, false);
BENCHMARK_CAPTURE(BM_select_compiled, mla_decode_covering, &kMlaDecode, kCovered, KTUNE_OK_FALLBACK, false);
BENCHMARK_CAPTURE(BM_select_compiled, qk_rope_cache_exact, &kQkRopeCache, kRopeExact, KTUNE_OK, false);
BENCHMARK_CAPTURE(BM_select_compiled, qk_rope_cache_covering, &kQkRopeCache, kRopeCovered, KTUNE_OK_FALLBACK, false);
BENCHMARK_CAPTURE(BM_select_compiled, mla_decode_exact_for_arch, &kMlaDecode, kExact, KTUNE_OK, true);
BENCHMARK_CAPTURE(BM_select_compiled, qk_rope_cache_exact_for_arch, &kQkRopeCache, kRopeExact, KTUNE_OK, true);

void BM_select_override(benchmark::State& state, ktune_mla_decode_key key, ktune_status expected) {
  const auto table = OverrideTable::read(override_db().m.path(), kMlaDecode, test::sm90_table(kMlaDecode).template_hash,
                                         compiled_tables());
  std::string_view arch = "sm_90a";
  const auto first = table->select(arch, key_values(key));
  if (!answers(state, first ? first->status : KTUNE_UNSUPPORTED, expected, "override select")) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    auto c = table->select(arch, key_values(key));
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK_CAPTURE(BM_select_override, exact, kExact, KTUNE_OK);
BENCHMARK_CAPTURE(BM_select_override, covering, kOverrideCovered, KTUNE_OK_FALLBACK);

// A launch with no workspace (short context: no split).
ktune_mla_decode_args short_launch() { return test::launch_args(kExact, 64); }

std::unique_ptr<Engine> null_engine() {
  test::FakeApi* api = nullptr;
  auto e = test::fake_engine(api);
  api->load_delay = std::chrono::milliseconds(0);
  api->record_launches = false;
  return e;
}

void BM_launch_null_api_later(benchmark::State& state) {
  auto engine = null_engine();
  const auto args = short_launch();
  ktune_result r{};
  if (!answers(state, engine->mla_decode(args, r), KTUNE_OK, r.message)) return;
  for (auto _ : state) benchmark::DoNotOptimize(engine->mla_decode(args, r));
}
BENCHMARK(BM_launch_null_api_later);

// qk_rope_cache's host side, the precondition check of the selected kernel included.
void BM_launch_null_api_later_qk_rope_cache(benchmark::State& state) {
  auto engine = null_engine();
  const auto args = test::rope_args(kRopeExact);
  ktune_result r{};
  if (!answers(state, engine->qk_rope_cache(args, r), KTUNE_OK, r.message)) return;
  for (auto _ : state) benchmark::DoNotOptimize(engine->qk_rope_cache(args, r));
}
BENCHMARK(BM_launch_null_api_later_qk_rope_cache);

void BM_launch_null_api_first(benchmark::State& state) {
  const auto args = short_launch();
  ktune_result r{};
  for (auto _ : state) {
    state.PauseTiming();
    auto engine = null_engine();
    state.ResumeTiming();
    const auto status = engine->mla_decode(args, r);
    state.PauseTiming();
    if (!answers(state, status, KTUNE_OK, r.message)) break;
    engine.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_launch_null_api_first)->Unit(benchmark::kMicrosecond);

// Device buffers of one exact-key launch (B = 32, L = 1, H = 16, 64 keys each, zeros), on device
// 0's primary context, allocated through the driver directly.
struct CudaLaunch {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  std::string missing;
  ktune_mla_decode_args args{};
  int (*sync)() = nullptr;

  CudaLaunch() {
    if (lib == nullptr) {
      missing = "no libcuda.so.1";
      return;
    }
    auto fn = [&](const char* name) { return dlsym(lib, name); };
    using Dptr = unsigned long long;
    int dev = 0;
    void* ctx = nullptr;
    auto init = reinterpret_cast<int (*)(unsigned)>(fn("cuInit"));
    auto get = reinterpret_cast<int (*)(int*, int)>(fn("cuDeviceGet"));
    auto retain = reinterpret_cast<int (*)(void**, int)>(fn("cuDevicePrimaryCtxRetain"));
    auto set = reinterpret_cast<int (*)(void*)>(fn("cuCtxSetCurrent"));
    auto alloc = reinterpret_cast<int (*)(Dptr*, size_t)>(fn("cuMemAlloc_v2"));
    auto memset = reinterpret_cast<int (*)(Dptr, unsigned char, size_t)>(fn("cuMemsetD8_v2"));
    auto upload = reinterpret_cast<int (*)(Dptr, const void*, size_t)>(fn("cuMemcpyHtoD_v2"));
    sync = reinterpret_cast<int (*)()>(fn("cuCtxSynchronize"));
    if (init(0) != 0 || get(&dev, 0) != 0 || retain(&ctx, dev) != 0 || set(ctx) != 0) {
      missing = "no CUDA device";
      return;
    }
    const size_t rows = 32 * 16, pages = 32;
    Dptr q = 0, kv = 0, table = 0, lens = 0, o = 0, lse = 0;
    alloc(&q, rows * 576 * 2);
    alloc(&kv, pages * 64 * 576 * 2);
    alloc(&table, 32 * 4);
    alloc(&lens, 32 * 4);
    alloc(&o, rows * 512 * 2);
    alloc(&lse, rows * 4);
    memset(q, 0, rows * 576 * 2);
    memset(kv, 0, pages * 64 * 576 * 2);
    std::vector<int32_t> page_of(32), len(32, 64);
    for (int i = 0; i < 32; ++i) page_of[i] = i;
    upload(table, page_of.data(), 32 * 4);
    upload(lens, len.data(), 32 * 4);
    args = short_launch();
    args.q = reinterpret_cast<void*>(q);
    args.kv_cache = reinterpret_cast<void*>(kv);
    args.block_table = reinterpret_cast<const int32_t*>(table);
    args.kv_lens = reinterpret_cast<const int32_t*>(lens);
    args.o = reinterpret_cast<void*>(o);
    args.lse = reinterpret_cast<float*>(lse);
    args.max_pages = 1;
  }
};

CudaLaunch& cuda() {
  static CudaLaunch c;
  return c;
}

std::unique_ptr<Engine> cuda_engine() {
  Engine::Setup s;
  s.apis = vendor_apis(s.no_api_reason);
  s.package_roots = {test::package_root()};
  return std::make_unique<Engine>(std::move(s));
}

void BM_launch_cuda_later(benchmark::State& state) {
  auto& c = cuda();
  if (!c.missing.empty()) return state.SkipWithError(c.missing.c_str());
  auto engine = cuda_engine();
  ktune_result r{};
  if (!answers(state, engine->mla_decode(c.args, r), KTUNE_OK, r.message)) return;
  // Waits for the device every kLaunchesPerSync launches, untimed, so that the launch queue never
  // fills: a full queue would block cuLaunchKernel and time the kernels instead of the host side.
  constexpr int64_t kLaunchesPerSync = 256;
  int64_t launches = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(engine->mla_decode(c.args, r));
    if (++launches % kLaunchesPerSync == 0) {
      state.PauseTiming();
      c.sync();
      state.ResumeTiming();
    }
  }
  c.sync();
}
BENCHMARK(BM_launch_cuda_later);

void BM_launch_cuda_first(benchmark::State& state) {
  auto& c = cuda();
  if (!c.missing.empty()) return state.SkipWithError(c.missing.c_str());
  ktune_result r{};
  for (auto _ : state) {
    state.PauseTiming();
    auto engine = cuda_engine();
    state.ResumeTiming();
    const auto status = engine->mla_decode(c.args, r);
    state.PauseTiming();
    c.sync();
    if (!answers(state, status, KTUNE_OK, r.message)) break;
    engine.reset();
    state.ResumeTiming();
  }
}
BENCHMARK(BM_launch_cuda_first)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
