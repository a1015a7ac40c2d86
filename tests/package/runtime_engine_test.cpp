// The runtime engine (dispatch/runtime) on the CPU with mla_decode: a fake GPU API records what
// would be launched. Selection from the compiled-in package (KTUNE_RUNTIME_RESULTS' table), launch
// geometry and the split-KV workspace, every status that stops a launch, the code-object cache
// under many threads, and the KTUNE_DB override with codegen's validators. qk_rope_cache, several
// arches and run-time compiles: runtime_rope_test.cpp, runtime_multiarch_test.cpp, runtime_jit_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>
#include <vector>

#include "dispatch/runtime/compiled_table.hpp"
#include "dispatch/runtime/family.hpp"
#include "kernels/mla_decode/split_policy.hpp"
#include "package/runtime_support.hpp"
#include "unit/package_support.hpp"

namespace ktune::runtime {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using test::fake_engine;
using test::FakeApi;
using test::launch_args;
using namespace package_test;

constexpr ktune_mla_decode_key kExact{16, 1, 1, 0, 32};  // tuned in every committed sweep

using test::compiled;
using test::compiled_config;
using test::key_params;

constexpr size_t kRows = 0, kKeys = 1, kSplit = 4;

TEST(RuntimeEngine, LaunchesTheSelectedKernelWithItsGeometryAndSplits) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  auto args = launch_args(kExact);
  size_t bytes = 0;
  ktune_result r{};
  ASSERT_EQ(engine->mla_decode_workspace_size(args, bytes, r), KTUNE_OK) << r.message;
  const Params winner = compiled_config(kExact, 0);
  const KernelChoice kc = *compiled(kExact).kernel;
  const int row_tiles = (16 + kc.config[kRows] - 1) / kc.config[kRows];
  const int splits = mla::num_splits(
      {32, row_tiles, 4096, 132, static_cast<int>(kc.config[kSplit]), static_cast<int>(kc.config[kKeys])});
  EXPECT_EQ(r.splits, splits);
  ASSERT_GT(splits, 1);
  EXPECT_EQ(bytes, static_cast<size_t>(splits) * 32 * 16 * 513 * sizeof(float));

