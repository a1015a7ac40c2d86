// qk_rope_cache through the runtime engine on the CPU (a fake GPU API records the launches):
// selection from the compiled-in sm_90a package, the fused kernel's launch geometry, the
// precondition check against the call (a 1-row table needs a clamping kernel), the statuses that
// stop a launch, and the kernels' parameter lists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "package/runtime_support.hpp"

namespace ktune::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test::fake_engine;
using test::FakeApi;
using test::rope_args;

// Tuned in every committed smoke sweep: 16 heads, fp8 cache, bf16 q_out, NeoX, 64 tokens; full rope
// and identity.
constexpr ktune_qk_rope_cache_key kFull{16, 1, 0, 0, 1, 64};
constexpr ktune_qk_rope_cache_key kIdentity{16, 1, 0, 1, 1, 64};
constexpr size_t kLayout = 0, kTokensPerCta = 2, kThreads = 3, kFused = 5;
using test::compiled_kernel;
using test::kClamp;
using test::non_clamping_full_key;

TEST(RuntimeRope, LaunchesTheFusedKernelWithItsGeometry) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  ktune_result r{};
  for (const auto& key : {kFull, kIdentity, ktune_qk_rope_cache_key{128, 1, 1, 0, 1, 4096}}) {
    api->launches.clear();
    const KernelChoice& kc = compiled_kernel(key);
    ASSERT_EQ(kc.config[kFused], 1);
    size_t bytes = 7;
    ASSERT_EQ(engine->qk_rope_cache_workspace_size(rope_args(key), bytes, r), KTUNE_OK) << r.message;
    EXPECT_EQ(bytes, 0u);  // a fused kernel needs none
    ASSERT_EQ(engine->qk_rope_cache(rope_args(key), r), KTUNE_OK) << r.message;
    EXPECT_STREQ(r.message, "exact match");
    ASSERT_EQ(api->launches.size(), 1u);
    const auto& l = api->launches[0].launch;
    EXPECT_THAT(api->launches[0].symbol, HasSubstr("qk_rope_cache"));
    EXPECT_EQ(l.grid[0], static_cast<unsigned>((key.tokens + kc.config[kTokensPerCta] - 1) / kc.config[kTokensPerCta]));
    EXPECT_EQ(l.grid[1], kc.config[kLayout] == 0 ? 1u : static_cast<unsigned>(key.heads + 1));
    EXPECT_EQ(l.block, static_cast<unsigned>(kc.config[kThreads]));
    EXPECT_EQ(l.shared_bytes, 0u);
  }
  // Fewer heads than tuned: the 16-head kernel serves 12 (heads is a run-time argument), with the
  // grid of 12 heads.
  api->launches.clear();
  ASSERT_EQ(engine->qk_rope_cache(rope_args({12, 1, 0, 1, 1, 64}), r), KTUNE_OK_FALLBACK) << r.message;
  EXPECT_EQ(r.fallback_key.qk_rope_cache.heads, 16);
  ASSERT_EQ(api->launches.size(), 1u);
  if (compiled_kernel(kIdentity).config[kLayout] == 1) {
    EXPECT_EQ(api->launches[0].launch.grid[1], 13u);
  }
}

// docs/kernels/qk_rope_cache.md: a dispatcher must never route an identity rope (a 1-row table) to a kernel that trusts
// its positions. The table keeps identity keys on clamping kernels; the runtime also refuses a call
// whose table has one row when the selected kernel does not clamp, whatever its key says.
TEST(RuntimeRope, RefusesACallThatBreaksTheKernelsPrecondition) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  ktune_result r{};
  ASSERT_EQ(compiled_kernel(kIdentity).config[kClamp], 1) << "codegen must keep identity keys on clamping kernels";
  const ktune_qk_rope_cache_key full = non_clamping_full_key();
  auto identity = full;
  identity.rope = 1;
  // A full-rope key with a 1-row table: the non-clamping winner would read row `position`.
  EXPECT_EQ(engine->qk_rope_cache(rope_args(full, 1), r), KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(r.message, AllOf(HasSubstr("cannot serve this call"), HasSubstr("only clamping variants")));
  EXPECT_TRUE(api->launches.empty());
  // The same call as an identity rope is served by a clamping kernel; a full table is fine for the
  // non-clamping one.
  EXPECT_EQ(engine->qk_rope_cache(rope_args(identity, 1), r), KTUNE_OK) << r.message;
  EXPECT_EQ(engine->qk_rope_cache(rope_args(full, 2), r), KTUNE_OK) << r.message;
  EXPECT_EQ(api->launches.size(), 2u);
}

