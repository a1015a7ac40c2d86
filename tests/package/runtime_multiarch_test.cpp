// Several arches compiled in: the engine picks the table of the current device's arch and finds
// each package's code objects in its own directory. The second arch is the gfx90a test fixture of
// tests/package/fixture_packages.cmake (H200 results renamed, never shipped), whose one unfused
// winner also exercises qk_rope_cache's unfused launch sequence and its workspace.
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/qk_rope_cache/reference.hpp"
#include "package/runtime_support.hpp"

namespace ktune::runtime {
std::span<const CompiledTable* const> fixture_tables() noexcept;  // tests/package/fixture_packages.cmake

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using test::fake_engine;
using test::FakeApi;
using test::rope_args;

constexpr ktune_qk_rope_cache_key kFused{16, 1, 0, 0, 1, 64};
constexpr ktune_qk_rope_cache_key kUnfused{16, 1, 1, 0, 1, 64};  // the fixture's unfused winner (fp8 q_out)

class RuntimeMultiArch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!KTUNE_RUNTIME_FIXTURE)
      GTEST_SKIP() << "the gfx90a fixture package needs hipRTC (KTUNE_WITH_HIP) at build time";
  }
  static test::FakeSetup setup(std::string arch) {
    test::FakeSetup f;
    f.arch = std::move(arch);
    f.tables.insert(f.tables.end(), fixture_tables().begin(), fixture_tables().end());
#if KTUNE_RUNTIME_FIXTURE
    // $KTUNE_FIXTURE_PACKAGE_DIR on the GPU machine (tests/package/remote_pack.sh packs it), where
    // the build tree is not.
    const char* carried = std::getenv("KTUNE_FIXTURE_PACKAGE_DIR");
    f.roots = {carried != nullptr && *carried != '\0' ? carried : KTUNE_RUNTIME_FIXTURE_ROOT, test::package_root()};
#endif
    return f;
  }
};

TEST_F(RuntimeMultiArch, SelectsByTheDevicesArchAndLoadsFromItsPackage) {
  ktune_result r{};
  FakeApi* nvidia = nullptr;
  FakeApi* amd = nullptr;
  auto on_nvidia = fake_engine(nvidia, setup("sm_90a"));
  auto on_amd = fake_engine(amd, setup("gfx90a"));
  ASSERT_EQ(on_nvidia->qk_rope_cache(rope_args(kFused), r), KTUNE_OK) << r.message;
  ASSERT_EQ(on_amd->qk_rope_cache(rope_args(kFused), r), KTUNE_OK) << r.message;
  ASSERT_EQ(nvidia->loads, 1);
  ASSERT_EQ(amd->loads, 1);
  // Each loaded the code object of its own arch's package (the tables differ for the unfused key).
  EXPECT_EQ(on_nvidia->select(kQkRopeCache, key_values(kUnfused), r), KTUNE_OK);
  EXPECT_EQ(on_amd->select(kQkRopeCache, key_values(kUnfused), r), KTUNE_OK);
  const auto* gfx = find_table(on_amd->tables(), kQkRopeCache, "gfx90a");
  ASSERT_NE(gfx, nullptr);
  EXPECT_EQ(gfx->package, "qk_rope_cache-gfx90a");
  EXPECT_EQ(gfx->select(key_values(kUnfused).data()).kernel->config[5], 0);
  EXPECT_EQ(test::sm90_table(kQkRopeCache).select(key_values(kUnfused).data()).kernel->config[5], 1);

  // Arches without a table: unsupported, naming those there are.
  FakeApi* other = nullptr;
  auto on_other = fake_engine(other, setup("gfx908"));
  EXPECT_EQ(on_other->qk_rope_cache(rope_args(kFused), r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message,
              HasSubstr(KTUNE_RUNTIME_CLANG_FIXTURE ? "qk_rope_cache tables for gfx90a, gfx942, gfx950, sm_90a only"
                                                    : "qk_rope_cache tables for gfx90a, sm_90a only"));
  EXPECT_EQ(on_amd->select(kMlaDecode, key_values(ktune_mla_decode_key{16, 1, 1, 0, 32}), r), KTUNE_UNSUPPORTED);
  EXPECT_THAT(r.message, HasSubstr("mla_decode tables for sm_90a only"));

  // Without the fixture's directory, its code objects are missing (and the message names the package).
  auto f = setup("gfx90a");
  f.roots = {test::package_root()};
  FakeApi* lost = nullptr;
  auto without = fake_engine(lost, std::move(f));
  EXPECT_EQ(without->qk_rope_cache(rope_args(kFused), r), KTUNE_NO_CODE_OBJECT);
  EXPECT_THAT(r.message, HasSubstr("of package qk_rope_cache-gfx90a is in none of the package directories"));
}

TEST_F(RuntimeMultiArch, LaunchesTheUnfusedBaselineInOrderWithItsWorkspace) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, setup("gfx90a"));
  ktune_result r{};
  const int64_t T = kUnfused.tokens, H = kUnfused.heads;
  const size_t q_pe_rot = 0, k_pe_rot = T * H * 64 * 2, q_cat = k_pe_rot + T * 64 * 2,
               expected = q_cat + T * H * 576 * 2;
  auto args = rope_args(kUnfused);
  size_t bytes = 0;
  ASSERT_EQ(engine->qk_rope_cache_workspace_size(args, bytes, r), KTUNE_OK) << r.message;
  EXPECT_EQ(bytes, expected);
  EXPECT_EQ(engine->qk_rope_cache(args, r), KTUNE_INVALID_ARGUMENT);  // no workspace
  EXPECT_THAT(r.message, AllOf(HasSubstr("unfused baseline"), HasSubstr(std::to_string(expected))));
  EXPECT_TRUE(api->launches.empty());

  std::vector<char> workspace(bytes);
  args.workspace = workspace.data();
  args.workspace_bytes = bytes;
  ASSERT_EQ(engine->qk_rope_cache(args, r), KTUNE_OK) << r.message;
  const KernelChoice& kc =
      *find_table(engine->tables(), kQkRopeCache, "gfx90a")->select(key_values(kUnfused).data()).kernel;
  const int64_t vec = kc.config[1], threads = kc.config[3];
  auto blocks = [&](int64_t items) { return static_cast<unsigned>((items + threads - 1) / threads); };
  ASSERT_EQ(api->launches.size(), 4u);
  const char* order[] = {"unfused_rope", "unfused_cache", "unfused_concat", "unfused_quantise"};
  const unsigned grids[] = {blocks((T * H + T) * (64 / vec)), blocks(T * (576 / vec)), blocks(T * H * (576 / vec)),
                            blocks(T * H * 576 / vec)};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_THAT(api->launches[i].symbol, HasSubstr(order[i]));
    EXPECT_EQ(api->launches[i].launch.grid[0], grids[i]) << order[i];
    EXPECT_EQ(api->launches[i].launch.block, static_cast<unsigned>(threads));
  }
  // concat(q_nope, q_pe_rot, q_cat): the rotated q_pe and the bf16 concatenation in the workspace.
  EXPECT_EQ(api->launches[2].pointers[1], workspace.data() + q_pe_rot);
  EXPECT_EQ(api->launches[2].pointers[2], workspace.data() + q_cat);
  // cache(kv_c, k_pe_rot, slots): the rotated k_pe after it.
  EXPECT_EQ(api->launches[1].pointers[1], workspace.data() + k_pe_rot);
}

