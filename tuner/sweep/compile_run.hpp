#pragma once
// `ktune compile`: every feasible candidate of a space compiled for one target, without a device,
// and what each kernel uses of the target read from its code object (kernels/kernel_resources.hpp).
//
// With a database, a compile-only run (db::RunKind::compile) records one row per kernel of each
// candidate, or one per candidate whose program failed: no roofs, no timings, nothing a reader of
// measurements could take for one. The candidates compile in batches, each recorded in one
// transaction once it is compiled, so a compile killed at any moment loses at most the batch in
// flight; `resume` continues the newest compatible compile-only run (same arch, compiler and
// templates) whose rows are all of keys of this plan (not another shard's), skipping the
// candidates it recorded.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "jit/compiler.hpp"
#include "sweep/plan.hpp"
#include "sweep/space.hpp"

namespace ktune::sweep {

struct CompileRunOptions {
  bool resume = false;
  Shard shard;
  // Candidates compiled together and recorded in one transaction (with a database; without one,
  // everything compiles in one batch, the most parallel).
  size_t batch_candidates = 64;
  // After each batch: candidates done so far, of all to compile.
  std::function<void(size_t done, size_t total)> on_batch;
};

// The kernels of one kind (a template, its arguments aside) over every compiled candidate.
struct KernelKind {
  std::string kind;  // "ktune::mla_decode_mma"
  size_t kernels = 0;
  size_t read = 0;  // of which the code object's resources were read
  std::optional<int64_t> max_vgprs, max_agprs, max_scratch_bytes, min_waves_per_simd;
  size_t spilling = 0;  // kernels with scratch
};

// A program that failed, with the first candidate that needs it and how many do.
struct CompileFailure {
  std::string error;
  Params key, config;
  size_t candidates = 0;
};

struct CompileRunSummary {
  int64_t run_id = 0;  // 0 without a database
  bool resumed = false;
  size_t keys = 0, candidates = 0, infeasible = 0, already_done = 0;
  jit::CompileStats stats;  // summed over the batches
  std::vector<CompileFailure> failures;
  std::vector<KernelKind> kinds;  // sorted by kind
  size_t resources_unread = 0;    // candidates whose code object's resources could not be read
  std::string first_unread;       // why, for the first of them
  size_t rows = 0;                // recorded in the database
};

// The kind of a name expression: the template's name, its arguments dropped.
std::string kernel_kind(std::string_view name_expression);

// Compiles `space` for `provenance.arch` (its kind must be compile). With `db`, records the run as
// above. Throws jit::CompilerUnavailable when the compiler cannot run, Error when the database
// fails; what was recorded before stays.
CompileRunSummary run_compile(const Space& space, db::Database* db, db::Run provenance, const jit::Compiler& compiler,
                              const jit::CompileSettings& settings, const CompileRunOptions& options);

}  // namespace ktune::sweep
