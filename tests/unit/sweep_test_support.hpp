#pragma once
// Shared by the sweep and JIT tests: a temporary directory, a fake compiler, a fake device and a
// small kernel family on it (the core must work for any family, so these tests never depend on
// mla_decode, and they run without a GPU).
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "jit/compiler.hpp"
#include "kernels/family.hpp"
#include "support/temp_dir.hpp"

namespace ktune::testing {

using TempDir = ::ktune::test_support::TempDir;

// A host-memory "device" whose kernels are described by their code object text:
// "value=V us=U" writes V to the output and takes U microseconds of device time; "skip"
// writes nothing, "fault" is a sticky device error, "error" a launch the device refuses, and
// code starting with "broken" does not load.
struct FakeKernel {
  int64_t value = 0;
  double us = 1;
  bool skip = false, fault = false, error = false;
};

class FakeBuffer : public backend::Buffer {
 public:
  explicit FakeBuffer(size_t n) : bytes_(n) {}
  uint64_t address() const noexcept override { return reinterpret_cast<uint64_t>(bytes_.data()); }
  size_t size() const noexcept override { return bytes_.size(); }

 private:
  mutable std::vector<char> bytes_;
};

class FakeModule : public backend::Module {
 public:
  explicit FakeModule(std::string code) {
    kernel_.skip = code.find("skip") != std::string::npos;
    kernel_.fault = code.find("fault") != std::string::npos;
    kernel_.error = code.find("error") != std::string::npos;
    std::sscanf(code.c_str(), "value=%ld us=%lf", &kernel_.value, &kernel_.us);
  }
  void* function(std::string_view name) override {
    if (name != "lowered toy") throw Error(fmt::format("no symbol '{}'", name));
    return &kernel_;
  }

 private:
  FakeKernel kernel_;
};

class FakeContext : public backend::Context {
 public:
  struct FakeEvent : backend::Event {
    double at_us = 0;
  };
  const backend::DeviceInfo& info() const noexcept override { return info_; }
  int64_t free_memory_bytes() override { return info_.memory_bytes; }
  std::unique_ptr<backend::Buffer> alloc(size_t bytes) override { return std::make_unique<FakeBuffer>(bytes); }
  void upload(backend::Buffer& dst, const void* src, size_t n, size_t off) override {
    std::memcpy(dst.as<char>() + off, src, n);
  }
  void download(void* dst, const backend::Buffer& src, size_t n, size_t off) override {
    std::memcpy(dst, src.as<char>() + off, n);
  }
  void fill(backend::Buffer& dst, uint8_t byte) override { std::memset(dst.as<char>(), byte, dst.size()); }
  void copy(backend::Buffer& dst, const backend::Buffer& src, size_t n) override {
    std::memcpy(dst.as<char>(), src.as<char>(), n);
  }
  std::unique_ptr<backend::Module> load(std::span<const char> code) override {
    std::string text(code.begin(), code.end());
    if (text.starts_with("broken")) throw Error("not a code object");
    ++loads;
    return std::make_unique<FakeModule>(text);
  }
  void set_shared_limit(void*, size_t) override {}
  void launch(void* fn, backend::Dim3, backend::Dim3, size_t, void** args) override {
    auto* k = static_cast<FakeKernel*>(fn);
    if (k->fault) throw DeviceFault("illegal address");
    if (k->error) throw Error("too many resources requested for launch");
    ++launches;
    now_us_ += k->us;
    if (!k->skip) **static_cast<int64_t**>(args[0]) = k->value;
  }
  std::unique_ptr<backend::Event> event() override { return std::make_unique<FakeEvent>(); }
  void record(backend::Event& e) override { static_cast<FakeEvent&>(e).at_us = now_us_; }
  float elapsed_ms(const backend::Event& a, const backend::Event& b) override {
    return static_cast<float>((static_cast<const FakeEvent&>(b).at_us - static_cast<const FakeEvent&>(a).at_us) / 1000);
  }
  void synchronize() override {}
  void begin_capture() override {}
  std::unique_ptr<backend::Graph> end_capture() override { return nullptr; }
  void replay(backend::Graph&) override { throw Error("no graphs here"); }

  int launches = 0;  // kernel launches that ran
  int loads = 0;     // code objects loaded

 private:
  backend::DeviceInfo info_{.name = "Fake GPU",
                            .arch = "sm_90a",
                            .compute_units = 1,
                            .warp_size = 32,
                            .l2_bytes = 1 << 20,
                            .memory_bytes = 1 << 30,
                            .shared_per_block = 48 << 10,
                            .shared_per_block_optin = 48 << 10,
                            .clock_khz = 1000000};
  double now_us_ = 0;
};

// One int64 output that the kernel must set to `expected`.
class ToyInstance : public Instance {
 public:
  ToyInstance(backend::Context& ctx, int64_t expected, bool with_reference)
      : ctx_(ctx), expected_(expected), with_reference_(with_reference), out_(ctx.alloc(8)) {}
  void launch(const Candidate& c, int) override {
    int64_t* out = out_->as<int64_t>();
    void* args[] = {&out};
    ctx_.launch(c.module->function(c.symbols.at(0)), {}, {}, 0, args);
  }
  int rotations() const noexcept override { return 2; }
  void poison() override { ctx_.fill(*out_, 0xff); }
  Verdict verify() override {
    if (!with_reference_) throw Error("no reference");
    int64_t got = 0;
    ctx_.download(&got, *out_, sizeof got);
    Verdict v;
    v.ok = got == expected_;
    v.max_abs_err = static_cast<double>(got > expected_ ? got - expected_ : expected_ - got);
    if (!v.ok) v.detail = fmt::format("got {}, want {}", got, expected_);
    return v;
  }
  Traffic traffic() const noexcept override { return {1e6, 1e3}; }

