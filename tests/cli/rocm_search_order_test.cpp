// Which HIP runtime and hipRTC `ktune devices` loads, on stand-in libraries built here (empty
// shared objects named like ROCm's, so each reports the file it came from when its first symbol is
// missing): the ROCm install that ROCM_PATH names comes before the copies the loader's search
// finds (LD_LIBRARY_PATH, a distribution's package), hipRTC is taken from beside that runtime, and
// without ROCM_PATH and /opt/rocm the loader's copy is used and named.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace ktune::testing {
namespace {
namespace fs = std::filesystem;

// An empty shared object at `path` (and, for each of `links`, a symbolic link to it beside it).
void stand_in(const std::string& folder, const std::string& name, const std::vector<std::string>& links = {}) {
  fs::create_directories(folder);
  const std::string source = folder + "/" + name + ".cpp";
  std::ofstream(source) << "extern \"C\" int ktune_stand_in() { return 1; }\n";
  const auto built = run_command(std::string(KTUNE_CXX) + " -shared -fPIC -o " + folder + "/" + name + " " + source);
  ASSERT_EQ(built.status, 0) << built.output;
  for (const auto& link : links) fs::create_symlink(name, folder + "/" + link);
}

struct Loaded {
  std::string compiler, runtime;  // the reasons each is unavailable: they name the file loaded
};

Loaded devices(const std::string& env) {
  auto r = run_ktune("devices --json --no-bandwidth", env);
  EXPECT_EQ(r.status, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  for (const auto& b : doc["backends"]) {
    if (b["name"] != "hip") continue;
    // hipRTC's reason (per target: gfx90a's entry names it), else the library it loaded.
    std::string compiler = b.value("compiler", nlohmann::json::object()).value("library", "");
    for (const auto& t : b.value("targets", nlohmann::json::array()))
      if (t["arch"] == "gfx90a")
        for (const auto& c : t["compilers"])
          if (c["name"] == "hiprtc" && c.contains("reason")) compiler = c["reason"];
    const auto runtime = b.value("runtime", nlohmann::json::object());
    return {compiler, runtime.value("reason", runtime.value("library", ""))};
  }
  ADD_FAILURE() << "no hip backend in " << r.output;
  return {};
}

class RocmSearchOrder : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!contains(run_ktune("devices --json --no-bandwidth").output, "\"name\": \"hip\""))
      GTEST_SKIP() << "this ktune has no hip backend";
    stand_in(rocm + "/lib", "libamdhip64.so.6");
    stand_in(rocm + "/lib", "libhiprtc.so.6");
    // The distribution's copies, under every name the loader may be asked for.
    stand_in(distribution, "libamdhip64.so.5", {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.7"});
    stand_in(distribution, "libhiprtc.so.5", {"libhiprtc.so", "libhiprtc.so.6", "libhiprtc.so.7"});
  }
  CliTempDir tmp;
  std::string rocm = tmp.path() + "/rocm-6.3";
  std::string distribution = tmp.path() + "/usr-lib";
};

TEST_F(RocmSearchOrder, RocmPathComesBeforeTheLoadersCopies) {
  const auto loaded = devices("ROCM_PATH=" + rocm + " LD_LIBRARY_PATH=" + distribution);
  EXPECT_TRUE(contains(loaded.runtime, rocm + "/lib/libamdhip64.so.6 has no symbol")) << loaded.runtime;
  EXPECT_TRUE(contains(loaded.compiler, rocm + "/lib/libhiprtc.so.6 has no symbol"))
      << "hipRTC from beside the runtime: " << loaded.compiler;
  EXPECT_FALSE(contains(loaded.runtime + loaded.compiler, distribution)) << loaded.runtime << loaded.compiler;
}

TEST_F(RocmSearchOrder, HipRtcComesFromTheRuntimesFolderBeforeRocmPath) {
  // A ROCm 7 runtime with its hipRTC under another root than ROCM_PATH's, found by the loader;
  // ROCM_PATH's install has a hipRTC but no runtime.
  const std::string other = tmp.path() + "/rocm-7.0/lib";
  stand_in(other, "libamdhip64.so.7", {"libamdhip64.so"});
  stand_in(other, "libhiprtc.so.7");
  const std::string partial = tmp.path() + "/partial";
  stand_in(partial + "/lib", "libhiprtc.so.6");
  const auto loaded = devices("ROCM_PATH=" + partial + " LD_LIBRARY_PATH=" + other + ":" + distribution);
  EXPECT_TRUE(contains(loaded.runtime, other + "/libamdhip64.so has no symbol")) << loaded.runtime;
  EXPECT_TRUE(contains(loaded.compiler, other + "/libhiprtc.so.7 has no symbol")) << loaded.compiler;
}

TEST_F(RocmSearchOrder, WithoutRocmTheLoadersCopyIsUsedAndNamed) {
  if (fs::exists("/opt/rocm/lib")) GTEST_SKIP() << "/opt/rocm is installed here and comes first";
  const auto loaded = devices("env -u ROCM_PATH LD_LIBRARY_PATH=" + distribution);
  EXPECT_TRUE(contains(loaded.runtime, distribution + "/libamdhip64.so has no symbol")) << loaded.runtime;
}

}  // namespace
}  // namespace ktune::testing
