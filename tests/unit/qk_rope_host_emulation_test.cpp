// The qk_rope_cache kernel template, run on the CPU: its rendered source is compiled by the host
// C++ compiler (with the few device built-ins it uses defined for the host) into a shared library
// whose entry points run a kernel's grid one thread at a time — valid because these kernels never
// synchronise threads or share memory between them. A host Context (backend::Context on host
// memory) loads that library, so the family's own DeviceInstance uploads, launches (argument
// order, grids, the unfused sequence) and verifies exactly as on a GPU. This checks the device
// code against the reference where no GPU is (hipRTC's code path: the bit-level fp8 encoders;
// NVIDIA's one-instruction fp8 conversion runs on the GPU only), across both layouts, every
// vector width, both clamping modes, the unfused baseline, every dtype pair, both rope modes and
// pair layouts, padded tokens and the canary cache; and shows the mutation (cos = 0.5 in the
// identity table) rejected by Instance::verify.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "backend/backend.hpp"
#include "common/error.hpp"
#include "db_test_support.hpp"
#include "jit/templates.hpp"
#include "kernels/qk_rope_cache/family.hpp"
#include "kernels/qk_rope_cache/inputs.hpp"
#include "kernels/qk_rope_cache/instance.hpp"
#include "kernels/qk_rope_cache/problem.hpp"

namespace ktune::rope {
namespace {

// What the rendered template needs from a device compiler, for the host. __HIPCC_RTC__ selects the
// prelude's HIP branch (wave 64, the bit-level fp8 encoders); threads run one after the other.
constexpr const char* kHostShims = R"src(#include <cstring>
#include <math.h>
struct KtuneDim { unsigned x = 0, y = 0, z = 0; };
static KtuneDim threadIdx, blockIdx, blockDim, gridDim;
#define __HIPCC_RTC__ 1
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(n)
inline float __uint_as_float(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float __shfl_xor(float v, int) { return v; }
inline float __shfl(float v, int) { return v; }
)src";

// Runs `kernel` over a grid, reading its arguments from cuLaunchKernel-style pointers.
constexpr const char* kLauncher = R"src(
#include <cstddef>
#include <utility>
template <class P>
P ktune_arg(void* at) { P v; std::memcpy(&v, at, sizeof(P)); return v; }
template <class... P, std::size_t... I>
void ktune_call(void (*kernel)(P...), void** args, std::index_sequence<I...>) { kernel(ktune_arg<P>(args[I])...); }
template <class... P>
void ktune_launch(void (*kernel)(P...), const unsigned* grid, unsigned threads, void** args) {
  gridDim = {grid[0], grid[1], grid[2]};
  blockDim = {threads, 1, 1};
  for (unsigned z = 0; z < grid[2]; ++z)
    for (unsigned y = 0; y < grid[1]; ++y)
      for (unsigned x = 0; x < grid[0]; ++x)
        for (unsigned t = 0; t < threads; ++t) {
          blockIdx = {x, y, z};
          threadIdx = {t, 0, 0};
          ktune_call(kernel, args, std::index_sequence_for<P...>{});
        }
}
)src";

using EntryPoint = void (*)(const unsigned* grid, unsigned threads, void** args);

class HostBuffer final : public backend::Buffer {
 public:
  explicit HostBuffer(size_t bytes) : bytes_(bytes), data_(new uint8_t[std::max<size_t>(bytes, 1)]) {}
  uint64_t address() const noexcept override { return reinterpret_cast<uint64_t>(data_.get()); }
  size_t size() const noexcept override { return bytes_; }
  uint8_t* data() const noexcept { return data_.get(); }

 private:
  size_t bytes_;
  std::unique_ptr<uint8_t[]> data_;
};

uint8_t* bytes_of(const backend::Buffer& b) { return static_cast<const HostBuffer&>(b).data(); }

class HostLibrary final : public backend::Module {
 public:
  explicit HostLibrary(const std::string& path) : handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (!handle_) throw Error(fmt::format("dlopen {}: {}", path, ::dlerror()));
  }
  ~HostLibrary() override { ::dlclose(handle_); }
  void* function(std::string_view name) override {
    void* f = ::dlsym(handle_, std::string(name).c_str());
    if (!f) throw Error(fmt::format("the host library has no entry point {}", name));
    return f;
  }

 private:
  void* handle_;
};

