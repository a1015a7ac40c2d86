#pragma once
// The tuning database: typed access over SQLite (schema in db/schema.sql, migrations in
// db/migrations.cpp). WAL + busy timeout so that several sweeps can share one file; foreign keys
// on; every write is its own committed transaction, so a killed sweep loses at most the
// candidate in flight (synchronous=NORMAL: an OS crash or power loss can also lose the commits
// since the last WAL checkpoint, which FULL would prevent with a disk flush per measurement).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.hpp"

namespace ktune::db {

// A sweep measures on a device; a compile-only run (`ktune compile --db`) compiled the candidates
// for a target and read their code objects, with no device: it has no roofs, no measurements and no
// gaps, only compiled kernels, and readers of measurements, winners and gaps never see it.
enum class RunKind { sweep, compile };
std::string_view to_string(RunKind k) noexcept;
RunKind run_kind_from_string(std::string_view s);  // throws Error

// Provenance of one run: the validators codegen checks before it trusts a result.
struct Run {
  int64_t id = 0;
  RunKind kind = RunKind::sweep;
  std::string started_at;  // UTC, ISO 8601
  std::string family;
  std::string backend;      // "cuda", "hip"
  std::string device_name;  // "NVIDIA H200"; "" for a compile-only run
  std::string arch;         // "sm_90a"
  int compute_units = 0;
  std::string driver_version;
  std::string compiler_version;  // "nvrtc 13.0"
  std::string template_hash;     // xxh64 of the rendered templates of the family
  std::string ktune_version;
  std::string host;
  std::string command;       // the command line that started the run
  double copy_gbps = 0;      // copy bandwidth measured in this run (bytes read + written)
  double matrix_tflops = 0;  // matrix-core throughput measured in this run, 0 if not measured
  // The instruction whose probe measured matrix_tflops ("wgmma m64n256k16 bf16"); empty where
  // none was measured, and in runs recorded before schema version 2, which did not name it.
  std::string matrix_probe;
};

// For people: the probe of a run that measured a matrix roof, or that it was not recorded.
std::string matrix_probe_of(const Run& r);

enum class Status { ok, verify_failed, compile_error, fault, timeout, infeasible };
std::string_view to_string(Status s) noexcept;
Status status_from_string(std::string_view s);  // throws Error

// One candidate (key, config) measured or rejected in one run.
struct Measurement {
  int64_t id = 0;
  int64_t run_id = 0;
  Params key;
  Params config;
  Params shape;  // the timing shape
  Status status = Status::ok;
  // Timing: stored as NULL (read back as 0) when samples == 0. An ok row must be timed
  // (samples > 0, 0 < median, p10 <= median <= p90): the schema rejects it otherwise.
  double median_us = 0, p10_us = 0, p90_us = 0;
  int samples = 0;
  double gbps = 0, tflops = 0;
  // gbps / run's copy_gbps and tflops / run's matrix_tflops; none (NULL) where the run did not
  // measure that roof or nothing was timed, rather than a 0 that reads as "no use of it".
  std::optional<double> frac_copy_bw, frac_matrix;
  double max_abs_err = 0, rel_l2_err = 0;  // NaN survives the round trip (stored as NULL)
  std::string detail;                      // compiler log excerpt, verify detail, fault message
  std::string measured_at;                 // set by record(): UTC, ISO 8601
};

enum class GapReason { no_config, compile_error, verify_failed, fault, timeout, declared };
std::string_view to_string(GapReason r) noexcept;
GapReason gap_reason_from_string(std::string_view s);  // throws Error

// A problem key that has no kernel, and what a dispatcher should do instead.
struct Gap {
  int64_t id = 0;
  std::string family;
  std::string arch;
  Params key;
  GapReason reason = GapReason::no_config;
  std::string detail;
  // "measured" (then run_id is set and reason is not declared) or a declaration, e.g.
  // "aiter 0.1.19 has no fp8 2-token non-causal fold" (then reason is declared, no run_id).
  std::string source;
  std::optional<int64_t> run_id;
  std::string fallback;       // "none" (or empty), or the canonical text of the key to use instead
  std::string fallback_note;  // why that fallback is valid
  std::string created_at;     // set by add_gap(): UTC, ISO 8601
};

// What a code object says one kernel uses; none where it does not say (or ktune does not read
// that target's objects). Read from metadata, not measured.
struct KernelResources {
  std::optional<int64_t> vgprs;           // vector registers per lane (AMD: architectural + accumulation)
  std::optional<int64_t> agprs;           // AMD accumulation registers per lane (part of vgprs on CDNA)
  std::optional<int64_t> sgprs;           // scalar registers per wave
  std::optional<int64_t> scratch_bytes;   // private memory per lane: spills and stack (0: none)
  std::optional<int64_t> lds_bytes;       // LDS / shared memory per workgroup the kernel declares
  std::optional<int64_t> waves_per_simd;  // waves one SIMD holds at once, by registers and LDS
};

// One kernel of one compiled candidate of a compile-only run, or the candidate's failed program.
struct CompiledKernel {
  int64_t id = 0;
  int64_t run_id = 0;
  Params key;
  Params config;
  std::string kernel;          // the name expression, "ktune::mla_decode_mma<...>"; "" for a failed program
  std::string symbol;          // the lowered name in the code object; "" for a failed program
  std::string arch;            // the run's; set by record_compiled()
  Status status = Status::ok;  // ok or compile_error
  double compile_seconds = 0;  // the program's compile (or cache load), shared by its kernels
  bool from_cache = false;
  KernelResources resources;
  std::string detail;       // the compiler log excerpt of a failed program
  std::string recorded_at;  // set by record_compiled(): UTC, ISO 8601
};

// The best verified measurement of one key in one run.
struct Winner {
  Run run;
  Measurement m;
};

// One step of `ktune migrate`: runs of `family` under template hash `from` get `to`.
struct HashAdoption {
  std::string family;
  std::string from;
  std::string to;
};

// Every set field narrows the result. runs(): key_equals and status keep the runs with at least
// one such measurement. gaps(): device_name keeps declared gaps (they hold for the whole arch)
// and gaps measured on that device; status does not apply to gaps.
struct Filter {
  // runs() lists runs of this kind; measurements, winners, gaps and arches() are only ever of
  // sweeps, compiled_kernels() only of compile-only runs.
  RunKind run_kind = RunKind::sweep;
  std::optional<std::string> family, arch, device_name;
  std::optional<int64_t> run_id;
  // Key fields that must match exactly (name, value); names are identifiers.
  std::vector<std::pair<std::string, int64_t>> key_equals;
  std::optional<Status> status;
};

class Database {
 public:
  // Opens (creating when `create` and the file is absent) and migrates to the current schema.
  // Throws Error with the path and the cause for: not a SQLite file, corrupt file, newer schema,
  // read-only location when writing is needed. Never modifies a file it rejects.
  // A read-only open also refuses a file that would need migrating.
  static std::unique_ptr<Database> open(const std::string& path, bool create, bool read_only = false);
  // Opens an existing `path` for writing, which migrates it to current_schema_version(), and
  // closes it. Returns the version the file had. Throws like open.
  static int migrate_file(const std::string& path);
  virtual ~Database() = default;