 private:
  backend::Context& ctx_;
  int64_t expected_;
  bool with_reference_;
  std::unique_ptr<backend::Buffer> out_;
};

class ToyFamily : public Family {
 public:
  std::string_view name() const noexcept override { return "toy"; }
  std::string_view summary() const noexcept override { return "a family for tests"; }
  const std::vector<FieldSpec>& key_fields() const noexcept override { return keys_; }
  const std::vector<FieldSpec>& config_fields() const noexcept override { return configs_; }
  const std::vector<FieldSpec>& shape_fields() const noexcept override { return shape_; }
  std::string_view template_file() const noexcept override { return "toy/toy.hip"; }
  // Independent of the key: candidates of different keys share programs.
  std::vector<std::string> name_expressions(const Params&, const Params& config) const override {
    return {fmt::format("toy<{}, {}>", config.at("rows"), config.at("stages"))};
  }
  std::optional<std::string> infeasible(const Params& key, const Params& config, const TargetLimits&) const override {
    if (config.at("rows") > 4 * key.at("heads")) return "rows > 4 * heads";
    if (config.at("stages") == 4 && key.at("kv_dtype") == 1) return "fp8 needs fewer than 4 stages";
    return std::nullopt;
  }
  LaunchInfo launch_info(const Params&, const Params& config) const override {
    return {static_cast<int>(config.at("rows")) * 4, 0};
  }
  std::vector<std::string> ranking_fields() const override { return ranking; }
  // (A rule of the toy's own, for the sweep's refusal of a shape that does not fit a key.)
  std::optional<std::string> shape_unfit(const Params& key, const Params& shape) const override {
    if (shape.at("ctx") < key.at("heads"))
      return fmt::format("ctx {} is below heads {}", shape.at("ctx"), key.at("heads"));
    return std::nullopt;
  }
  std::vector<Params> verify_shapes(const Params&) const override { return {Params{{"ctx", 7}, {"batch", 2}}}; }
  // The verification instance depends on heads only, so kv_dtype may be listed here.
  std::vector<std::string> fields_verification_ignores() const override { return verification_ignores; }
  std::unique_ptr<Instance> instantiate(backend::Context& ctx, const Params& key, const Params& shape, uint64_t,
                                        bool with_reference) const override {
    ++instances;
    return std::make_unique<ToyInstance>(ctx, key.at("heads") * 2 + shape.at("ctx"), with_reference);
  }
  // Records the cache it is offered, then makes its own inputs.
  std::unique_ptr<Instance> instantiate_for_timing(backend::Context& ctx, const Params& key, const Params& shape,
                                                   uint64_t seed, InputCache& inputs) const override {
    if (timing_inputs_fail) throw Error("out of device memory for the timing inputs");
    timing_inputs.push_back(&inputs);
    return instantiate(ctx, key, shape, seed, false);
  }
  mutable int instances = 0;                             // how often instantiate ran
  mutable std::vector<const InputCache*> timing_inputs;  // what each timing instance was offered
  bool timing_inputs_fail = false;                       // as a device without the memory for the timing shape
  std::vector<std::string> verification_ignores;         // none unless a test says
  std::vector<std::string> ranking = {"kv_dtype", "heads"};

 private:
  std::vector<FieldSpec> keys_ = {{"heads", "query heads", 1, 128},
                                  {"kv_dtype", "KV cache element type", 0, 1, {"bf16", "fp8"}}};
  std::vector<FieldSpec> configs_ = {{"rows", "rows per CTA", 16, 128}, {"stages", "pipeline stages", 1, 4}};
  std::vector<FieldSpec> shape_ = {{"ctx", "context length", 1, 1 << 20}, {"batch", "requests", 1, 4096}};
};

// Compiles nothing: "code" is the source and the names; rows=99 is a compile error, rows=98
// makes the compiler throw something else (a crash surfacing as an exception).
class FakeCompiler : public jit::Compiler {
 public:
  std::chrono::milliseconds delay{0};
  mutable std::atomic<int> calls{0}, active{0}, max_active{0};
  mutable std::atomic<int> identity_calls{0};
  bool drop_a_name = false;
  std::string build = "build 1";  // what identity() adds to the version, as a library hash does
  bool unavailable = false;       // as a compile worker that does not start

  std::string version() const override { return "fake 1.0"; }
  std::string identity() const override {
    ++identity_calls;
    return "fake 1.0 " + build;
  }
  backend::CompileResult compile(const backend::CompileRequest& req) const override {
    ++calls;
    if (unavailable) throw jit::CompilerUnavailable("fake: no compile worker starts");
    int now = ++active;
    for (int m = max_active; now > m && !max_active.compare_exchange_weak(m, now);) {
    }
    std::this_thread::sleep_for(delay);
    --active;
    backend::CompileResult r;
    for (const auto& n : req.name_expressions) {
      if (n.starts_with("toy<99")) throw CompileError("fake: could not compile toy.hip", "toy.hip:3: error: bad tile");
      if (n.starts_with("toy<98")) throw std::runtime_error("fake: internal compiler error");
      r.lowered_names.push_back("lowered " + n);
    }
    if (drop_a_name) r.lowered_names.pop_back();
    std::string code = req.source + "|" + req.arch;
    r.code.assign(code.begin(), code.end());
    return r;
  }
};

}  // namespace ktune::testing