// A "device" on host memory: `load` takes the path of a library built from the template, `launch`
// calls its entry points. No timing, no graphs.
class HostContext final : public backend::Context {
 public:
  const backend::DeviceInfo& info() const noexcept override { return info_; }
  int64_t free_memory_bytes() override { return int64_t{1} << 32; }
  std::unique_ptr<backend::Buffer> alloc(size_t bytes) override { return std::make_unique<HostBuffer>(bytes); }
  void upload(backend::Buffer& dst, const void* src, size_t bytes, size_t offset) override {
    std::memcpy(bytes_of(dst) + offset, src, bytes);
  }
  void download(void* dst, const backend::Buffer& src, size_t bytes, size_t offset) override {
    std::memcpy(dst, bytes_of(src) + offset, bytes);
  }
  void fill(backend::Buffer& dst, uint8_t byte) override { std::memset(bytes_of(dst), byte, dst.size()); }
  void copy(backend::Buffer& dst, const backend::Buffer& src, size_t bytes) override {
    std::memcpy(bytes_of(dst), bytes_of(src), bytes);
  }
  std::unique_ptr<backend::Module> load(std::span<const char> code) override {
    return std::make_unique<HostLibrary>(std::string(code.begin(), code.end()));
  }
  void set_shared_limit(void*, size_t) override {}
  void launch(void* fn, backend::Dim3 grid, backend::Dim3 block, size_t shared_bytes, void** args) override {
    if (block.y != 1 || block.z != 1 || shared_bytes != 0)
      throw Error("host emulation: 1-D blocks without shared memory");
    const unsigned g[3] = {grid.x, grid.y, grid.z};
    reinterpret_cast<EntryPoint>(fn)(g, block.x, args);
  }
  std::unique_ptr<backend::Event> event() override { throw Error("host emulation does not time"); }
  void record(backend::Event&) override { throw Error("host emulation does not time"); }
  float elapsed_ms(const backend::Event&, const backend::Event&) override {
    throw Error("host emulation does not time");
  }
  void synchronize() override {}
  void begin_capture() override {}
  std::unique_ptr<backend::Graph> end_capture() override { return nullptr; }
  void replay(backend::Graph&) override { throw Error("host emulation has no graphs"); }

 private:
  backend::DeviceInfo info_{.name = "host emulation",
                            .arch = "gfx90a",
                            .compute_units = 1,
                            .warp_size = 64,
                            .l2_bytes = 1 << 20,
                            .memory_bytes = int64_t{1} << 32,
                            .shared_per_block = 65536,
                            .shared_per_block_optin = 65536,
                            .clock_khz = 1000};
};

// Both layouts, every vector width, tokens per CTA 1 / 2 / 4, both clamping modes, the unfused
// sequence (two widths, both clamping modes).
const std::vector<Config>& test_configs() {
  static const std::vector<Config> configs = {
      {Layout::token, 8, 1, 128, true, true},     {Layout::token, 2, 2, 256, false, true},
      {Layout::token_head, 4, 4, 64, true, true}, {Layout::token_head, 8, 2, 128, false, true},
      {Layout::token, 8, 1, 128, true, false},    {Layout::token, 4, 1, 64, false, false},
  };
  return configs;
}

constexpr num::KvDtype kDtypes[] = {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz};

// The library of every kernel the test configs need for every dtype pair, built once.
class Library {
 public:
  Library() {
    std::set<std::string> names;
    for (const Config& c : test_configs())
      for (num::KvDtype kv : kDtypes)
        for (num::KvDtype q : kDtypes)
          for (const std::string& n : kernel_names(c, kv, q)) names.insert(n);
    std::string source = std::string(kHostShims) + jit::render(qk_rope_cache_family().template_file()) + kLauncher;
    for (const std::string& n : names) {
      entry_[n] = fmt::format("ktune_entry_{}", entry_.size());
      source += fmt::format(
          "extern \"C\" void {}(const unsigned* g, unsigned t, void** a) {{ ktune_launch(&{}, g, t, a); }}\n",
          entry_[n], n);
    }
    db::test::write_file(dir_.file("kernels.cpp"), source);
    const std::string command = fmt::format("'{}' -std=c++17 -O1 -shared -fPIC -w '{}' -o '{}' >'{}' 2>&1", KTUNE_CXX,
                                            dir_.file("kernels.cpp"), dir_.file("kernels.so"), dir_.file("build.log"));
    const int status = std::system(command.c_str());
    if (status != 0) error_ = "the host build of the template failed:\n" + db::test::read_file(dir_.file("build.log"));
  }
  const std::string& error() const noexcept { return error_; }
  std::string path() const { return dir_.file("kernels.so"); }
  std::vector<std::string> entry_points(const std::vector<std::string>& names) const {
    std::vector<std::string> out;
    for (const std::string& n : names) out.push_back(entry_.at(n));
    return out;
  }

