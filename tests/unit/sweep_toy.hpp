#pragma once
// The toy family's whole sweep as `ktune sweep` runs it (fake compiler, fake worker script, real
// database), set up once for the sweep tests that run it in this process and for those that run
// it in child processes (sweep_child_support.hpp).
#include <chrono>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "jit/templates.hpp"
#include "sweep/runner.hpp"
#include "sweep_test_support.hpp"

namespace ktune::testing {

struct ToySweep {
  TempDir tmp;
  ToyFamily family;
  FakeCompiler compiler;
  sweep::SweepOptions options;
  std::string host = "toy-host";  // the provenance's

  // `worker` is the text of the worker's shell script, `args` its arguments.
  explicit ToySweep(const char* worker, const std::vector<std::string>& args = {}) {
    tmp.write("templates/toy/toy.hip", "template <int R, int S> __global__ void toy() {}\n");
    jit::set_template_root(tmp.path() + "/templates");
    options.worker_command = {"/bin/sh", tmp.write("worker.sh", worker)};
    options.worker_command.insert(options.worker_command.end(), args.begin(), args.end());
    options.start_timeout = std::chrono::seconds(10);
    options.progress = sweep::Progress::Mode::quiet;
  }
  ~ToySweep() { jit::set_template_root(""); }
  ToySweep(const ToySweep&) = delete;
  ToySweep& operator=(const ToySweep&) = delete;

  // Keys: `heads` with kv_dtype 0; configs: `rows` x `stages`.
  sweep::Space space(std::vector<int64_t> heads, std::vector<int64_t> rows, std::vector<int64_t> stages) const {
    sweep::Space s;
    s.origin = "test";
    s.family = &family;
    s.key_values = {std::move(heads), {0}};
    s.config_grids = {{std::move(rows), std::move(stages)}};
    s.shape = Params{{"ctx", 1000}, {"batch", 4}};
    return s;
  }
  static db::Run provenance() {
    db::Run r;
    r.family = "toy";
    r.backend = "cuda";
    r.device_name = "Toy GPU";
    r.arch = "sm_90a";
    r.template_hash = "0123";
    return r;
  }
  sweep::SweepSummary run(db::Database& db, const sweep::Space& s, const sweep::SweepOptions& o,
                          const jit::CodeCache* cache = nullptr) const {
    jit::CompileSettings cs;
    cs.arch = "sm_90a";
    cs.cache = cache;
    auto p = provenance();
    p.host = host;
    return sweep::run_sweep(s, db, std::move(p), compiler, cs, o);
  }
};

}  // namespace ktune::testing
