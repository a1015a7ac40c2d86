// The installed CMake package: `cmake --install` of this build into a temporary prefix, then the
// out-of-tree consumer (tests/package/consumer) configured with find_package(ktune), built and run.
// Without a GPU it must report no_device; with one it computes MLA decode and qk_rope_cache and
// checks them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "dispatch/package.hpp"
#include "dispatch/runtime/compiled_table.hpp"
#include "unit/package_support.hpp"

namespace ktune::runtime {
namespace {

using ::testing::HasSubstr;
using namespace package_test;

TEST(RuntimeInstall, ConsumerBuildsAgainstTheInstalledPackage) {
  if (::access(KTUNE_CMAKE, X_OK) != 0 || ::access(KTUNE_CXX, X_OK) != 0 ||
      ::access((std::string(KTUNE_BINARY_DIR) + "/CMakeCache.txt").c_str(), R_OK) != 0)
    GTEST_SKIP() << "needs this build's tree, " << KTUNE_CMAKE << " and " << KTUNE_CXX
                 << " (on the GPU machine, run the consumer built here instead: see tests/package/consumer)";
  TempDir dir;
  const auto prefix = dir.file("prefix"), log = dir.file("log");
  const auto install =
      shell(fmt::format("'{}' --install '{}' --prefix '{}'", KTUNE_CMAKE, KTUNE_BINARY_DIR, prefix), log);
  ASSERT_EQ(install.status, 0) << install.output;

  // Every package's files are installed with the hashes of their manifest.
  for (const auto* t : compiled_tables()) {
    const auto share = fmt::format("{}/share/ktune/{}", prefix, t->package);
    const auto manifest = nlohmann::json::parse(db::test::read_file(share + "/manifest.json"));
    ASSERT_FALSE(manifest.at("files").empty());
    EXPECT_EQ(manifest.at("arch"), t->arch);
    for (const auto& f : manifest.at("files")) {
      const auto path = f.at("path").get<std::string>();
      EXPECT_EQ(dispatch::describe_file(path, db::test::read_file(share + "/" + path)).xxh64, f.at("xxh64")) << path;
    }
  }

  const auto source = std::string(KTUNE_SOURCE_DIR) + "/tests/package/consumer";
  auto configure = [&](const std::string& build, const std::string& prefix_path) {
    return shell(fmt::format("'{}' -S '{}' -B '{}' -DCMAKE_CXX_COMPILER='{}' -DCMAKE_PREFIX_PATH='{}'", KTUNE_CMAKE,
                             source, build, KTUNE_CXX, prefix_path),
                 log);
  };
  const auto configured = configure(dir.file("build"), prefix);
  ASSERT_EQ(configured.status, 0) << configured.output;
  const auto built = shell(fmt::format("'{}' --build '{}'", KTUNE_CMAKE, dir.file("build")), log);
  ASSERT_EQ(built.status, 0) << built.output;
  const auto ran =
      shell(fmt::format("env -u KTUNE_DB -u KTUNE_PACKAGE_DIR '{}'", dir.file("build/ktune_consumer")), log);
  EXPECT_EQ(ran.status, 0) << ran.output;
  EXPECT_THAT(ran.output, HasSubstr("mla_decode package for sm_90a"));
  EXPECT_THAT(ran.output, HasSubstr("qk_rope_cache package for sm_90a"));
  EXPECT_THAT(ran.output, ::testing::AnyOf(HasSubstr("qk_rope_cache select on this machine: no_device"),
                                           HasSubstr("computed qk_rope_cache through ktune")));

  // Without the prefix, find_package(ktune) finds nothing: the consumer used the installed package.
  const auto unfound = configure(dir.file("build-unfound"), dir.file("empty"));
  EXPECT_NE(unfound.status, 0);
  EXPECT_THAT(unfound.output, HasSubstr("ktune"));
}

}  // namespace
}  // namespace ktune::runtime