  // Without the workspace nothing is launched.
  EXPECT_EQ(engine->mla_decode(args, r), KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(r.message, AllOf(HasSubstr("workspace"), HasSubstr(std::to_string(bytes))));
  EXPECT_TRUE(api->launches.empty());

  std::vector<char> workspace(bytes);
  args.workspace = workspace.data();
  args.workspace_bytes = bytes;
  ASSERT_EQ(engine->mla_decode(args, r), KTUNE_OK) << r.message;
  EXPECT_STREQ(r.message, "exact match");
  ASSERT_EQ(api->launches.size(), 2u);
  const auto& main = api->launches[0];
  EXPECT_FALSE(main.combine);
  EXPECT_EQ(main.launch.grid[0], static_cast<unsigned>(row_tiles));
  EXPECT_EQ(main.launch.grid[1], static_cast<unsigned>(splits));
  EXPECT_EQ(main.launch.grid[2], 32u);
  EXPECT_EQ(main.launch.block, static_cast<unsigned>(winner.at("threads")));
  EXPECT_EQ(static_cast<int64_t>(main.launch.shared_bytes),
            mla_family().launch_info(key_params(kExact), winner).shared_bytes);
  const auto& combine = api->launches[1];
  EXPECT_TRUE(combine.combine);
  EXPECT_EQ(combine.launch.grid[0], 32u * 16u);  // one block per output row
  EXPECT_EQ(combine.launch.block, static_cast<unsigned>(mla::kCombineThreads));
  EXPECT_EQ(combine.splits, splits);
  // On a device without overlapping launches both are ordinary ones ...
  EXPECT_FALSE(main.launch.overlaps_previous);
  EXPECT_FALSE(combine.launch.overlaps_previous);
  // ... and where there are, the combine (which waits for the main kernel) overlaps its tail.
  FakeApi* overlapping = nullptr;
  auto engine_overlapping = fake_engine(overlapping);
  overlapping->overlapping_launches = true;
  ASSERT_EQ(engine_overlapping->mla_decode(args, r), KTUNE_OK) << r.message;
  ASSERT_EQ(overlapping->launches.size(), 2u);
  EXPECT_FALSE(overlapping->launches[0].launch.overlaps_previous);
  EXPECT_TRUE(overlapping->launches[1].launch.overlaps_previous);

  // A short context does not split: one launch, no workspace needed.
  api->launches.clear();
  auto short_args = launch_args(kExact, 64);
  ASSERT_EQ(engine->mla_decode(short_args, r), KTUNE_OK) << r.message;
  EXPECT_EQ(r.splits, 1);
  ASSERT_EQ(api->launches.size(), 1u);
  EXPECT_EQ(api->launches[0].splits, 1);
}

// The launch code passes templates/mla_decode's parameter lists: every packaged kernel must take
// them (a template whose parameters changed fails here, on the CPU, before any GPU run).
TEST(RuntimeEngine, PackagedKernelsTakeTheRuntimesArguments) {
  const auto& objects = test::sm90_table(kMlaDecode).code_objects;
  ASSERT_GT(objects.size(), 0u);
  for (const CodeObject& o : objects)
    EXPECT_TRUE(kMlaDecode.takes_runtime_arguments(o)) << o.symbols[0] << " / " << o.symbols[1];
  // One more int parameter in the main kernel, one fewer in the combine: refused.
  const std::string main = objects[0].symbols[0], combine = objects[0].symbols[1];
  const std::string longer = main + "i", shorter = combine.substr(0, combine.size() - 1);
  const char* changed_main[] = {longer.c_str(), combine.c_str()};
  const char* changed_combine[] = {main.c_str(), shorter.c_str()};
  const char* unchanged[] = {main.c_str(), combine.c_str()};
  CodeObject changed = objects[0];
  changed.symbols = unchanged;
  EXPECT_TRUE(kMlaDecode.takes_runtime_arguments(changed));
  changed.symbols = changed_main;
  EXPECT_FALSE(kMlaDecode.takes_runtime_arguments(changed));
  changed.symbols = changed_combine;
  EXPECT_FALSE(kMlaDecode.takes_runtime_arguments(changed));
}

TEST(RuntimeEngine, CoveringKeyLaunchesAsFallbackAndNamesTheRow) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  auto args = launch_args({20, 5, 1, 0, 32}, 64);  // untuned heads / block_len: covered by 24 x 8
  ktune_result r{};
  ASSERT_EQ(engine->mla_decode(args, r), KTUNE_OK_FALLBACK) << r.message;
  EXPECT_THAT(r.message, HasSubstr("smallest larger"));
  ASSERT_TRUE(r.has_fallback_key);
  EXPECT_EQ(r.fallback_key.mla_decode.heads, 24);
  EXPECT_EQ(r.fallback_key.mla_decode.block_len, 8);
  ASSERT_EQ(api->launches.size(), 1u);
  // The call's 100 rows, not the covering key's 192, in tiles of the covering kernel's rows.
  const int64_t rows = compiled_config({24, 8, 1, 0, 32}, 0).at("rows");
  EXPECT_EQ(api->launches[0].launch.grid[0], static_cast<unsigned>((100 + rows - 1) / rows));
}

