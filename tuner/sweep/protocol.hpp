#pragma once
// The messages between a sweep and its worker process: one JSON object per line. The parent
// compiles and sends code objects; the worker owns the device and answers with what the
// candidate did there.
//
//   {"op":"hello","copy_gbps":bool,"matrix_tflops":bool}
//                                    -> {"ready":true,"device":{...},"driver":..,"copy_gbps":x,
//                                        "matrix_tflops":y[,"matrix_probe":".."][,"matrix_error":".."]}
//                                       (y 0: not asked for, or not measured: matrix_error says
//                                       why; matrix_probe names the instruction of a measured y)
//                                       or {"ready":false,"error":".."}; a worker started
//                                       without a device (a compile worker) answers {"ready":true}
//   {"op":"run",...RunRequest...}    -> RunResult
//   {"op":"compile",...CompileRequest...} -> {"ok":true,...CompileResult...}
//                                       or {"ok":false,"error":..,"log":..}
//   {"op":"exit"}                    -> (the worker exits)
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "bench/stats.hpp"
#include "bench/stopping.hpp"
#include "common/params.hpp"
#include "kernels/family.hpp"

namespace ktune::sweep {

struct RunRequest {
  std::string family;
  Params key, config, shape;         // shape: the timing shape
  std::vector<char> code;            // the code object
  std::vector<std::string> symbols;  // lowered name of each of the family's name expressions
  uint64_t seed = 0;                 // timing inputs; the same for every config of a key
  bench::TimingPolicy screen;        // the short first measurement
  bench::TimingPolicy full;
  // Full measurement only when the screening median is at most this; 0: always, without
  // screening first.
  double full_cutoff_us = 0;
  // false: time without verifying (`ktune bench --no-verify`); the result then says nothing
  // about correctness. A sweep always verifies.
  bool verify = true;
};

enum class RunStatus { ok, verify_failed, load_failed, fault };
std::string_view to_string(RunStatus s) noexcept;

// Where a worker's wall time on one candidate went, in milliseconds (0: not spent, or a worker
// that does not say): what `ktune sweep` sums into its account of the sweep's time.
struct WorkerTime {
  double setup_ms = 0;   // the key's instances (inputs, CPU references, uploads), when the key changed
  double load_ms = 0;    // loading the code object (none when the worker had it already)
  double verify_ms = 0;  // the verification launches and their comparisons
  double screen_ms = 0;  // the screening measurement, warm-up and graph captures included
  double full_ms = 0;    // the full measurement, likewise
  double timed_ms = 0;   // of screen_ms + full_ms: the timed launches themselves, on the device
  double total_ms = 0;   // the whole request, from its line read to its answer ready to write
};

struct RunResult {
  RunStatus status = RunStatus::ok;
  std::string detail;
  double max_abs_err = 0, rel_l2_err = 0;  // worst over the verification shapes
  bench::Stats stats;                      // ok only
  bool fully_timed = false;                // false: screened out, stats are the short measurement
  Traffic traffic;                         // of one launch on the timing shape
  bool fatal = false;                      // the worker exits after this reply (device fault)
  // The worker after the candidate (0: not measured): its resident set and the device memory in
  // use (by every process), so that a sweep can show that neither grows from candidate to candidate.
  int64_t rss_bytes = 0, device_used_bytes = 0;
  WorkerTime time;
};

nlohmann::json to_json(const RunRequest& r);
RunRequest run_request_from(const nlohmann::json& j);  // throws Error on a malformed request
nlohmann::json to_json(const RunResult& r);
RunResult run_result_from(const nlohmann::json& j);  // throws Error on a malformed result

nlohmann::json to_json(const backend::CompileRequest& r);
backend::CompileRequest compile_request_from(const nlohmann::json& j);  // throws Error when malformed
nlohmann::json compile_reply(const backend::CompileResult& r);
nlohmann::json compile_error_reply(std::string_view what, std::string_view log);
// The result of a compile reply; throws CompileError with the worker's message and log for an
// error reply, Error for a malformed one.
backend::CompileResult compile_result_from(const nlohmann::json& j);

std::string base64_encode(std::span<const char> bytes);
std::vector<char> base64_decode(std::string_view text);  // throws Error on invalid text

}  // namespace ktune::sweep
