// MLA decode and qk_rope_cache computed through ktune_runtime's C++ API (the shared library, its
// compiled-in packages and their code objects) and checked against the CPU references of
// tuner/kernels; and a KTUNE_DB winner that no package holds (qk_rope_cache's unfused baseline),
// compiled at run time with NVRTC by an engine of its own; and the CUDA API's context ids, which
// the runtime's module cache is keyed by. Buffers come from ktune's backend; the
// runtime launches on the legacy default stream of the current context.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "backend/dl_library.hpp"
#include "dispatch/runtime/engine.hpp"
#include "dispatch/runtime/gpu_api.hpp"
#include "gpu/mla_decode_device.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/qk_rope_cache/inputs.hpp"
#include "ktune/runtime.hpp"
#include "package/rope_db.hpp"
#include "verify/compare.hpp"

namespace ktune::mla {
namespace {

using gpu_test::device;

// The tolerances of the sweep's verification (instance.cpp): bf16 output rounded once from fp32.
constexpr verify::Tolerance kOutput{5e-4, 1e-2, 4e-3};
constexpr verify::Tolerance kLse{1e-4, 1e-5, 1e-5};

}  // namespace

// Waits for the default stream the runtime launched on (the backend's own stream does not).
void synchronize_context() {
  static const auto lib = backend::DlLibrary::open_first({"libcuda.so.1"});
  static const auto sync = lib.require<int (*)()>("cuCtxSynchronize");
  ASSERT_EQ(sync(), 0) << "cuCtxSynchronize failed";
}

namespace {

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
  out.verdict =
      verify::merge(verify::compare("o", o_out, ref.o, kOutput), verify::compare("lse", lse_out, ref.lse, kLse));
  return out;
}

// The runtime keys the modules it loaded by the current context's id: a context created where a
// destroyed one was (the driver may give it the same address) must get another id, or it would be
// handed modules that died with the first.
TEST(RuntimeCudaGpu, AContextMadeAfterAnotherWasDestroyedHasItsOwnId) {
  if (!device().ctx) GTEST_SKIP() << "no GPU: " << device().missing;
  if (!device().ctx->info().arch.starts_with("sm_")) GTEST_SKIP() << "not a CUDA device";
  using Context = void*;  // CUcontext; CUdevice is an int, CUresult an enum (0: success)
  static const auto lib = backend::DlLibrary::open_first({"libcuda.so.1"});
  const auto get_current = lib.require<int (*)(Context*)>("cuCtxGetCurrent");
  const auto set_current = lib.require<int (*)(Context)>("cuCtxSetCurrent");
  const auto get_device = lib.require<int (*)(int*)>("cuCtxGetDevice");
  // cuCtxCreate: CUDA 13's (its parameters may be null), else CUDA 12's.
  using CreateV4 = int (*)(Context*, void*, unsigned, int);
  using CreateV2 = int (*)(Context*, unsigned, int);
  const auto create_v4 = reinterpret_cast<CreateV4>(lib.find("cuCtxCreate_v4"));
  const auto create_v2 = reinterpret_cast<CreateV2>(lib.find("cuCtxCreate_v2"));
  ASSERT_TRUE(create_v4 || create_v2) << "libcuda.so.1 has neither cuCtxCreate_v4 nor cuCtxCreate_v2";
  const auto create = [&](Context* c, unsigned flags, int d) {
    return create_v4 ? create_v4(c, nullptr, flags, d) : create_v2(c, flags, d);
  };
  const auto destroy = lib.require<int (*)(Context)>("cuCtxDestroy_v2");
  Context saved = nullptr;
  int dev = 0;
  ASSERT_EQ(get_current(&saved), 0);
  ASSERT_EQ(get_device(&dev), 0);
  const auto api = runtime::cuda_api();
  Context first = nullptr, second = nullptr;
  ASSERT_EQ(create(&first, 0, dev), 0);  // current from here
  const void* first_id = api->current();
  ASSERT_EQ(destroy(first), 0);
  ASSERT_EQ(create(&second, 0, dev), 0);
  const void* second_id = api->current();
  ASSERT_EQ(destroy(second), 0);
  ASSERT_EQ(set_current(saved), 0);
  RecordProperty("address_reused", first == second ? "yes" : "no");
  EXPECT_NE(first_id, second_id) << (first == second ? "the driver gave the second context the first's address" : "");
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
      {{16, 2, false, num::KvDtype::fp8_e4m3fn, 32}, {77, 16, 3, true}, ktune::Status::ok},    // bucket, fp8
      {{128, 4, true, num::KvDtype::bf16, 32}, {200, 1536, 2, false}, ktune::Status::ok},      // rows=64 kernel
      {{20, 5, true, num::KvDtype::bf16, 32}, {300, 1, 4, true}, ktune::Status::ok_fallback},  // covered
      // Keys only the default sweep tuned (the smoke tables answered unsupported).
      {{16, 8, true, num::KvDtype::bf16, 8}, {1024, 64, 8, true}, ktune::Status::ok},
      {{128, 16, true, num::KvDtype::fp8_e4m3fn, 8}, {300, 64, 2, true}, ktune::Status::ok},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("heads={} block_len={} causal={} kv_dtype={}", c.key.heads, c.key.block_len, c.key.causal,
                             static_cast<int>(c.key.kv_dtype)));
    const auto out = run_through_runtime(c.key, c.shape);
    ASSERT_EQ(out.result.status, c.expected) << out.result.message;
    EXPECT_TRUE(out.verdict.ok) << out.verdict.detail;
  }
}

