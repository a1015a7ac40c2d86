#pragma once
// Runs a program to completion and keeps what it printed: the offline compilers (clang, ld.lld)
// run this way. Safe to call from several threads at once.
#include <string>
#include <vector>

namespace ktune {

struct CommandResult {
  int exit_code = -1;  // the program's exit status; -1 when it did not exit normally (a signal)
  std::string output;  // its stdout and stderr, interleaved as written
  bool ok() const noexcept { return exit_code == 0; }
};

// Runs argv[0] (looked up on PATH when it has no '/') with the arguments argv[1..], standard
// input empty, in the folder `cwd` (empty: this process's). Throws Error when it cannot be
// started at all.
CommandResult run_command(const std::vector<std::string>& argv, const std::string& cwd = {});

// `name` when it is a path, else the first executable file of that name on PATH; empty when none.
std::string find_program(const std::string& name);

}  // namespace ktune
