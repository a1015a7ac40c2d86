#pragma once
// The worker process's side of worker isolation (`ktune worker`): it owns the device, runs one
// candidate at a time (verify on the family's verification shapes, then time on the timing
// shape) and answers the sweep (protocol.hpp). A device fault ends the process after the
// answer, because the context is unusable; the sweep starts a fresh worker. Started without a
// device, a worker compiles instead (see process_compiler.hpp).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "kernels/family.hpp"
#include "sweep/module_cache.hpp"
#include "sweep/protocol.hpp"

namespace ktune::sweep {

// Runs candidates on one context. The verification instances (with their CPU references) are
// kept while consecutive requests share them: keys that differ only in fields the family's
// verification ignores (Family::fields_verification_ignores) share them, and each program's
// verdict on them, since it is the same program on the same inputs. The timing instance is kept
// while consecutive requests share the key, and inputs that timing instances of several keys can
// share (Family::instantiate_for_timing) while they fit in a quarter of the device's memory; the
// code objects while they are among the 256 used last.
class CandidateRunner {
 public:
  explicit CandidateRunner(backend::Context& ctx)
      : ctx_(ctx), inputs_(static_cast<size_t>(ctx.info().memory_bytes / 4)) {}
  // Loads the code, verifies (unless !req.verify), then times. Also what `ktune bench` runs in
  // its own process. Throws DeviceFault when the context became unusable; every other failure
  // is in the result.
  RunResult run(const Family& family, const RunRequest& req);

 private:
  struct Verification {
    std::string id;  // family, the key without the fields verification ignores, whether verified
    std::vector<std::pair<Params, std::unique_ptr<Instance>>> instances;
    std::map<std::string, RunResult> verdicts;  // by program: config, symbols, code
  };
  // Makes the key's verification instances unless the previous request's serve it, and drops the
  // timing instance of another key; true when it made verification instances.
  bool prepare(const Family& family, const RunRequest& req);
  // ok (with the worst errors seen) or verify_failed; a program verified before on these
  // instances gets its verdict again.
  RunResult verify(const Family& family, const RunRequest& req, const Candidate& c);
  RunResult time(const Family& family, const RunRequest& req, const Candidate& c, RunResult r);

  backend::Context& ctx_;
  Verification verification_;
  std::string timing_key_;  // family, key and seed of timing_
  std::unique_ptr<Instance> timing_;
  InputCache inputs_;
  // More than the programs of a whole space (mla_decode's default: 130 for sm_90a), since a plan
  // visits all of them every few keys (batch, then cache type and mask, vary fastest): a cache
  // smaller than that cycle would drop each program just before it is needed again.
  ModuleCache modules_{256};
};

struct WorkerSetup {
  std::string backend;  // "cuda", "hip"
  int device = -1;      // -1: a compile worker, which opens no device
  // The sweep that started this device worker, as it knew its own pid (0: not checked).
  int64_t parent_pid = 0;
};

// The exit status of a device worker whose sweep died before the worker could arrange to die
// with it.
constexpr int kParentGoneStatus = 5;

// Serves requests from `in_fd` and answers on `out_fd` until an exit request or the end of the
// input. Returns the process exit status.
int serve_worker(int in_fd, int out_fd, const WorkerSetup& setup);

}  // namespace ktune::sweep
