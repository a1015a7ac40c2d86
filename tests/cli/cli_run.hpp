#pragma once
// Runs the ktune executable built with the tests, capturing its output and exit status.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>  // environ

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include "support/temp_dir.hpp"

namespace ktune::testing {

struct CliResult {
  int status = -1;     // exit status
  std::string output;  // stdout and stderr, interleaved
};

// The ktune executable: $KTUNE when set (a build carried to another machine, as
// scripts/remote/check.sh does), else the one built with these tests.
inline std::string ktune_exe() {
  const char* env = std::getenv("KTUNE");
  return env != nullptr && *env != '\0' ? env : KTUNE_EXE;
}

// Runs a shell command line, its stderr joined to its stdout.
inline CliResult run_command(const std::string& cmd) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  CliResult r;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.output.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// `args` is appended to the executable's path as shell words; `env` (e.g. "KTUNE_CACHE_DIR=/x")
// is prefixed; `input` (no single quotes) is the standard input, followed by a newline.
inline CliResult run_ktune(const std::string& args, const std::string& env = "", const std::string& input = "") {
  return run_command("printf '%s\\n' '" + input + "' | " + env + " " + ktune_exe() + " " + args);
}

// What a run printed on each stream apart: for output that is parsed (CSV, JSON), which a note
// on stderr must not corrupt.
struct CliStreams {
  int status = -1;  // exit status; -1 when it did not start or did not exit
  std::string out, err;
};

// `args` is the argument vector as is (no shell, so no quoting); the streams go through files.
inline CliStreams run_ktune_args(const std::vector<std::string>& args) {
  const ::ktune::test_support::TempDir dir;
  const auto out_path = dir.file("stdout.txt"), err_path = dir.file("stderr.txt");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> words{ktune_exe()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  CliStreams r;
  pid_t pid = 0;
  if (::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  r.out = read(out_path);
  r.err = read(err_path);
  return r;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// True when `ktune devices` finds a GPU (then the no-device messages cannot be observed).
// Throws when ktune does not run (e.g. on a machine where the build path is absent and $KTUNE is
// unset): that is a broken setup, not a machine without a GPU.
inline bool has_gpu() {
  auto r = run_ktune("devices --no-bandwidth --json");
  const auto j = nlohmann::json::parse(r.output, nullptr, false);
  if (r.status != 0 || !j.is_object())
    throw std::runtime_error("`" + ktune_exe() + " devices --json` failed (exit " + std::to_string(r.status) +
                             "; set $KTUNE to the ktune binary): " + r.output);
  for (const auto& b : j.at("backends"))
    if (!b.at("devices").empty()) return true;
  return false;
}

using CliTempDir = ::ktune::test_support::TempDir;

// Skips (saying why) when the compiler for `arch` cannot run on this machine.
#define SKIP_WITHOUT_COMPILER(result, arch)                  \
  if (contains((result).output, "cannot compile for " arch)) \
  GTEST_SKIP() << "no compiler for " arch " here: " << (result).output

// The command line that runs scripts/NAME (a Python script) of this source tree.
inline std::string python_script(const std::string& name) {
  return "python3 '" KTUNE_SOURCE_DIR "/scripts/" + name + "'";
}

// Tests of the Python scripts under scripts/, each with a temporary folder. A missing python3
// fails them: scripts/deps.sh installs it.
class ScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("python3 -c pass >/dev/null 2>&1") != 0)
      GTEST_FAIL() << "python3 is missing (scripts/deps.sh installs it)";
  }
  CliTempDir dir;
};

}  // namespace ktune::testing
