// MLA decode computed through ktune_runtime's C++ API (the shared library, its compiled-in package
// and the package's code objects) and checked against the CPU reference. Buffers come from
// ktune's backend; the runtime launches on the legacy default stream of the current context.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>

#include "backend/dl_library.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "ktune/runtime.hpp"
#include "gpu/mla_decode_device.hpp"
#include "verify/compare.hpp"

namespace ktune::mla {
namespace {

using gpu_test::device;

// The tolerances of the sweep's verification (instance.cpp): bf16 output rounded once from fp32.
constexpr verify::Tolerance kOutput{5e-4, 1e-2, 4e-3};
constexpr verify::Tolerance kLse{1e-4, 1e-5, 1e-5};

// Waits for the default stream the runtime launched on (the backend's own stream does not).
void synchronize_context() {
  static const auto lib = backend::DlLibrary::open_first({"libcuda.so.1"});
  static const auto sync = lib.require<int (*)()>("cuCtxSynchronize");
  ASSERT_EQ(sync(), 0) << "cuCtxSynchronize failed";
}

struct Outcome {
  ktune::Result result;
  Verdict verdict;
};

Outcome run_through_runtime(const Key& key, const Shape& shape) {
  auto& ctx = *device().ctx;
  const HostProblem p = make_problem(key, shape, 7);
  const Reference ref = reference(p);
  const size_t rows = static_cast<size_t>(p.batch) * p.block_len * p.heads;
  auto q = ctx.alloc(p.q.size() * 2), kv = ctx.alloc(p.kv_cache.size());
  auto table = ctx.alloc(p.block_table.size() * 4), lens = ctx.alloc(p.kv_lens.size() * 4);
  auto o = ctx.alloc(rows * kValueDim * 2), lse = ctx.alloc(rows * 4);
  ctx.upload(*q, p.q.data(), p.q.size() * 2);
  ctx.upload(*kv, p.kv_cache.data(), p.kv_cache.size());
  ctx.upload(*table, p.block_table.data(), p.block_table.size() * 4);
  ctx.upload(*lens, p.kv_lens.data(), p.kv_lens.size() * 4);
  ctx.fill(*o, 0xFF);  // NaN: an unwritten element fails
  ctx.fill(*lse, 0xFF);
  ctx.synchronize();

  ktune_mla_decode_args a{};
  a.q = q->as<void>();
  a.kv_cache = kv->as<void>();
  a.block_table = table->as<int32_t>();
  a.kv_lens = lens->as<int32_t>();
  a.o = o->as<void>();
  a.lse = lse->as<float>();
  a.softmax_scale = p.softmax_scale;
  a.kv_scale = p.kv_scale;
  a.max_pages = p.max_pages;
  a.page_size = p.page_size;
  a.max_kv_len = *std::max_element(p.kv_lens.begin(), p.kv_lens.end());
  a.key = {p.heads, p.block_len, p.causal ? 1 : 0, static_cast<int64_t>(p.kv_dtype), p.batch};
  size_t bytes = 0;
  Outcome out;
  out.result = ktune::mla_decode_workspace_size(a, bytes);
  if (!out.result.launched()) return out;
  std::unique_ptr<backend::Buffer> workspace;
  if (bytes > 0) {
    workspace = ctx.alloc(bytes);
    a.workspace = workspace->as<void>();
    a.workspace_bytes = bytes;
  }
  out.result = ktune::mla_decode(nullptr, a);
  if (!out.result.launched()) return out;
  synchronize_context();
  std::vector<uint16_t> o_bits(rows * kValueDim);
  std::vector<float> lse_out(rows);
  ctx.download(o_bits.data(), *o, o_bits.size() * 2);
  ctx.download(lse_out.data(), *lse, lse_out.size() * 4);
  std::vector<float> o_out(o_bits.size());
  std::transform(o_bits.begin(), o_bits.end(), o_out.begin(), num::bf16_to_f32);
  out.verdict = verify::merge(verify::compare("o", o_out, ref.o, kOutput), verify::compare("lse", lse_out, ref.lse, kLse));
  return out;
}

class RuntimeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device().ctx) GTEST_SKIP() << "no GPU: " << device().missing;
    if (device().ctx->info().arch != "sm_90a")
      GTEST_SKIP() << "the runtime's compiled-in package is for sm_90a, this device is " << device().ctx->info().arch;
  }
};

TEST_F(RuntimeGpu, ComputesMlaDecodeLikeTheReference) {
  struct Case {
    Key key;
    Shape shape;
    ktune::Status expected;
  };
  const Case cases[] = {
      {{16, 1, true, num::KvDtype::bf16, 32}, {1013, 64, 32, true}, ktune::Status::ok},        // splits
      {{16, 2, false, num::KvDtype::fp8_e4m3fn, 32}, {77, 16, 3, true}, ktune::Status::ok},   // bucket, fp8
      {{128, 4, true, num::KvDtype::bf16, 32}, {200, 1536, 2, false}, ktune::Status::ok},     // rows=64 kernel
      {{12, 3, true, num::KvDtype::bf16, 32}, {300, 1, 4, true}, ktune::Status::ok_fallback}, // covered
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("heads={} block_len={} causal={} kv_dtype={}", c.key.heads, c.key.block_len,
                             c.key.causal, static_cast<int>(c.key.kv_dtype)));
    const auto out = run_through_runtime(c.key, c.shape);
    ASSERT_EQ(out.result.status, c.expected) << out.result.message;
    EXPECT_TRUE(out.verdict.ok) << out.verdict.detail;
  }
}

TEST_F(RuntimeGpu, UntunedKeyIsAStatusAndLaunchesNothing) {
  const auto out = run_through_runtime({16, 1, true, num::KvDtype::fp8_e4m3fnuz, 2}, {64, 16, 2, false});
  EXPECT_EQ(out.result.status, ktune::Status::unsupported) << out.result.message;
}

}  // namespace
}  // namespace ktune::mla