// MI300 (gfx942) and MI355 (gfx950): packages that the offline AMD compiler made from the fixture's
// rows (tests/package/fixture_packages.cmake). The engine selects each arch's table, loads the
// code object of that arch's package, an AMD GPU ELF whose flags name the arch and which holds
// the symbols looked up, and launches the unfused sequence from it. Nothing ran on an AMD GPU.
class RuntimeMi300Mi355 : public RuntimeMultiArch, public ::testing::WithParamInterface<std::pair<const char*, int>> {
 protected:
  void SetUp() override {
    RuntimeMultiArch::SetUp();
    if (!KTUNE_RUNTIME_CLANG_FIXTURE)
      GTEST_SKIP() << "the gfx942 and gfx950 fixture packages need clang 20 or later at build time";
  }
};

TEST_P(RuntimeMi300Mi355, LoadsAndLaunchesTheArchsOwnCodeObjects) {
  const auto [arch, elf_mach] = GetParam();
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, setup(arch));
  ktune_result r{};
  ASSERT_EQ(engine->qk_rope_cache(rope_args(kFused), r), KTUNE_OK) << r.message;
  const auto* table = find_table(engine->tables(), kQkRopeCache, arch);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->package, std::string("qk_rope_cache-") + arch);

  auto args = rope_args(kUnfused);
  size_t bytes = 0;
  ASSERT_EQ(engine->qk_rope_cache_workspace_size(args, bytes, r), KTUNE_OK) << r.message;
  std::vector<char> workspace(bytes);
  args.workspace = workspace.data();
  args.workspace_bytes = bytes;
  ASSERT_EQ(engine->qk_rope_cache(args, r), KTUNE_OK) << r.message;
  ASSERT_EQ(api->launches.size(), 5u);  // the fused kernel, then the unfused baseline's four
  EXPECT_THAT(api->launches[4].symbol, HasSubstr("unfused_quantise"));

  ASSERT_FALSE(api->loaded.empty());
  for (const std::string& code : api->loaded) {
    ASSERT_GE(code.size(), 64u);
    EXPECT_EQ(code.substr(0, 4), "\x7f"
                                 "ELF");
    uint16_t machine = 0;
    uint32_t flags = 0;
    std::memcpy(&machine, code.data() + 18, sizeof machine);
    std::memcpy(&flags, code.data() + 48, sizeof flags);
    EXPECT_EQ(machine, 224) << "not an AMD GPU code object (EM_AMDGPU)";
    EXPECT_EQ(flags & 0xffu, static_cast<uint32_t>(elf_mach)) << "the code object is not " << arch << "'s";
  }
  for (const std::string& symbol : api->symbols) {
    bool held = false;
    for (const std::string& code : api->loaded) held = held || code.find(symbol) != std::string::npos;
    EXPECT_TRUE(held) << symbol << " is in no loaded code object";
  }
}

// EF_AMDGPU_MACH of each arch (LLVM's ELF.h): gfx942 0x4c, gfx950 0x4f.
INSTANTIATE_TEST_SUITE_P(Arches, RuntimeMi300Mi355,
                         ::testing::Values(std::pair<const char*, int>{"gfx942", 0x4c},
                                           std::pair<const char*, int>{"gfx950", 0x4f}),
                         [](const auto& info) { return std::string(info.param.first); });

}  // namespace
}  // namespace ktune::runtime
