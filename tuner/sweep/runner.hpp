#pragma once
// The sweep: plan, compile (in parallel, through the cache, one key ahead of the device), run
// every candidate in a worker process, record each result as soon as it arrives, and record a
// gap for every key that ends without a verified kernel.
//
// Killed and resumed: every result is committed as it arrives, so a sweep killed at any moment
// (SIGKILL included) loses at most the candidate in flight; `resume` continues the latest
// compatible run (same device, arch, compiler and templates) whose results all belong to this
// sweep (its shape, keys of its plan: not another shard's), else starts a new run; it skips the
// (key, config) pairs that run recorded, and closes (gap recorded or
// cleared) the keys the killed sweep finished measuring but had not closed. The result is the
// one an uninterrupted sweep records (tests/unit/sweep_kill_resume_test.cpp).
//
// Several sweeps on one database at once (tests/unit/sweep_concurrency_test.cpp):
//  - without `resume`, each sweep is its own run and every row of every run is kept, whether the
//    keys overlap or not; winners() answers per run, and codegen serves each key from its newest
//    run (dispatch/table.hpp). A key's measured gap is one row per family/arch/key: the sweep
//    that closes the key last sets (or clears) it.
//  - with `resume`, concurrent sweeps continue the same run, and a candidate both planned is
//    measured by both: both rows are kept, and winners() picks the lowest median, then the
//    lowest id. To split one space over several processes, give each a `shard` instead.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/stopping.hpp"
#include "common/params.hpp"
#include "db/database.hpp"
#include "jit/compiler.hpp"
#include "sweep/plan.hpp"
#include "sweep/progress.hpp"
#include "sweep/space.hpp"

namespace ktune::sweep {

// The short first measurement of every candidate: enough to tell the contenders from the rest.
bench::TimingPolicy screening_policy() noexcept;

struct SweepOptions {
  std::vector<std::string> worker_command;  // argv of a worker (`ktune worker ...`)
  // Per candidate: its whole request, verification, screening and full measurement together.
  std::chrono::duration<double> timeout{120};
  std::chrono::duration<double> start_timeout{300};  // a worker's start, roof probes included
  // No candidate starts after this many seconds (checked before each one, screened or not; the one
  // running then finishes, within `timeout`); 0: no budget.
  double budget_s = 0;
  double screen_factor = 1.25;  // fully timed only within this factor of the key's best so far
  // Screening stops after one launch slower than this factor of the key's best so far: on the
  // largest keys a hopeless config's launch is long, and it would be launched ten times.
  double abandon_factor = 2.0;
  bench::TimingPolicy screen_policy = screening_policy();
  bench::TimingPolicy full_policy;
  bool resume = false;
  Shard shard;
  Progress::Mode progress = Progress::Mode::lines;
};

struct SweepSummary {
  int64_t run_id = 0;
  bool resumed = false;
  size_t keys = 0, candidates = 0, infeasible = 0, already_done = 0;
  size_t ok = 0, verify_failed = 0, compile_error = 0, fault = 0, timeout = 0;
  // Compiled, but pruned for what the code object says its kernels use (recorded infeasible).
  size_t pruned = 0;
  size_t not_started = 0;  // left when the budget ran out
  size_t gaps = 0;
  size_t workers_started = 0;
  jit::CacheWriteFailures cache_writes_failed;  // of the compile settings' cache (`ktune sweep` warns)
  // A resumed run whose copy roof the device here misses by more than 8%: what the sweep warned;
  // "" otherwise.
  std::string roof_warning;
  double seconds = 0;
  // Memory when the first and after the last candidate ran, to show that a long sweep stays flat:
  // the sweep process's resident set, and what the worker of that candidate reported (its resident
  // set, the device memory in use); 0 where unknown.
  struct Memory {
    int64_t rss_bytes = 0, worker_rss_bytes = 0, device_used_bytes = 0;
  };
  Memory memory_start, memory_end;
  int64_t peak_rss_bytes = 0;  // the sweep process's highest resident set
  // Where `seconds` went, summed over the candidates: the workers' own account of each
  // (protocol.hpp's WorkerTime) and what the sweep saw around it. What is left of `seconds` is
  // the sweep's own (planning, resuming, closing keys).
  struct Time {
    double setup = 0, load = 0, verify = 0, screen = 0, full = 0;
    double timed = 0;         // of screen + full: the timed launches, on the device
    double worker_rest = 0;   // the rest of the workers' time per request (unloading, the memory query)
    double messages = 0;      // the round trips less the workers' own time: pipes, JSON, scheduling
    double worker_start = 0;  // starting workers, the first one's roof measurements included
    double lost = 0;          // requests that ended without an answer: a worker that died or hung
    double database = 0;      // recording results and gaps
    double compile_wait = 0;  // the device idle, waiting for the next key's compiles
  };
  Time time;
};

// One line for a person: where a sweep's time went, largest first, in seconds.
std::string describe_time(const SweepSummary& s);

// `provenance` describes the device and the software (everything but id, copy_gbps, matrix_tflops
// and matrix_probe, which the first worker measures). Throws Error when no worker starts or the
// database fails (a full disk, say), saying how many results the run kept.
SweepSummary run_sweep(const Space& space, db::Database& db, db::Run provenance, const jit::Compiler& compiler,
                       const jit::CompileSettings& compile, const SweepOptions& options);

}  // namespace ktune::sweep