// The default table serves every key in range: one out of range is the status that launches nothing.
TEST_F(RuntimeGpu, OutOfRangeKeyIsAStatusAndLaunchesNothing) {
  const auto out = run_through_runtime({129, 1, true, num::KvDtype::bf16, 2}, {64, 16, 2, false});
  EXPECT_EQ(out.result.status, ktune::Status::unsupported) << out.result.message;
}

}  // namespace
}  // namespace ktune::mla

namespace ktune::rope {
namespace {

using gpu_test::device;

// The engine the shared library makes at its first call (ktune::qk_rope_cache), or one of the
// test's own (a KTUNE_DB and run-time compiles).
using Launcher = std::function<ktune::Result(ktune_qk_rope_cache_args&)>;

struct RopeOutcome {
  ktune::Result result;
  Verdict verdict;
};

RopeOutcome rope_through_runtime(const Key& key, const Shape& shape, const Launcher& launch,
                                 int64_t table_rows_override = 0) {
  auto& ctx = *device().ctx;
  const HostProblem p = make_problem(key, shape, 11);
  const Reference ref = reference(p);
  auto upload = [&](const auto& host) {
    auto b = ctx.alloc(host.size() * sizeof(host[0]));
    ctx.upload(*b, host.data(), host.size() * sizeof(host[0]));
    return b;
  };
  auto q_nope = upload(p.q_nope), q_pe = upload(p.q_pe), kv_c = upload(p.kv_c), k_pe = upload(p.k_pe);
  auto positions = upload(p.positions), slots = upload(p.slot_mapping), cos = upload(p.cos), sin = upload(p.sin);
  auto kv_cache = upload(p.kv_cache);
  const size_t q_bytes = static_cast<size_t>(p.tokens) * p.heads * kRowDim * num::bytes_of(p.q_dtype);
  auto q_out = ctx.alloc(q_bytes);
  ctx.fill(*q_out, p.q_dtype == num::KvDtype::fp8_e4m3fnuz ? 0x80 : 0xFF);  // NaN: an unwritten element fails
  ctx.synchronize();

  ktune_qk_rope_cache_args a{};
  a.q_nope = q_nope->as<void>();
  a.q_pe = q_pe->as<void>();
  a.kv_c = kv_c->as<void>();
  a.k_pe = k_pe->as<void>();
  a.positions = positions->as<int64_t>();
  a.slot_mapping = slots->as<int64_t>();
  a.cos_table = cos->as<float>();
  a.sin_table = sin->as<float>();
  a.kv_cache = kv_cache->as<void>();
  a.q_out = q_out->as<void>();
  a.k_scale = p.k_scale;
  a.q_scale = p.q_scale;
  a.table_rows = table_rows_override > 0 ? table_rows_override : p.table_rows;
  a.key = {
      p.heads, static_cast<int64_t>(p.kv_dtype), static_cast<int64_t>(p.q_dtype), p.identity ? 1 : 0, p.is_neox ? 1 : 0,
      p.tokens};
  size_t bytes = 0;
  RopeOutcome out;
  out.result = ktune::qk_rope_cache_workspace_size(a, bytes);
  std::unique_ptr<backend::Buffer> workspace;
  if (bytes > 0) {
    workspace = ctx.alloc(bytes);
    a.workspace = workspace->as<void>();
    a.workspace_bytes = bytes;
  }
  out.result = launch(a);
  if (!out.result.launched()) return out;
  mla::synchronize_context();
  std::vector<uint8_t> q(q_bytes), cache(p.kv_cache.size());
  ctx.download(q.data(), *q_out, q.size());
  ctx.download(cache.data(), *kv_cache, cache.size());
  out.verdict = check(p, ref, q, cache);
  return out;
}

ktune::Result through_library(ktune_qk_rope_cache_args& a) { return ktune::qk_rope_cache(nullptr, a); }

class RuntimeRopeGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!device().ctx) GTEST_SKIP() << "no GPU: " << device().missing;
    if (device().ctx->info().arch != "sm_90a")
      GTEST_SKIP() << "the runtime's compiled-in packages are for sm_90a, this device is " << device().ctx->info().arch;
  }
};

