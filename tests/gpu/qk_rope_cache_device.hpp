#pragma once
// Shared by the qk_rope_cache GPU tests: the device (opened once per process, or the reason there
// is none), the kernels of each config compiled once (one program per config and dtype pair,
// compiled in parallel), and one verified launch.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "gpu/test_device.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/qk_rope_cache/family.hpp"
#include "kernels/qk_rope_cache/instance.hpp"
#include "kernels/qk_rope_cache/problem.hpp"

namespace ktune::rope::gpu_test {

using ktune::gpu_test::Device;
using ktune::gpu_test::device;
using ktune::gpu_test::WithDevice;

// The kernels a config launches for a dtype pair.
struct Variant {
  Config config;
  num::KvDtype kv_dtype = num::KvDtype::bf16;
  num::KvDtype q_dtype = num::KvDtype::bf16;
  std::vector<std::string> names() const { return kernel_names(config, kv_dtype, q_dtype); }
};

class Kernels {
 public:
  // Compiles every variant not compiled yet, in parallel. Throws CompileError (with the log).
  void prepare(const std::vector<Variant>& variants) {
    Device& d = device();
    const std::string source = jit::render(qk_rope_cache_family().template_file());
    std::vector<std::pair<std::vector<std::string>, std::future<backend::CompileResult>>> jobs;
    for (const Variant& v : variants) {
      const auto names = v.names();
      if (compiled_.count(names) || std::any_of(jobs.begin(), jobs.end(), [&](auto& j) { return j.first == names; }))
        continue;
      backend::CompileRequest req{source, "qk_rope_cache.hip", names, d.ctx->info().arch, {}};
      jobs.emplace_back(names, std::async(std::launch::async, [&d, req] { return d.backend->compile(req); }));
    }
    for (auto& [names, job] : jobs) {
      const backend::CompileResult compiled = job.get();
      modules_.push_back(d.ctx->load(compiled.code));  // the context is used from this thread only
      compiled_[names] = {modules_.back().get(), compiled.lowered_names};
    }
  }

  Candidate candidate(const Variant& v) const {
    auto it = compiled_.find(v.names());
    if (it == compiled_.end())
      throw Error("kernels of config " + to_params(v.config).canonical() + " were not prepared");
    return Candidate{to_params(v.config), it->second.first, it->second.second};
  }

 private:
  std::vector<std::unique_ptr<backend::Module>> modules_;
  std::map<std::vector<std::string>, std::pair<backend::Module*, std::vector<std::string>>> compiled_;
};

inline Kernels& kernels() {
  static Kernels k;
  return k;
}

// Poisons, launches `variant` once on `instance` and verifies.
inline Verdict run_once(DeviceInstance& instance, const Variant& variant) {
  kernels().prepare({variant});
  instance.poison();
  instance.launch(kernels().candidate(variant), 0);
  return instance.verify();
}

}  // namespace ktune::rope::gpu_test
