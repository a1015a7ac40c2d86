#pragma once
// Runs the ktune executable built with the tests, capturing its output and exit status.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>
#include "support/temp_dir.hpp"

namespace ktune::testing {

struct CliResult {
  int status = -1;     // exit status
  std::string output;  // stdout and stderr, interleaved
};

// The ktune executable: $KTUNE when set (a build carried to another machine, as
// scripts/device/check.sh does), else the one built with these tests.
inline std::string ktune_exe() {
  const char* env = std::getenv("KTUNE");
  return env != nullptr && *env != '\0' ? env : KTUNE_EXE;
}

// `args` is appended to the executable's path as shell words; `env` (e.g. "KTUNE_CACHE_DIR=/x")
// is prefixed; `input` (no single quotes) is the standard input, followed by a newline.
inline CliResult run_ktune(const std::string& args, const std::string& env = "", const std::string& input = "") {
  const std::string cmd = "printf '%s\\n' '" + input + "' | " + env + " " + ktune_exe() + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed: " + cmd);
  CliResult r;
  std::array<char, 4096> buf;
  for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) r.output.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// True when `ktune devices` finds a GPU (then the no-device messages cannot be observed).
inline bool has_gpu() {
  auto r = run_ktune("devices --no-bandwidth --json");
  auto j = nlohmann::json::parse(r.output);
  for (const auto& b : j.at("backends"))
    if (!b.at("devices").empty()) return true;
  return false;
}

using CliTempDir = ::ktune::test_support::TempDir;

}  // namespace ktune::testing