TEST_F(RuntimeRopeGpu, ComputesQkRopeCacheLikeTheReference) {
  using num::KvDtype;
  struct Case {
    Key key;
    Shape shape;
    ktune::Status expected;
  };
  const Case cases[] = {
      {{16, KvDtype::fp8_e4m3fn, KvDtype::bf16, RopeMode::full, true, 64}, {64, 16, 4096, 3}, ktune::Status::ok},
      {{16, KvDtype::fp8_e4m3fn, KvDtype::bf16, RopeMode::identity, true, 37}, {37, 16, 1, 5}, ktune::Status::ok},
      {{128, KvDtype::fp8_e4m3fn, KvDtype::fp8_e4m3fn, RopeMode::full, true, 4096},
       {1000, 64, 8192, 7},
       ktune::Status::ok},  // nearest bucket, fp8 q_out
      {{12, KvDtype::fp8_e4m3fn, KvDtype::bf16, RopeMode::full, true, 64},
       {50, 1, 4096, 0},
       ktune::Status::ok_fallback},  // covered by 16 heads
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("heads={} q_dtype={} rope={} tokens={}", c.key.heads, static_cast<int>(c.key.q_dtype),
                             static_cast<int>(c.key.rope), c.shape.tokens));
    const auto out = rope_through_runtime(c.key, c.shape, through_library);
    ASSERT_EQ(out.result.status, c.expected) << out.result.message;
    EXPECT_TRUE(out.verdict.ok) << out.verdict.detail;
  }
}

// Full-rope keys called with a 1-row table: refused, nothing written, where the winner trusts its
// positions; launched where it clamps (into row 0: no longer the full-table reference's output).
// The committed sweep has winners of both kinds; a table whose winners all clamp would leave the
// refusal untested, so the test fails then.
TEST_F(RuntimeRopeGpu, RefusesAOneRowTableForAKernelThatDoesNotClamp) {
  int refused = 0;
  for (int heads : {16, 128})
    for (num::KvDtype q_dtype : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn}) {
      const Key key{heads, num::KvDtype::fp8_e4m3fn, q_dtype, RopeMode::full, true, 64};
      SCOPED_TRACE(fmt::format("heads={} q_dtype={}", heads, static_cast<int>(q_dtype)));
      const auto out = rope_through_runtime(key, {64, 16, 4096, 0}, through_library, /*table_rows_override=*/1);
      if (out.result.status == ktune::Status::invalid_argument) {
        ++refused;
        continue;
      }
      EXPECT_EQ(out.result.status, ktune::Status::ok) << out.result.message;
    }
  EXPECT_GT(refused, 0) << "no 64-token full-rope winner trusts its positions: the refusal went untested";
}

// qk_rope_cache's unfused baseline (4 kernels for an fp8 q_out, none packaged) as the KTUNE_DB
// winner: compiled at run time with NVRTC, launched in order, checked against the reference.
TEST_F(RuntimeRopeGpu, ComputesAWinnerCompiledAtRunTime) {
  using namespace ktune::runtime;
  const auto* table = find_table(compiled_tables(), kQkRopeCache, "sm_90a");
  ASSERT_NE(table, nullptr);
  test::RopeDb db(std::string(table->template_hash));
  db.ok(test::rope_key(16, 1, 1, 0, 1, 64), test::unfused_config(8, 256, false));
  Engine::Setup s;
  s.apis = vendor_apis(s.no_api_reason);
  s.override_db = db.path();
  s.jit = backend_compilers();
  Engine engine(std::move(s));
  const Launcher launch = [&](ktune_qk_rope_cache_args& a) {
    size_t bytes = 0;
    ktune_result r{};
    engine.qk_rope_cache_workspace_size(a, bytes, r);
    std::unique_ptr<backend::Buffer> workspace;
    if (bytes > 0) {
      workspace = device().ctx->alloc(bytes);
      a.workspace = workspace->as<void>();
      a.workspace_bytes = bytes;
    }
    engine.qk_rope_cache(a, r);
    mla::synchronize_context();  // before the workspace is freed
    return ktune::runtime_detail::to_result(r);
  };
  const auto out = rope_through_runtime(
      {16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fn, RopeMode::full, true, 64}, {64, 16, 4096, 3}, launch);
  ASSERT_EQ(out.result.status, ktune::Status::ok) << out.result.message;
  EXPECT_TRUE(out.result.from_override);
  EXPECT_EQ(engine.run_time_compiles(), 1u);
  EXPECT_TRUE(out.verdict.ok) << out.verdict.detail;
}

}  // namespace
}  // namespace ktune::rope