TEST(RuntimeEngine, StatusesInsteadOfAborts) {
  ktune_result r{};
  {  // No GPU API at all.
    Engine::Setup s;
    s.no_api_reason = "cuda unavailable: libcuda.so.1: cannot open shared object file";
    Engine engine(std::move(s));
    auto args = launch_args(kExact);
    EXPECT_EQ(engine.mla_decode(args, r), KTUNE_NO_DEVICE);
    EXPECT_THAT(r.message, HasSubstr("libcuda.so.1"));
    EXPECT_EQ(engine.select(kMlaDecode, key_values(kExact), r), KTUNE_NO_DEVICE);
    // Selecting for an arch needs no device.
    EXPECT_EQ(engine.select_for_arch(kMlaDecode, "sm_90a", key_values(kExact), r), KTUNE_OK) << r.message;
  }
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  api->set_device(nullptr);  // an API without a current context
  auto args = launch_args(kExact);
  EXPECT_EQ(engine->mla_decode(args, r), KTUNE_NO_DEVICE);
  EXPECT_THAT(r.message, HasSubstr("no current device"));
  api->set_device(reinterpret_cast<const void*>(1));

  // Out-of-range keys (the default table serves every key in range), null pointers, inconsistent
  // lengths: nothing launched.
  EXPECT_EQ(engine->mla_decode(launch_args({129, 1, 1, 0, 32}), r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message, HasSubstr("heads is out of range"));
  EXPECT_EQ(engine->mla_decode(launch_args({16, 1, 1, 0, 32}, 0), r), KTUNE_INVALID_ARGUMENT);
  auto null_q = launch_args(kExact);
  null_q.q = nullptr;
  EXPECT_EQ(engine->mla_decode(null_q, r), KTUNE_INVALID_ARGUMENT);
  EXPECT_TRUE(api->launches.empty());

  // A device of an arch the package has no table for.
  FakeApi* amd = nullptr;
  auto amd_engine = fake_engine(amd, "gfx942", 304);
  EXPECT_EQ(amd_engine->mla_decode(launch_args(kExact), r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message, HasSubstr("unknown arch"));
}

TEST(RuntimeEngine, MissingOrCorruptCodeObjectIsAStatus) {
  TempDir empty, corrupt;
  ktune_result r{};
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, "sm_90a", 132, std::nullopt, {empty.path()});
  EXPECT_EQ(engine->mla_decode(launch_args(kExact, 64), r), KTUNE_NO_CODE_OBJECT);
  EXPECT_THAT(r.message, AllOf(HasSubstr("none of the package directories"), HasSubstr(empty.path())));

  // Every code object of the package copied with one byte changed.
  for (const CodeObject& o : test::sm90_table(kMlaDecode).code_objects) {
    const std::string file(o.file);
    auto bytes = db::test::read_file(test::package_root() + "/mla_decode-sm_90a/" + file);
    bytes[bytes.size() / 2] ^= 1;
    db::test::write_file(corrupt.file(file), bytes);
  }
  auto corrupted = fake_engine(api, "sm_90a", 132, std::nullopt, {corrupt.path()});
  EXPECT_EQ(corrupted->mla_decode(launch_args(kExact, 64), r), KTUNE_NO_CODE_OBJECT);
  EXPECT_THAT(r.message, HasSubstr("is corrupt"));
  EXPECT_EQ(api->loads, 0);
}

TEST(RuntimeEngine, ConcurrentFirstLaunchesLoadEachCodeObjectOncePerDevice) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  // Two keys of one code object and one of another, found in the compiled table (which changes
  // with every re-sweep and with the device KTUNE_RUNTIME_RESULTS names).
  std::vector<ktune_mla_decode_key> tuned;
  for (int64_t heads : {16, 128})
    for (int64_t block_len : {1, 2, 4})
      for (int64_t causal : {0, 1})
        for (int64_t kv_dtype : {0, 1}) tuned.push_back({heads, block_len, causal, kv_dtype, 32});
  auto object_of = [](const ktune_mla_decode_key& k) { return compiled(k).kernel->object; };
  std::optional<ktune_mla_decode_key> same_a, same_b, other;
  for (size_t i = 0; i < tuned.size() && !same_b; ++i)
    for (size_t j = i + 1; j < tuned.size() && !same_b; ++j)
      if (object_of(tuned[i]) == object_of(tuned[j])) same_a = tuned[i], same_b = tuned[j];
  ASSERT_TRUE(same_b) << "no two keys of the compiled table share a code object";
  for (const auto& k : tuned)
    if (object_of(k) != object_of(*same_a)) other = k;
  ASSERT_TRUE(other);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        ktune_result r{};
        const auto key = (t + i) % 3 == 0 ? *same_a : (t + i) % 3 == 1 ? *same_b : *other;
        if (engine->mla_decode(launch_args(key, 64), r) != KTUNE_OK) ++failures;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(api->loads, 2);  // the first launch of each loads; the others wait, then find it
  EXPECT_EQ(engine->code_objects_loaded(), 2u);
  EXPECT_EQ(api->launches.size(), 16u * 20u);
  EXPECT_EQ(api->describes, 1);  // the device's arch and CU count are read once

  // Another device loads its own copy.
  api->set_device(reinterpret_cast<const void*>(2));
  ktune_result r{};
  ASSERT_EQ(engine->mla_decode(launch_args(*same_a, 64), r), KTUNE_OK) << r.message;
  EXPECT_EQ(api->loads, 3);
}

// ---------------------------------------------------------------------------------------------
// KTUNE_DB: a database for the package's templates overrides the compiled table.

// A database whose runs have the template hash the package was built with.
struct OverrideDb {
  MlaDb m;
  int64_t run(std::string device = "NVIDIA H200",
              std::string hash = std::string(test::sm90_table(kMlaDecode).template_hash)) {
    return m.run("sm_90a", std::move(device), std::move(hash));
  }
};

