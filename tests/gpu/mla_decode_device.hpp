#pragma once
// Shared by the mla_decode GPU tests: the device (opened once per process, or the reason there is
// none) and the kernel instances they run, compiled in parallel and loaded once.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "gpu/test_device.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/instance.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune::mla::gpu_test {

using ktune::gpu_test::Device;
using ktune::gpu_test::device;
using ktune::gpu_test::WithDevice;

// One kernel instance: its config and the masking it was compiled with.
struct Variant {
  Config config;
  num::KvDtype kv_dtype = num::KvDtype::bf16;
  bool causal = false;
  int mask_shift = 0;
  std::string name() const { return main_kernel_name(config, kv_dtype, causal, mask_shift); }
};

// Compiled and loaded kernels, keyed by the main kernel's name expression.
class Kernels {
 public:
  // Compiles every variant not compiled yet, one program per (kv_dtype, causal, mask_shift) group,
  // the programs in parallel. Throws CompileError (with the log) when one fails.
  void prepare(const std::vector<Variant>& variants) {
    Device& d = device();
    std::map<std::tuple<int, bool, int>, std::vector<std::string>> groups;
    for (const Variant& v : variants) {
      auto& names = groups[{static_cast<int>(v.kv_dtype), v.causal, v.mask_shift}];
      if (!symbols_.count(v.name()) && std::find(names.begin(), names.end(), v.name()) == names.end())
        names.push_back(v.name());
    }
    const std::string source = jit::render(mla_decode_family().template_file());
    std::vector<std::pair<std::vector<std::string>, std::future<backend::CompileResult>>> jobs;
    for (auto& [group, names] : groups) {
      if (names.empty()) continue;
      names.push_back(combine_kernel_name());
      backend::CompileRequest req{source, "mla_decode.hip", names, d.ctx->info().arch, {}};
      jobs.emplace_back(names, std::async(std::launch::async, [&d, req] { return d.backend->compile(req); }));
    }
    for (auto& [names, job] : jobs) {
      const backend::CompileResult compiled = job.get();
      modules_.push_back(d.ctx->load(compiled.code));  // the context is used from this thread only
      for (size_t i = 0; i + 1 < names.size(); ++i)
        symbols_[names[i]] = {modules_.back().get(), {compiled.lowered_names[i], compiled.lowered_names.back()}};
    }
  }

  Candidate candidate(const Variant& v) const {
    auto it = symbols_.find(v.name());
    if (it == symbols_.end()) throw Error("kernel " + v.name() + " was not prepared");
    return Candidate{to_params(v.config), it->second.first, it->second.second};
  }

 private:
  std::vector<std::unique_ptr<backend::Module>> modules_;
  std::map<std::string, std::pair<backend::Module*, std::vector<std::string>>> symbols_;
};

inline Kernels& kernels() {
  static Kernels k;
  return k;
}

// Why `config` cannot run with `kv_dtype` on this device's arch (shared memory, registers,
// thread layout), ignoring the rules about speed (padding, mma configs a sibling beats).
inline std::optional<std::string> unrunnable(const Config& config, num::KvDtype kv_dtype) {
  return mla::unrunnable(config, kv_dtype, target_limits(device().ctx->info().arch));
}

}  // namespace ktune::mla::gpu_test
