// `ktune package` end to end: the verb writes the package of a database, and refuses an unknown
// arch before it opens anything.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "backend/backend.hpp"
#include "unit/package_support.hpp"

namespace ktune {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using namespace package_test;

TEST(PackageCli, WritesThePackageOrRefusesTheArch) {
  if (!std::filesystem::exists(KTUNE_EXE))
    GTEST_SKIP() << KTUNE_EXE << " is not on this machine (the build tree's ktune)";
  if (!backend::for_arch("sm_90a").compiler_available("sm_90a"))
    GTEST_SKIP() << "no NVRTC: " << backend::for_arch("sm_90a").compiler_unavailable_reason("sm_90a");
  MlaDb m;
  fill_two_programs(m, "sm_90a", "NVIDIA H200");
  TempDir dir;
  const auto command = [&](const std::string& arch, const std::string& out) {
    return shell(fmt::format("'{}' package --db '{}' --kernel mla_decode --arch {} --no-cache --out '{}'", KTUNE_EXE,
                             m.path(), arch, out),
                 dir.file("log"));
  };
  const auto ok = command("sm_90a", dir.file("pkg"));
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("2 code object(s), 4 file(s) + manifest.json"));
  EXPECT_TRUE(std::filesystem::exists(dir.file("pkg/manifest.json")));
  EXPECT_TRUE(std::filesystem::exists(dir.file("pkg/mla_decode_package.hpp")));

  EXPECT_THAT(ok.output, Not(HasSubstr("warning")));
  EXPECT_EQ(read_manifest(dir.file("pkg")).at("tuned_compiler_versions"), json::array({"nvrtc 13.0"}));

  // Results timed with code from another compiler: packaged, with a warning naming both.
  auto r = db::test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", current_hash());
  r.compiler_version = "nvrtc 12.4";
  MlaDb other;
  other.ok(other.db().begin_run(r), mla_key(16, 1, false, num::KvDtype::bf16), mla_config(16, 16, 1, 0), 10.0);
  const auto warned =
      shell(fmt::format("'{}' package --db '{}' --kernel mla_decode --arch sm_90a --no-cache --out '{}'", KTUNE_EXE,
                        other.path(), dir.file("other")),
            dir.file("log"));
  ASSERT_EQ(warned.status, 0) << warned.output;
  EXPECT_THAT(warned.output,
              AllOf(HasSubstr("warning: results timed with code from nvrtc 12.4 are packaged compiled by"),
                    HasSubstr("may differ from what won")));

  const auto refused = command("sm_12x", dir.file("refused"));
  EXPECT_NE(refused.status, 0);
  EXPECT_THAT(refused.output, HasSubstr("unknown target 'sm_12x'"));
  EXPECT_FALSE(std::filesystem::exists(dir.file("refused")));
}

}  // namespace
}  // namespace ktune
