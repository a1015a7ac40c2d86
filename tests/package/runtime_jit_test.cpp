// Run-time compiles: a KTUNE_DB winner that no package holds is compiled at its first launch, once
// per process however many threads ask, kept like a packaged code object; a failure is a status
// with the compiler log's beginning; with compiling off it is KTUNE_NO_CODE_OBJECT. A fake compiler
// drives the engine on the CPU; NVRTC (sm_90a) and hipRTC (gfx90a) compile for real where present.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "backend/backend.hpp"
#include "package/rope_db.hpp"
#include "package/runtime_support.hpp"

namespace ktune::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test::fake_engine;
using test::FakeApi;
using test::rope_args;

constexpr ktune_qk_rope_cache_key kFull{16, 1, 0, 0, 1, 64};  // bf16 q_out: 3 unfused kernels
constexpr ktune_qk_rope_cache_key kFp8Q{16, 1, 1, 0, 1, 64};  // fp8 q_out: 4 unfused kernels
// A fused config that no committed package holds.
const Params kUnpackagedFused = rope::to_params(rope::Config{rope::Layout::token, 2, 1, 512, true, true});

std::string rope_hash() { return std::string(test::sm90_table(kQkRopeCache).template_hash); }

// Returns lowered names with the parameter list the runtime passes (or fails, with a log).
class FakeCompiler final : public jit::Compiler {
 public:
  explicit FakeCompiler(bool fail = false) : fail_(fail) {}
  std::string version() const override { return "fake 1.0"; }
  backend::CompileResult compile(const backend::CompileRequest& req) const override {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));  // widens the window for a second compile
    if (fail_) throw CompileError("fake could not compile qk_rope_cache.hip", "qk_rope_cache.hip(7): error: planted");
    backend::CompileResult r;
    r.code = {'c', 'o', 'd', 'e'};
    for (size_t i = 0; i < req.name_expressions.size(); ++i)
      r.lowered_names.push_back("_ZN5ktune13qk_rope_cacheILi0EEEvPKtS2_S2_S2_PKxS4_PKfS6_PhS7_ffiixi");
    return r;
  }
  mutable std::atomic<int> calls{0};

 private:
  bool fail_;
};

test::FakeSetup with_override(const std::string& db, std::shared_ptr<FakeCompiler> compiler) {
  test::FakeSetup f;
  f.override_db = db;
  if (compiler) f.jit = [compiler](std::string_view) { return compiler; };
  return f;
}

TEST(RuntimeJit, CompilesAnUnpackagedWinnerOnceUnderConcurrentLaunches) {
  test::RopeDb db(rope_hash());
  db.ok(test::rope_key(16, 1, 0, 0, 1, 64), kUnpackagedFused);
  auto compiler = std::make_shared<FakeCompiler>();
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, with_override(db.path(), compiler));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        ktune_result r{};
        if (engine->qk_rope_cache(rope_args(kFull), r) != KTUNE_OK || r.from_override != 1) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(compiler->calls, 1);
  EXPECT_EQ(engine->run_time_compiles(), 1u);
  EXPECT_EQ(api->loads, 1);
  ASSERT_EQ(api->launches.size(), 80u);
  EXPECT_EQ(api->launches[0].launch.block, 512u);
}

TEST(RuntimeJit, FailureIsAStatusWithTheLogAndIsNotRetried) {
  test::RopeDb db(rope_hash());
  db.ok(test::rope_key(16, 1, 0, 0, 1, 64), kUnpackagedFused);
  auto compiler = std::make_shared<FakeCompiler>(/*fail=*/true);
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, with_override(db.path(), compiler));
  ktune_result r{};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(engine->qk_rope_cache(rope_args(kFull), r), KTUNE_NO_CODE_OBJECT);
    EXPECT_THAT(r.message, AllOf(HasSubstr("at run time failed"), HasSubstr("error: planted")));
  }
  EXPECT_EQ(compiler->calls, 1);
  EXPECT_TRUE(api->launches.empty());
}

TEST(RuntimeJit, OffMeansNoCodeObject) {
  test::RopeDb db(rope_hash());
  db.ok(test::rope_key(16, 1, 0, 0, 1, 64), kUnpackagedFused);
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, with_override(db.path(), nullptr));
  ktune_result r{};
  EXPECT_EQ(engine->qk_rope_cache(rope_args(kFull), r), KTUNE_NO_CODE_OBJECT);
  EXPECT_THAT(r.message, AllOf(HasSubstr("KTUNE_JIT=0"), HasSubstr("ktune package")));
  EXPECT_EQ(engine->select_for_arch(kQkRopeCache, "sm_90a", key_values(kFull), r), KTUNE_NO_CODE_OBJECT);
  EXPECT_TRUE(api->launches.empty());
}

// The real compilers: the unfused baseline (4 kernels for an fp8 q_out) compiled from the built-in
// templates, its lowered names checked against the parameter lists the runtime passes, launched
// in order.
void compile_for_real(const std::string& arch) {
  const backend::Backend& b = backend::for_arch(arch);
  if (!b.compiler_available(arch))
    GTEST_SKIP() << "no compiler for " << arch << ": " << b.compiler_unavailable_reason(arch);
  test::RopeDb db(rope_hash(), arch);
  db.ok(test::rope_key(16, 1, 1, 0, 1, 64), test::unfused_config(8, 256, false));
  test::FakeSetup f;
  f.arch = arch;
  f.override_db = db.path();
  f.jit = backend_compilers();
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, std::move(f));
  auto args = rope_args(kFp8Q);
  size_t bytes = 0;
  ktune_result r{};
  ASSERT_EQ(engine->qk_rope_cache_workspace_size(args, bytes, r), KTUNE_OK) << r.message;
  std::vector<char> workspace(bytes);
  args.workspace = workspace.data();
  args.workspace_bytes = bytes;
  ASSERT_EQ(engine->qk_rope_cache(args, r), KTUNE_OK) << r.message;
  EXPECT_EQ(r.from_override, 1);
  EXPECT_EQ(engine->run_time_compiles(), 1u);
  ASSERT_EQ(api->launches.size(), 4u);
  EXPECT_THAT(api->launches[0].symbol, HasSubstr("unfused_rope"));
  EXPECT_THAT(api->launches[3].symbol, HasSubstr("unfused_quantise"));
}

TEST(RuntimeJit, NvrtcCompilesTheUnfusedBaselineForSm90a) { compile_for_real("sm_90a"); }
TEST(RuntimeJit, HiprtcCompilesTheUnfusedBaselineForGfx90a) { compile_for_real("gfx90a"); }

}  // namespace
}  // namespace ktune::runtime
