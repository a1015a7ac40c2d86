// Cost of select() on a generated dispatch header: the committed H200 table (results/), one
// benchmark per resolution rule. Each benchmark first checks that its key takes the rule it is
// named after, so that a change of the table cannot silently turn it into a different one.
//   build/tests/ktune_select_bench [--benchmark_format=json]
#include <string>
#include <string_view>

#include <benchmark/benchmark.h>

#include KTUNE_SELECT_BENCH_HEADER

namespace {

namespace d = ktune_dispatch::mla_decode;
using Kind = d::Selection::Kind;

constexpr std::string_view kArch = "sm_90a";

// Runs select() on `key` in a loop the compiler cannot fold: select() is constexpr, so the key
// and the arch go through memory the optimizer must assume changed.
void run(benchmark::State& state, d::Key key, std::string_view arch, Kind expected, std::string_view reason) {
  const d::Selection first = d::select(arch, key);
  if (first.kind != expected || std::string_view(first.reason).find(reason) == std::string_view::npos) {
    state.SkipWithError(
        ("the key no longer takes this rule: got " + std::string(d::to_string(first.kind)) + ": " + first.reason)
            .c_str());
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(arch);
    const d::Selection s = d::select(arch, key);
    benchmark::DoNotOptimize(s);
  }
}

void BM_select_exact(benchmark::State& state) {
  run(state, {16, 1, 1, d::KvDtype::bf16, 32}, kArch, Kind::kernel, "exact match");
}
void BM_select_batch_bucket(benchmark::State& state) {
  run(state, {128, 4, 0, d::KvDtype::fp8_e4m3fn, 100}, kArch, Kind::kernel, "batch bucket");
}
void BM_select_covering(benchmark::State& state) {
  run(state, {12, 3, 1, d::KvDtype::bf16, 32}, kArch, Kind::fallback, "smallest larger");
}
void BM_select_not_tuned(benchmark::State& state) {
  run(state, {16, 1, 1, d::KvDtype::fp8_e4m3fnuz, 32}, kArch, Kind::unsupported, "not tuned");
}
void BM_select_unknown_arch(benchmark::State& state) {
  run(state, {16, 1, 1, d::KvDtype::bf16, 32}, "gfx942", Kind::unsupported, "unknown arch");
}
void BM_select_out_of_range(benchmark::State& state) {
  run(state, {16, 1, 1, d::KvDtype::bf16, 0}, kArch, Kind::unsupported, "out of range");
}

BENCHMARK(BM_select_exact);
BENCHMARK(BM_select_batch_bucket);
BENCHMARK(BM_select_covering);
BENCHMARK(BM_select_not_tuned);
BENCHMARK(BM_select_unknown_arch);
BENCHMARK(BM_select_out_of_range);

}  // namespace

BENCHMARK_MAIN();
