// Costs of ktune_runtime (issue 5): select() from the compiled-in table (target: under 20 ns) and
// from a KTUNE_DB override table, and launches through the engine: with a GPU API that does
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
constexpr ktune_mla_decode_key kCovered{12, 3, 1, 0, 32};

// KTUNE_DB for the benchmarks: the keys of the committed smoke table, each with a packaged config.
struct OverrideDb {
  package_test::MlaDb m;
  OverrideDb() {
    const auto run = m.run("sm_90a", "NVIDIA H200", std::string(compiled_package().template_hash));
    for (int heads : {16, 128})
      for (int block_len : {1, 2, 4})
        for (bool causal : {false, true})
          for (auto kv : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn})
            m.ok(run, package_test::mla_key(heads, block_len, causal, kv), package_test::mla_config(16, 32, 2, 2), 1.0);
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

void BM_select_compiled(benchmark::State& state, ktune_mla_decode_key key, ktune_status expected) {
  std::string_view arch = "sm_90a";
  if (!answers(state, select_compiled(arch, key).status, expected, "compiled select")) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(arch);
    auto c = select_compiled(arch, key);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK_CAPTURE(BM_select_compiled, exact, kExact, KTUNE_OK);
BENCHMARK_CAPTURE(BM_select_compiled, covering, kCovered, KTUNE_OK_FALLBACK);

void BM_select_override(benchmark::State& state, ktune_mla_decode_key key, ktune_status expected) {
  const OverrideTable table(override_db().m.path(), compiled_package().template_hash);
  std::string_view arch = "sm_90a";
  const auto first = table.select(arch, key);
  if (!answers(state, first ? first->status : KTUNE_UNSUPPORTED, expected, "override select")) return;
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    auto c = table.select(arch, key);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK_CAPTURE(BM_select_override, exact, kExact, KTUNE_OK);
BENCHMARK_CAPTURE(BM_select_override, covering, kCovered, KTUNE_OK_FALLBACK);

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
  s.package_dirs = {test::package_dir()};
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