  virtual const std::string& path() const noexcept = 0;

  static int current_schema_version() noexcept;
  virtual int schema_version() = 0;

  // Returns the new run id; an empty started_at is set to now.
  virtual int64_t begin_run(const Run& r) = 0;
  virtual Run run(int64_t id) = 0;                          // throws Error for an unknown id
  virtual std::vector<Run> runs(const Filter& f = {}) = 0;  // ordered by id
  // Runs of `like`'s kind and family on the same device and arch, with the same compiler and
  // template hash: what --resume may continue (tuner/sweep/runner.hpp, sweep/compile_run.hpp).
  virtual std::vector<Run> compatible_runs(const Run& like) = 0;

  // One committed transaction; the family is the run's. Returns the new measurement id.
  virtual int64_t record(const Measurement& m) = 0;
  virtual std::vector<Measurement> measurements(const Filter& f = {}) = 0;  // ordered by id
  // (key, config) pairs already measured, with any status, in any of `run_ids` (for --resume);
  // distinct, sorted by canonical text.
  virtual std::vector<std::pair<Params, Params>> done(const std::vector<int64_t>& run_ids) = 0;

  // All of `kernels` in one committed transaction, or none of them; each must be of a compile-only
  // run and have status ok (with a symbol) or compile_error (without). Returns how many it recorded.
  virtual size_t record_compiled(const std::vector<CompiledKernel>& kernels) = 0;
  // Rows of compile-only runs (the filter's run_kind is ignored), ordered by id.
  virtual std::vector<CompiledKernel> compiled_kernels(const Filter& f = {}) = 0;
  // (key, config) pairs with a row in any of `run_ids` of compiled_kernels (for compile --resume);
  // distinct, sorted by canonical text.
  virtual std::vector<std::pair<Params, Params>> compiled(const std::vector<int64_t>& run_ids) = 0;

  // One committed transaction; replaces the gap of the same family/arch/key/source (keeping its
  // id). Returns the gap's id.
  virtual int64_t add_gap(const Gap& g) = 0;
  virtual bool remove_gap(const std::string& family, const std::string& arch, const Params& key,
                          const std::string& source) = 0;   // false if there was none
  virtual std::vector<Gap> gaps(const Filter& f = {}) = 0;  // ordered by family, arch, key, source
  // The arches `family` has sweep runs or gaps of, sorted. Reads no key text, so that a malformed row
  // of one arch stands in the way of that arch alone.
  virtual std::vector<std::string> arches(const std::string& family) = 0;

  // Best ok measurement per key (lowest median, then lowest id), per run matched by the filter;
  // the `winners` view of schema.sql. Ordered by run id, then key.
  virtual std::vector<Winner> winners(const Filter& f = {}) = 0;

  // Gives the runs of each adoption's family recorded under its template hash `from` the hash
  // `to`, all in one transaction; returns how many runs each changed, in order. Only for `ktune
  // migrate`, which passes the older hashes of runs that measured today's kernels
  // (kernels/template_lineage.hpp).
  virtual std::vector<int> adopt_template_hashes(const std::vector<HashAdoption>& adoptions) = 0;
};

}  // namespace ktune::db
