// The backend on a real device: memory round trips, a compiled kernel's output, events, graph
// capture, fault reporting and the copy-bandwidth probe. Skips where no GPU is available.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "bench/roofline.hpp"
#include "bench/timing.hpp"
#include "common/error.hpp"

namespace ktune::backend {
namespace {

// Plain kernel code that both HIP and CUDA accept without includes.
const char* const kKernels = R"(
namespace ktune_test {
template <int Factor>
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= Factor;
}
// Work proportional to `iters` that the compiler cannot fold: each step depends on the last.
template <int Unused>
__global__ void spin(float* out, int iters) {
  float a = threadIdx.x * 1e-3f;
  for (int i = 0; i < iters; ++i) a = a * 1.0001f + 1e-7f;
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
// Writes through whatever pointer it gets: given an unmapped address it faults.
template <int Unused>
__global__ void store(int* p) { *(volatile int*)p = 1; }
}  // namespace ktune_test
)";

class BackendDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reasons;
    for (Backend* b : all()) {
      if (b->available()) {
        backend_ = b;
        break;
      }
      reasons += std::string(reasons.empty() ? "" : "; ") + std::string(b->name()) + ": " + b->unavailable_reason();
    }
    if (!backend_) GTEST_SKIP() << "no GPU: " << reasons;
    ctx_ = backend_->open(0);
  }

  // The function of one template instance in kKernels, compiled for this device.
  void* kernel(const std::string& name_expression) {
    CompileRequest req{kKernels, "backend_device_test.cu", {name_expression}, ctx_->info().arch, {}};
    const CompileResult compiled = backend_->compile(req);
    modules_.push_back(ctx_->load(compiled.code));
    return modules_.back()->function(compiled.lowered_names.at(0));
  }

  // Enqueues scale<Factor> over the first n floats of x.
  void launch_scale(void* fn, float* x, int n) {
    void* args[] = {&x, &n};
    ctx_->launch(fn, Dim3{static_cast<unsigned>((n + 127) / 128)}, Dim3{128}, 0, args);
  }

  std::vector<float> download_floats(const Buffer& b, size_t count) {
    std::vector<float> out(count);
    ctx_->download(out.data(), b, count * sizeof(float));
    return out;
  }

  Backend* backend_ = nullptr;
  std::unique_ptr<Context> ctx_;
  std::vector<std::unique_ptr<Module>> modules_;  // declared after ctx_: unloaded before it closes
};

TEST_F(BackendDevice, DescribesTheDevice) {
  const DeviceInfo& d = ctx_->info();
  EXPECT_FALSE(d.name.empty());
  EXPECT_TRUE(backend_->handles_arch(d.arch)) << d.arch;
  EXPECT_GT(d.compute_units, 0);
  EXPECT_THAT(d.warp_size, testing::AnyOf(32, 64));
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GT(d.memory_bytes, d.l2_bytes);
  EXPECT_GE(d.last_level_cache_bytes(), d.l2_bytes);
  EXPECT_GE(d.shared_per_block_optin, d.shared_per_block);
  EXPECT_GT(ctx_->free_memory_bytes(), 0);
  EXPECT_LE(ctx_->free_memory_bytes(), d.memory_bytes);
}

TEST_F(BackendDevice, MemoryRoundTrips) {
  std::vector<uint8_t> pattern(1 << 20);
  std::iota(pattern.begin(), pattern.end(), uint8_t{7});
  auto a = ctx_->alloc(pattern.size());
  auto b = ctx_->alloc(pattern.size());
  ctx_->upload(*a, pattern.data(), pattern.size());
  ctx_->copy(*b, *a, pattern.size());
  std::vector<uint8_t> back(pattern.size());
  ctx_->download(back.data(), *b, back.size());
  EXPECT_EQ(back, pattern);

  ctx_->fill(*b, 0xab);
  const uint8_t patch[3] = {1, 2, 3};
  ctx_->upload(*b, patch, sizeof patch, 1000);
  ctx_->download(back.data(), *b, back.size());
  EXPECT_EQ(back[999], 0xab);
  EXPECT_EQ(back[1000], 1);
  EXPECT_EQ(back[1002], 3);
  EXPECT_EQ(back[1003], 0xab);

  EXPECT_THROW(ctx_->upload(*b, pattern.data(), pattern.size(), 1), Error) << "one byte past the end";
  EXPECT_EQ(ctx_->alloc(0)->size(), 0u);
}

TEST_F(BackendDevice, LaunchComputesTheKernelsOutput) {
  void* triple = kernel("ktune_test::scale<3>");
  const int n = 1000;  // not a multiple of the block: the bound check matters
  std::vector<float> x(n + 24);
  std::iota(x.begin(), x.end(), 1.0f);
  auto buf = ctx_->alloc(x.size() * sizeof(float));
  ctx_->upload(*buf, x.data(), x.size() * sizeof(float));
  launch_scale(triple, buf->as<float>(), n);
  const std::vector<float> out = download_floats(*buf, x.size());
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 3 * x[i]) << "element " << i;
  for (size_t i = n; i < x.size(); ++i) ASSERT_EQ(out[i], x[i]) << "element " << i << " is past n";
  EXPECT_THROW(modules_.back()->function("no_such_kernel"), Error);
}