TEST(RuntimeOverride, TakesPrecedenceWithItsKernelsGapsAndFallbacks) {
  OverrideDb o;
  const auto run = o.run();
  using num::KvDtype;
  // The compiled table's winner of this key splits the keys; the override's never does (split=0:
  // the same code object, another split policy).
  ASSERT_GT(compiled(kExact).kernel->config[kSplit], 0);
  o.m.ok(run, mla_key(16, 1, true, KvDtype::bf16), compiled_config(kExact, 0), 5.0);
  o.m.declared_gap("sm_90a", mla_key(16, 2, false, KvDtype::fp8_e4m3fn),
                   mla_key(16, 4, false, KvDtype::bf16).canonical());
  o.m.ok(run, mla_key(16, 4, false, KvDtype::bf16), mla_config(16, 16, 1, 0), 5.0);  // keys=16: not in the package

  FakeApi* api = nullptr;
  auto engine = fake_engine(api, "sm_90a", 132, o.m.path());
  ktune_result r{};
  ASSERT_EQ(engine->override_status(r), KTUNE_OK) << r.message;
  EXPECT_THAT(r.message, HasSubstr("sm_90a (3 keys)"));

  ASSERT_EQ(engine->mla_decode(launch_args(kExact), r), KTUNE_OK) << r.message;  // no workspace: none needed
  EXPECT_EQ(r.from_override, 1);
  EXPECT_EQ(r.splits, 1);
  ASSERT_EQ(api->launches.size(), 1u);
  EXPECT_EQ(api->launches[0].launch.grid[1], 1u);
  // Another batch: the override's batch bucket.
  EXPECT_EQ(engine->select_for_arch(kMlaDecode, "sm_90a", key_values(ktune_mla_decode_key{16, 1, 1, 0, 7}), r),
            KTUNE_OK);
  EXPECT_THAT(r.message, HasSubstr("nearest tuned batch bucket (KTUNE_DB)"));

  EXPECT_EQ(engine->mla_decode(launch_args({16, 2, 0, 1, 32}, 64), r), KTUNE_GAP);
  EXPECT_THAT(r.message, HasSubstr("aiter 0.1.19"));
  ASSERT_TRUE(r.has_fallback_key);
  EXPECT_EQ(r.fallback_key.mla_decode.block_len, 4);
  EXPECT_EQ(r.fallback_key.mla_decode.kv_dtype, 0);

  EXPECT_EQ(engine->mla_decode(launch_args({16, 4, 0, 0, 32}, 64), r), KTUNE_NO_CODE_OBJECT);
  EXPECT_THAT(r.message, AllOf(HasSubstr("in no package of this library"), HasSubstr("ktune package")));
  EXPECT_EQ(api->launches.size(), 1u);

  // Covering through the override: heads 12, block 1 -> the tuned 16 x 1.
  EXPECT_EQ(engine->select_for_arch(kMlaDecode, "sm_90a", key_values(ktune_mla_decode_key{12, 1, 1, 0, 32}), r),
            KTUNE_OK_FALLBACK);
  EXPECT_EQ(r.fallback_key.mla_decode.heads, 16);
  // A key the override cannot serve: the compiled table answers.
  EXPECT_EQ(engine->select_for_arch(kMlaDecode, "sm_90a", key_values(ktune_mla_decode_key{128, 1, 1, 0, 32}), r),
            KTUNE_OK);
  EXPECT_EQ(r.from_override, 0);
  // An arch the override has no table for: the compiled table answers.
  EXPECT_EQ(engine->select_for_arch(kMlaDecode, "gfx942", key_values(kExact), r), KTUNE_UNSUPPORTED);
  EXPECT_EQ(r.from_override, 0);
}

