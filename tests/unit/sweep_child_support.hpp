#pragma once
// Sweeps in child processes, for the tests that kill them or run two at once against one
// database: a forked child runs the whole sweep of the toy family (fake compiler, fake worker
// script, real database) exactly as `ktune sweep` does, so SIGKILL hits a real process with a
// real SQLite connection, a worker and compile threads.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include "db/database.hpp"
#include "sweep_toy.hpp"

namespace ktune::testing {

// Answers every run request after a few milliseconds (so that a sweep lasts long enough to be
// killed or overlapped), by key and config: heads=4 never verifies and every config of heads=12
// crashes its worker (two kinds of gap); otherwise the rows field decides.
inline const char* kChildWorker = R"(#!/bin/sh
result() {  # status median fully_timed detail
  echo "{\"status\":\"$1\",\"detail\":\"$4\",\"max_abs_err\":0.001,\"rel_l2_err\":0.0001,\"median_us\":$2,\"p10_us\":$2,\"p90_us\":$2,\"samples\":20,\"rel_ci\":null,\"fully_timed\":$3,\"bytes\":5000000,\"flops\":1000000,\"fatal\":false}"
}
while IFS= read -r line; do
  case "$line" in
    *'"op":"hello"'*) echo '{"ready":true,"device":{"name":"Toy GPU","arch":"sm_90a"},"copy_gbps":1000.0}'; continue ;;
    *'"op":"exit"'*) exit 0 ;;
  esac
  sleep 0.005
  case "$line" in
    *'"key":"heads=4,'*) result verify_failed 0 false "element 3 differs" ;;
    *'"key":"heads=12,'*) echo "illegal address" >&2; kill -SEGV $$ ;;
    *'"config":"rows=16,'*) result ok 10 true "" ;;
    *'"config":"rows=32,'*) result ok 20 false "" ;;
    *'"config":"rows=48,'*) result verify_failed 0 false "max error 3.5" ;;
    *'"config":"rows=64,'*) echo "illegal address" >&2; kill -SEGV $$ ;;
    *'"config":"rows=96,'*) result load_failed 0 false "bad code object" ;;
    *) echo "unexpected request" >&2; exit 9 ;;
  esac
done
)";

// (key, config, status) of every measurement: a multiset, so that a duplicate shows.
using Rows = std::multiset<std::tuple<std::string, std::string, std::string>>;
// (key, reason, source, detail) of every gap.
using Gaps = std::set<std::tuple<std::string, std::string, std::string, std::string>>;

inline Rows rows_of(db::Database& db, std::optional<int64_t> run_id = std::nullopt) {
  db::Filter f;
  f.run_id = run_id;
  Rows out;
  for (const auto& m : db.measurements(f))
    out.emplace(m.key.canonical(), m.config.canonical(), std::string(db::to_string(m.status)));
  return out;
}

inline Gaps gaps_of(db::Database& db) {
  Gaps out;
  for (const auto& g : db.gaps())
    out.emplace(g.key.canonical(), std::string(db::to_string(g.reason)), g.source, g.detail);
  return out;
}

// Empty when the file opens as a tuning database and SQLite's quick_check passes; else why not.
inline std::string damage_of(const std::string& path) {
  if (!std::filesystem::exists(path)) return "";  // killed before it created the file: nothing to lose
  try {
    db::Database::open(path, /*create=*/false);
    SQLite::Database raw(path, SQLite::OPEN_READONLY);
    auto check = raw.execAndGet("PRAGMA quick_check").getString();
    return check == "ok" ? "" : "quick_check: " + check;
  } catch (const std::exception& e) {
    return e.what();
  }
}

// The toy family's sweep, with everything a child process needs to run it on its own.
struct ChildSweep : ToySweep {
  ChildSweep() : ToySweep(kChildWorker) {
    options.timeout = std::chrono::seconds(5);
    compiler.delay = std::chrono::milliseconds(1);
  }

  // Key heads x config rows (kv_dtype 0, stages 1 and 2); heads=2 has no feasible config.
  sweep::Space space(std::vector<int64_t> heads) const {
    return ToySweep::space(std::move(heads), {16, 32, 48, 64, 96, 99}, {1, 2});
  }
  // The sweep in this process: opens `db_path` itself, as `ktune sweep` does.
  sweep::SweepSummary run(const std::string& db_path, const sweep::Space& s, bool resume) const {
    auto db = db::Database::open(db_path, /*create=*/true);
    auto o = options;
    o.resume = resume;
    return ToySweep::run(*db, s, o);
  }
  // The sweep in a forked child, which exits 0 when it finished and 1 (saying why on stderr)
  // when it threw. The child leaves by _exit: the parent's objects are the parent's to destroy.
  pid_t spawn(const std::string& db_path, const sweep::Space& s, bool resume) const {
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid > 0) return pid;
    int code = 0;
    try {
      run(db_path, s, resume);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child sweep: %s\n", e.what());
      code = 1;
    }
    ::_exit(code);
  }
};

// Waits up to `limit` for `pid`; kills it past that. Returns the wait status, or -1 when it had
// to be killed.
inline int wait_child(pid_t pid, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status;
}

inline bool exited_cleanly(int status) { return status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }

}  // namespace ktune::testing