TEST_F(BackendDevice, EventsTimeAKernel) {
  void* spin = kernel("ktune_test::spin<0>");
  auto out = ctx_->alloc(64 * 128 * sizeof(float));
  float* out_ptr = out->as<float>();
  auto time_ms = [&](int iters) {
    void* args[] = {&out_ptr, &iters};
    auto start = ctx_->event(), stop = ctx_->event();
    ctx_->record(*start);
    ctx_->launch(spin, Dim3{64}, Dim3{128}, 0, args);
    ctx_->record(*stop);
    return ctx_->elapsed_ms(*start, *stop);
  };
  time_ms(1000);  // loads the code
  const float short_ms = time_ms(100000), long_ms = time_ms(1000000);
  EXPECT_GT(short_ms, 0);
  EXPECT_GT(long_ms, 3 * short_ms) << "10x the work";
}

TEST_F(BackendDevice, CapturedGraphReplaysTheLaunches) {
  void* triple = kernel("ktune_test::scale<3>");
  const int n = 256;
  std::vector<float> x(n, 1.0f);
  auto buf = ctx_->alloc(n * sizeof(float));
  ctx_->upload(*buf, x.data(), n * sizeof(float));
  ctx_->begin_capture();
  launch_scale(triple, buf->as<float>(), n);
  launch_scale(triple, buf->as<float>(), n);
  auto graph = ctx_->end_capture();
  ASSERT_NE(graph, nullptr) << backend_->name() << " supports stream capture";
  EXPECT_EQ(download_floats(*buf, n)[0], 1.0f) << "captured launches do not run";
  ctx_->replay(*graph);
  ctx_->replay(*graph);
  EXPECT_EQ(download_floats(*buf, n)[n - 1], 81.0f) << "two replays of two triplings";
}

TEST_F(BackendDevice, MeasureTimesShortAndLongLaunches) {
  void* spin = kernel("ktune_test::spin<0>");
  auto out = ctx_->alloc(64 * 128 * sizeof(float));
  float* out_ptr = out->as<float>();
  auto stats_for = [&](int iters) {
    return bench::measure(
        *ctx_,
        [&](int) {
          void* args[] = {&out_ptr, &iters};
          ctx_->launch(spin, Dim3{64}, Dim3{128}, 0, args);
        },
        4);
  };
  const bench::Stats quick = stats_for(10);  // a few microseconds: batched, from graphs
  const bench::Stats slow = stats_for(1000000);
  for (const bench::Stats& s : {quick, slow}) {
    EXPECT_GE(s.n, 1);
    EXPECT_GT(s.median_us, 0);
    EXPECT_LE(s.p10_us, s.median_us);
    EXPECT_LE(s.median_us, s.p90_us);
  }
  EXPECT_GT(slow.median_us, 10 * quick.median_us);
}

TEST_F(BackendDevice, CopyBandwidthIsMeasured) {
  const double gbps = bench::measure_copy_gbps(*ctx_);
  EXPECT_GT(gbps, 10) << "slower than PCIe: the measurement is broken";
  EXPECT_LT(gbps, 100000) << "faster than any HBM: the L2 served the copy";
}

TEST_F(BackendDevice, SharedMemoryBeyondTheDeviceLimitIsRefused) {
  void* triple = kernel("ktune_test::scale<3>");
  EXPECT_NO_THROW(ctx_->set_shared_limit(triple, static_cast<size_t>(ctx_->info().shared_per_block_optin)));
  EXPECT_THROW(ctx_->set_shared_limit(triple, static_cast<size_t>(ctx_->info().shared_per_block_optin) + 1), Error);
}

// The child's verdicts, as exit codes.
constexpr int kFaultRaised = 42, kOtherError = 43, kNoFault = 44;

TEST_F(BackendDevice, FaultingKernelRaisesDeviceFault) {
  // A fault poisons the context for the rest of the process, so it happens in a child: the
  // "threadsafe" style re-executes this test binary there, with a fresh driver state.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto provoke = [&] {
    try {
      void* store = kernel("ktune_test::store<0>");
      int* unmapped = reinterpret_cast<int*>(uintptr_t{16});
      void* args[] = {&unmapped};
      ctx_->launch(store, Dim3{1}, Dim3{1}, 0, args);
      ctx_->synchronize();
    } catch (const DeviceFault& e) {
      std::fprintf(stderr, "DeviceFault: %s\n", e.what());
      // Sticky: the context stays unusable.
      try {
        ctx_->synchronize();
      } catch (const DeviceFault&) {
        std::_Exit(kFaultRaised);
      }
      std::_Exit(kNoFault);
    } catch (const Error& e) {
      std::fprintf(stderr, "Error: %s\n", e.what());
      std::_Exit(kOtherError);
    }
    std::_Exit(kNoFault);
  };
  if (std::string(backend_->name()) == "hip") {
    // ROCm's HSA runtime usually aborts the process on a GPU memory fault before HIP can
    // return an error; either way the worker process is lost, which is what the sweep handles.
    EXPECT_EXIT(
        provoke(),
        [](int status) {
          return testing::ExitedWithCode(kFaultRaised)(status) || testing::KilledBySignal(SIGABRT)(status);
        },
        "");
  } else {
    EXPECT_EXIT(provoke(), testing::ExitedWithCode(kFaultRaised), "DeviceFault");
  }
}

}  // namespace
}  // namespace ktune::backend