TEST(RuntimeOverride, RefusedDatabaseLeavesTheCompiledTable) {
  ktune_result r{};
  const int compiled_splits = mla::num_splits({32, 1, 4096, 132, 2, 32});  // the compiled winner's split=2
  size_t bytes = 0;
  {  // Stale: measured with other templates than the package's.
    OverrideDb o;
    o.m.ok(o.run("NVIDIA H200", "00000000deadbeef"), mla_key(16, 1, true, num::KvDtype::bf16),
           compiled_config(kExact, 0), 5.0);
    FakeApi* api = nullptr;
    auto engine = fake_engine(api, "sm_90a", 132, o.m.path());
    EXPECT_EQ(engine->override_status(r), KTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(r.message, AllOf(HasSubstr("template hash validator"), HasSubstr("compiled-in table serves")));
    EXPECT_THAT(r.message, Not(HasSubstr("ktune migrate")));  // other templates: sweep again
    ASSERT_EQ(engine->mla_decode_workspace_size(launch_args(kExact), bytes, r), KTUNE_OK) << r.message;
    EXPECT_EQ(r.from_override, 0);
    EXPECT_EQ(r.splits, compiled_splits);
  }
  {  // Stale by hash alone: these very templates under the older whole-source hash.
    OverrideDb o;
    o.m.ok(o.run("NVIDIA H200", jit::source_hash(mla_family().template_file())),
           mla_key(16, 1, true, num::KvDtype::bf16), compiled_config(kExact, 0), 5.0);
    FakeApi* api = nullptr;
    auto engine = fake_engine(api, "sm_90a", 132, o.m.path());
    EXPECT_EQ(engine->override_status(r), KTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(r.message, AllOf(HasSubstr("template hash validator"), HasSubstr("run 1 measured these very templates"),
                                 HasSubstr("`ktune migrate --db " + o.m.path())));
    ASSERT_EQ(engine->mla_decode_workspace_size(launch_args(kExact), bytes, r), KTUNE_OK) << r.message;
    EXPECT_EQ(r.from_override, 0);

    // The same run against a package of other templates than this library's: migrating would not
    // make it current, so the remedy is not named.
    CompiledTable other = test::sm90_table(kMlaDecode);
    other.template_hash = "0123456789abcdef";
    const CompiledTable* const ours = &test::sm90_table(kMlaDecode);
    const CompiledTable* const theirs = &other;
    test::FakeSetup f;
    f.override_db = o.m.path();
    std::replace(f.tables.begin(), f.tables.end(), ours, theirs);
    auto other_engine = fake_engine(api, std::move(f));
    EXPECT_EQ(other_engine->override_status(r), KTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(r.message, AllOf(HasSubstr("template hash validator"), HasSubstr("0123456789abcdef"),
                                 Not(HasSubstr("ktune migrate"))));
  }
  {  // Stale on one arch only: the other arch's results still serve.
    OverrideDb o;
    o.m.ok(o.run(), mla_key(16, 1, true, num::KvDtype::bf16), compiled_config(kExact, 0), 5.0);
    o.m.ok(o.m.run("gfx942", "AMD Instinct MI300X", "00000000deadbeef"), mla_key(16, 1, true, num::KvDtype::bf16),
           mla_config(16, 32, 1, 0), 5.0);
    FakeApi* api = nullptr;
    auto engine = fake_engine(api, "sm_90a", 132, o.m.path());
    EXPECT_EQ(engine->override_status(r), KTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(r.message, AllOf(HasSubstr("refused for mla_decode on gfx942: template hash validator"),
                                 HasSubstr("KTUNE_DB in use"), HasSubstr("sm_90a (1 keys)")));
    ASSERT_EQ(engine->mla_decode_workspace_size(launch_args(kExact), bytes, r), KTUNE_OK) << r.message;
    EXPECT_EQ(r.from_override, 1);
    EXPECT_EQ(r.splits, 1);
    EXPECT_EQ(engine->select_for_arch(kMlaDecode, "gfx942", key_values(kExact), r), KTUNE_UNSUPPORTED);
    EXPECT_EQ(r.from_override, 0);
  }
  {  // Mixed devices.
    OverrideDb o;
    o.m.ok(o.run("NVIDIA H200"), mla_key(16, 1, true, num::KvDtype::bf16), compiled_config(kExact, 0), 5.0);
    o.m.ok(o.run("NVIDIA H100"), mla_key(16, 2, true, num::KvDtype::bf16), compiled_config(kExact, 0), 5.0);
    FakeApi* api = nullptr;
    auto engine = fake_engine(api, "sm_90a", 132, o.m.path());
    EXPECT_EQ(engine->override_status(r), KTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(r.message, AllOf(HasSubstr("device validator"), HasSubstr("NVIDIA H100")));
    ASSERT_EQ(engine->mla_decode_workspace_size(launch_args(kExact), bytes, r), KTUNE_OK) << r.message;
    EXPECT_EQ(r.splits, compiled_splits);
  }
  {  // Not a database.
    TempDir dir;
    FakeApi* api = nullptr;
    auto engine = fake_engine(api, "sm_90a", 132, dir.file("missing.db"));
    EXPECT_EQ(engine->override_status(r), KTUNE_INVALID_ARGUMENT);
    EXPECT_THAT(r.message, HasSubstr("missing.db"));
    EXPECT_EQ(engine->select_for_arch(kMlaDecode, "sm_90a", key_values(kExact), r), KTUNE_OK);
  }
  FakeApi* api = nullptr;
  auto unset = fake_engine(api);
  EXPECT_EQ(unset->override_status(r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message, HasSubstr("not set"));
}

}  // namespace
}  // namespace ktune::runtime