TEST(RuntimeRope, RemembersPreconditionAnswersUpToABound) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  api->record_launches = false;
  ktune_result r{};
  // Every token count is another key: a serving process's run-time sizes must not grow the memo
  // without end, and the answers stay right past the bound.
  const int64_t calls = static_cast<int64_t>(Engine::kRememberedPreconditions) + 100;
  for (int64_t tokens = 1; tokens <= calls; ++tokens) {
    auto key = kIdentity;
    key.tokens = tokens;
    ASSERT_EQ(engine->qk_rope_cache(rope_args(key, 1), r), KTUNE_OK) << "tokens=" << tokens << ": " << r.message;
  }
  EXPECT_EQ(engine->remembered_preconditions(), Engine::kRememberedPreconditions);
  EXPECT_EQ(engine->qk_rope_cache(rope_args(non_clamping_full_key(), 1), r), KTUNE_INVALID_ARGUMENT)
      << "refused past the bound too";
}

TEST(RuntimeRope, StatusesInsteadOfAborts) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  ktune_result r{};
  auto null_cos = rope_args(kFull);
  null_cos.cos_table = nullptr;
  EXPECT_EQ(engine->qk_rope_cache(null_cos, r), KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(r.message, HasSubstr("cos_table"));
  auto zero_scale = rope_args(kFull);
  zero_scale.q_scale = 0;
  EXPECT_EQ(engine->qk_rope_cache(zero_scale, r), KTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(engine->qk_rope_cache(rope_args({16, 1, 0, 0, 1, 0}), r), KTUNE_INVALID_ARGUMENT);  // no tokens
  EXPECT_EQ(engine->qk_rope_cache(rope_args({16, 2, 0, 0, 1, 64}), r), KTUNE_UNSUPPORTED);      // fp8_e4m3fnuz: untuned
  EXPECT_THAT(r.message, HasSubstr("not tuned"));
  EXPECT_EQ(engine->qk_rope_cache(rope_args({256, 1, 0, 0, 1, 64}), r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message, HasSubstr("heads is out of range"));
  EXPECT_TRUE(api->launches.empty());
  api->set_device(nullptr);
  EXPECT_EQ(engine->qk_rope_cache(rope_args(kFull), r), KTUNE_NO_DEVICE);
  // Another arch: unsupported, naming the arches the library has.
  FakeApi* amd = nullptr;
  auto amd_engine = fake_engine(amd, "gfx942", 304);
  EXPECT_EQ(amd_engine->qk_rope_cache(rope_args(kFull), r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message, HasSubstr("unknown arch: this ktune_runtime has qk_rope_cache tables for sm_90a"));
}

// The launch code passes templates/qk_rope_cache's parameter lists: every packaged kernel must
// take them, and a changed list is refused.
TEST(RuntimeRope, PackagedKernelsTakeTheRuntimesArguments) {
  const auto& objects = test::sm90_table(kQkRopeCache).code_objects;
  ASSERT_GT(objects.size(), 0u);
  for (const CodeObject& o : objects) EXPECT_TRUE(kQkRopeCache.takes_runtime_arguments(o)) << o.symbols[0];
  const std::string longer = std::string(objects[0].symbols[0]) + "i";
  const char* changed_symbols[] = {longer.c_str()};
  CodeObject changed = objects[0];
  changed.symbols = changed_symbols;
  EXPECT_FALSE(kQkRopeCache.takes_runtime_arguments(changed));
  // An mla_decode code object is not a qk_rope_cache one.
  EXPECT_FALSE(kQkRopeCache.takes_runtime_arguments(test::sm90_table(kMlaDecode).code_objects[0]));
}

}  // namespace
}  // namespace ktune::runtime
