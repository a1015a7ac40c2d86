// `ktune sweep` and `ktune worker` where no GPU is: clear errors that say what to do instead; and
// the options of every verb that are refused as they are read (numbers, contradictions).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli_run.hpp"

namespace ktune::testing {
namespace {

TEST(SweepCli, WithoutADeviceSuggestsCompile) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU; the no-device message cannot be shown here";
  CliTempDir tmp;
  auto r = run_ktune("sweep --kernel mla_decode --space smoke --db " + tmp.path() + "/t.db");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no GPU to sweep on")) << r.output;
  EXPECT_TRUE(contains(r.output, "ktune compile --kernel mla_decode --space smoke --arch gfx90a")) << r.output;
}

// A request the worker does not understand is quoted back cut to 200 bytes: cut inside a
// character, the reply could not be written as JSON and the worker died without an answer.
TEST(SweepCli, AWorkerAnswersARequestItDoesNotUnderstandWithValidJson) {
  const auto r =
      run_ktune("worker --backend hip", "", "{\"op\":\"x" + std::string(189, 'a') + "\xC3\xA9\xE2\x80\xA6\"}");
  EXPECT_EQ(r.status, 4) << r.output;  // the worker retires after an unknown request
  const auto reply = nlohmann::json::parse(r.output);
  EXPECT_EQ(reply["status"], "fault");
  EXPECT_NE(reply["detail"].get<std::string>().find("unknown request"), std::string::npos);
}

// The compiler's identity is what code-object cache keys hold: shown, so that a cache seeded on
// another machine can be seen to match or not.
TEST(SweepCli, DevicesShowTheCompilersCacheIdentity) {
  const auto o = run_ktune_args({"devices", "--no-bandwidth", "--json"});
  ASSERT_EQ(o.status, 0) << o.err;
  size_t compilers = 0;
  const auto devices = nlohmann::json::parse(o.out);
  for (const auto& b : devices.at("backends"))
    for (const auto& t : b.at("targets"))
      for (const auto& c : t.at("compilers")) {
        if (!c.at("chosen").get<bool>()) continue;
        ++compilers;
        // "hiprtc 5.2.21153", "clang 22.1.8 (/usr/bin/clang-22)": the identity holds the version number.
        const std::string version = c.at("version").get<std::string>();
        const std::string number = version.substr(version.find(' ') + 1, version.find(" (") - version.find(' ') - 1);
        EXPECT_NE(c.at("identity").get<std::string>().find(number), std::string::npos) << c;
      }
  if (compilers == 0) GTEST_SKIP() << "no compiler (NVRTC, hipRTC, clang) loads here";
}

TEST(SweepCli, UnknownKernelAndBackendAreNamed) {
  CliTempDir tmp;
  auto kernel = run_ktune("sweep --kernel nosuch --db " + tmp.path() + "/t.db");
  EXPECT_EQ(kernel.status, 1);
  EXPECT_TRUE(contains(kernel.output, "nosuch")) << kernel.output;
  auto backend = run_ktune("sweep --kernel mla_decode --backend opencl --db " + tmp.path() + "/t.db");
  EXPECT_EQ(backend.status, 1);
  EXPECT_TRUE(contains(backend.output, "opencl")) << backend.output;
}

// Refused while the options are read, before any device or database: a NaN passes every range
// comparison, and a timeout past the clock's range would put every deadline in the past.
TEST(SweepCli, TimeoutAndBudgetMustBeFiniteSecondsInRange) {
  CliTempDir tmp;
  const std::string sweep = "sweep --kernel mla_decode --db " + tmp.path() + "/t.db ";
  for (const char* bad : {"--timeout nan", "--timeout 1e10", "--timeout 0", "--timeout -5", "--timeout 2x",
                          "--budget nan", "--budget inf", "--budget -1"}) {
    auto r = run_ktune(sweep + bad);
    EXPECT_NE(r.status, 0) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "is not a number of seconds in [")) << bad << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/t.db"));
  // In range, the options pass (and the sweep goes on to look for a device).
  auto ok = run_ktune(sweep + "--timeout 0.5 --budget 0");
  EXPECT_FALSE(contains(ok.output, "is not a number of seconds")) << ok.output;
}

// CLI11 alone reads integers in base 0 ("010" would be device 8) and takes a negative --jobs of
// `package`; each verb's integer options are refused unless decimal and in range.
TEST(SweepCli, IntegerOptionsAreDecimalAndInRange) {
  CliTempDir tmp;
  const std::string db = " --db " + tmp.path() + "/t.db";
  const std::vector<std::string> bads = {
      "sweep --kernel mla_decode --device 010" + db,
      "bench --kernel mla_decode --config x --device 0x1",
      "query --run 010" + db,
      "gaps --run -2" + db,
      "compile --kernel mla_decode --arch gfx90a --jobs -3",
      "package --kernel mla_decode --arch gfx90a --out " + tmp.path() + "/pkg --jobs -3 --db /proc/self/exe"};
  for (const auto& bad : bads) {
    auto r = run_ktune(bad);
    EXPECT_NE(r.status, 0) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, "is not a decimal integer in [")) << bad << ": " << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/t.db"));
}

// Options that contradict each other, or one that cannot mean what it says, were taken silently.
TEST(SweepCli, ContradictoryOptionsAreRefused) {
  CliTempDir tmp;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bench --kernel mla_decode --config x --allow-stale", "--allow-stale requires --db"},
      {"devices --no-bandwidth --first-arch --json", "excludes --first-arch"},
      {"devices --no-bandwidth --first-slug --json", "excludes --first-slug"},
      {"compile --kernel mla_decode --arch gfx90a --no-cache --cache-dir " + tmp.path(), "excludes --no-cache"},
      {"sweep --kernel mla_decode --db " + tmp.path() + "/t.db --cache-dir " + tmp.path() + " --no-cache",
       "--cache-dir excludes --no-cache"},
      {"bench --kernel mla_decode --config x --no-cache --cache-dir " + tmp.path(), "excludes --no-cache"},
      {"package --kernel mla_decode --arch gfx90a --db /proc/self/exe --out " + tmp.path() +
           "/pkg --no-cache --cache-dir " + tmp.path(),
       "excludes --no-cache"},
      {"compile --kernel mla_decode --arch gfx90a --space " + tmp.path(), "is a directory; give a TOML file"}};
  for (const auto& [args, says] : cases) {
    auto r = run_ktune(args);
    EXPECT_NE(r.status, 0) << args << ": " << r.output;
    EXPECT_TRUE(contains(r.output, says)) << args << ": " << r.output;
  }
}

TEST(SweepCli, WorkerWithoutADeviceRefusesToStart) {
  if (has_gpu()) GTEST_SKIP() << "this machine has a GPU; a worker would start";
  auto r = run_ktune("worker --backend cuda --device 0", "", R"({"op":"hello"})");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "\"ready\":false")) << r.output;
}

}  // namespace
}  // namespace ktune::testing