 private:
  db::test::TempDir dir_;
  std::map<std::string, std::string> entry_;  // name expression -> entry point
  std::string error_;
};

class QkRopeHostEmulation : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    library_ = new Library();
    if (library_->error().empty()) {
      const std::string path = library_->path();
      module_ = context().load(std::span<const char>(path.data(), path.size())).release();
    }
  }
  static void TearDownTestSuite() {
    delete module_;
    delete library_;
  }
  void SetUp() override { ASSERT_EQ(library_->error(), ""); }

  static HostContext& context() {
    static HostContext ctx;
    return ctx;
  }
  static Candidate candidate(const Config& c, num::KvDtype kv, num::KvDtype q) {
    return Candidate{to_params(c), module_, library_->entry_points(kernel_names(c, kv, q))};
  }
  static Verdict run(DeviceInstance& instance, const Config& c) {
    instance.poison();
    instance.launch(candidate(c, instance.problem().kv_dtype, instance.problem().q_dtype), 0);
    return instance.verify();
  }

  static Library* library_;
  static backend::Module* module_;
};
Library* QkRopeHostEmulation::library_ = nullptr;
backend::Module* QkRopeHostEmulation::module_ = nullptr;

TEST_F(QkRopeHostEmulation, EveryVariantMatchesTheReferenceAndLeavesOtherSlotsAlone) {
  int i = 0;
  for (int heads : {1, 12})
    for (num::KvDtype kv : kDtypes)
      for (num::KvDtype q : kDtypes)
        for (RopeMode rope : {RopeMode::full, RopeMode::identity})
          for (bool neox : {false, true}) {
            const Key key{heads, kv, q, rope, neox, 64};
            static constexpr int kPages[] = {1, 16, 64};
            const Shape shape{i % 2 ? 37 : 22, kPages[i % 3], 4096, i % 2 ? 3 : 5};
            DeviceInstance instance(context(), make_problem(key, shape, 300 + i++), true, 1);
            for (const Config& c : test_configs()) {
              if (qk_rope_cache_family().infeasible(to_params(key), to_params(c), target_limits("gfx90a"))) continue;
              const Verdict v = run(instance, c);
              ASSERT_TRUE(v.ok) << to_params(key).pretty(key_fields()) << " | " << to_params(shape).canonical() << " | "
                                << to_params(c).pretty(config_fields()) << ": " << v.detail;
            }
          }
}

TEST_F(QkRopeHostEmulation, IdentityTableWithCosOneHalfIsRejectedByVerify) {
  const Key key{16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz, RopeMode::identity, true, 64};
  HostProblem problem = make_problem(key, Shape{37, 16, 1, 3}, 8);
  ASSERT_EQ(problem.table_rows, 1);
  ASSERT_EQ(*std::max_element(problem.positions.begin(), problem.positions.end()), kIdentityMaxPosition);
  for (const Config& c : {test_configs()[0], test_configs()[4]}) {  // fused and unfused
    DeviceInstance control(context(), problem, true, 1);
    EXPECT_TRUE(run(control, c).ok) << "control: the identity table";
  }
  std::fill(problem.cos.begin(), problem.cos.end(), 0.5f);
  for (const Config& c : {test_configs()[0], test_configs()[4]}) {
    DeviceInstance mutated(context(), problem, true, 1);
    const Verdict v = run(mutated, c);
    EXPECT_FALSE(v.ok) << to_params(c).canonical();
    EXPECT_THAT(v.detail, testing::HasSubstr("first at q_out t=0 h=0 d=512"));
  }
}

TEST_F(QkRopeHostEmulation, TheFamilysOwnInstancesAndVerifyShapes) {
  const Family& family = qk_rope_cache_family();
  const Key key{8, num::KvDtype::fp8_e4m3fnuz, num::KvDtype::fp8_e4m3fn, RopeMode::full, false, 16};
  for (const Params& shape : family.verify_shapes(to_params(key))) {
    auto instance = family.instantiate(context(), to_params(key), shape, 5, true);
    ASSERT_GE(instance->rotations(), 2) << "a 1 MiB 'L2' makes the family rotate its inputs";
    for (const Config& c : test_configs()) {
      instance->poison();
      instance->launch(candidate(c, key.kv_dtype, key.q_dtype), instance->rotations() - 1);
      const Verdict v = instance->verify();
      EXPECT_TRUE(v.ok) << shape.canonical() << " " << to_params(c).canonical() << ": " << v.detail;
    }
  }
}

}  // namespace
}  // namespace ktune::rope
