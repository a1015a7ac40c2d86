// Which committed results ktune_runtime packages (KTUNE_RUNTIME_RESULTS and KTUNE_RUNTIME_SPACE in
// dispatch/runtime/CMakeLists.txt): per family the sweep of the space (default: `default`) where the
// device folder has one, else its smoke sweep, of the device folders it names, one device per arch,
// since the runtime's tables are keyed by arch and devices of one arch tune differently. A choice
// the build cannot serve stops the configure with what to do instead; these configure the project
// into a temporary tree and stop there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "unit/package_support.hpp"

namespace ktune::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace package_test;

const std::string kResults = std::string(KTUNE_SOURCE_DIR) + "/results";

// The device folders of results/ whose mla_decode smoke sweep has a run on sm_90a.
std::vector<std::string> sm90a_devices() {
  std::vector<std::string> devices;
  for (const auto& entry : std::filesystem::directory_iterator(kResults)) {
    const auto dump = entry.path() / "mla_decode.sql";
    if (!std::filesystem::exists(dump)) continue;
    std::istringstream lines(db::test::read_file(dump.string()));
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("INSERT INTO \"runs\"") && line.find(",'sm_90a',") != std::string::npos) {
        devices.push_back(entry.path().filename().string());
        break;
      }
  }
  std::sort(devices.begin(), devices.end());
  return devices;
}

// The dump a device folder's `family` is packaged from for `space`: its sweep of that space where
// there is one, else its smoke sweep.
std::string packaged_dump(const std::string& device, const std::string& family, const std::string& space = "default") {
  const auto spaced = fmt::format("results/{}/{}/{}.sql", device, space, family);
  if (space != "smoke" && std::filesystem::exists(std::string(KTUNE_SOURCE_DIR) + "/" + spaced)) return spaced;
  return fmt::format("results/{}/{}.sql", device, family);
}

// The configure's status and output, with CMake's line wrapping of messages undone.
ShellResult configure_with(const std::string& results, TempDir& dir, const std::string& space = "default") {
  auto result = shell(fmt::format("'{}' -S '{}' -B '{}' -G Ninja -DCMAKE_CXX_COMPILER='{}' -DKTUNE_BUILD_RUNTIME=ON "
                                  "-DKTUNE_BUILD_TESTS=OFF -DKTUNE_BUILD_BENCHMARKS=OFF '-DKTUNE_RUNTIME_RESULTS={}' "
                                  "'-DKTUNE_RUNTIME_SPACE={}'",
                                  KTUNE_CMAKE, KTUNE_SOURCE_DIR, dir.file("build"), KTUNE_CXX, results, space),
                      dir.file("log"));
  std::string unwrapped;
  for (const char c : result.output) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!unwrapped.empty() && unwrapped.back() != ' ')) unwrapped += space ? ' ' : c;
  }
  result.output = unwrapped;
  return result;
}

class RuntimeResults : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(KTUNE_CMAKE, X_OK) != 0) GTEST_SKIP() << "needs " << KTUNE_CMAKE;
  }
  TempDir dir_;
};

TEST_F(RuntimeResults, TwoDevicesOfOneArchAreRefusedNamingBoth) {
  const auto devices = sm90a_devices();
  ASSERT_GE(devices.size(), 2u) << "results/ should hold smoke sweeps of two sm_90a devices (an H100's and an H200's)";
  const auto configured = configure_with(devices[0] + ";" + devices[1], dir_);
  EXPECT_NE(configured.status, 0);
  EXPECT_THAT(configured.output, HasSubstr("both have"));
  EXPECT_THAT(configured.output, HasSubstr("mla_decode for sm_90a"));
  EXPECT_THAT(configured.output, HasSubstr(packaged_dump(devices[0], "mla_decode")));
  EXPECT_THAT(configured.output, HasSubstr(packaged_dump(devices[1], "mla_decode")));
  EXPECT_THAT(configured.output, HasSubstr("KTUNE_RUNTIME_RESULTS"));
}

TEST_F(RuntimeResults, AFolderWithoutSweepsIsRefusedListingThoseWithThem) {
  const auto configured = configure_with("amd-instinct-mi300x", dir_);
  EXPECT_NE(configured.status, 0);
  EXPECT_THAT(configured.output, HasSubstr("names 'amd-instinct-mi300x', but results/amd-instinct-mi300x/ holds no"));
  for (const auto& device : sm90a_devices()) EXPECT_THAT(configured.output, HasSubstr(device));
}

// A path or a pattern would reach past the device folders (a default sweep's 1152 keys, another
// project's files); an empty list would end in "no package" without naming the variable.
TEST_F(RuntimeResults, WhatIsNoDeviceFolderNameIsRefused) {
  for (const std::string bad : {"nvidia-h200/default", "../results/nvidia-h200", "*", "NVIDIA-H200"}) {
    TempDir dir;
    const auto configured = configure_with(bad, dir);
    EXPECT_NE(configured.status, 0) << bad;
    EXPECT_THAT(configured.output, HasSubstr("names '" + bad + "', which is no device folder name")) << bad;
  }
  const auto configured = configure_with("", dir_);
  EXPECT_NE(configured.status, 0);
  EXPECT_THAT(configured.output, HasSubstr("KTUNE_RUNTIME_RESULTS is empty"));
}

TEST_F(RuntimeResults, EachDevicePackagesItsOwnSweeps) {
  for (const auto& device : sm90a_devices()) {
    TempDir dir;
    // Named twice, it is packaged once.
    const auto configured = configure_with(device + ";" + device, dir);
    EXPECT_EQ(configured.status, 0) << device << ":\n" << configured.output;
    for (const std::string family : {"mla_decode", "qk_rope_cache"}) {
      const auto dump = packaged_dump(device, family);
      EXPECT_THAT(configured.output, HasSubstr(fmt::format("packages {}-sm_90a from {}", family, dump)));
      // A family without a default sweep is packaged from its smoke sweep, and the configure says so.
      if (!dump.ends_with("/default/" + family + ".sql"))
        EXPECT_THAT(configured.output,
                    HasSubstr(fmt::format("results/{}/ has no default sweep of {}", device, family)));
    }
  }
}

// The default space is what the build ships; -DKTUNE_RUNTIME_SPACE=smoke ships the smoke sweeps, and
// what is no space name is refused.
TEST_F(RuntimeResults, TheSpaceChoosesWhichSweepIsPackaged) {
  ASSERT_THAT(packaged_dump("nvidia-h200", "mla_decode"), ::testing::EndsWith("/default/mla_decode.sql"))
      << "the reference device should have a committed default sweep of mla_decode";
  const auto smoke = configure_with("nvidia-h200", dir_, "smoke");
  EXPECT_EQ(smoke.status, 0) << smoke.output;
  EXPECT_THAT(smoke.output, HasSubstr("packages mla_decode-sm_90a from results/nvidia-h200/mla_decode.sql"));
  EXPECT_THAT(smoke.output, Not(HasSubstr("has no smoke sweep")));
  TempDir dir;
  const auto bad = configure_with("nvidia-h200", dir, "../default");
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.output, HasSubstr("KTUNE_RUNTIME_SPACE is '../default', which is no space name"));
}

}  // namespace
}  // namespace ktune::runtime
