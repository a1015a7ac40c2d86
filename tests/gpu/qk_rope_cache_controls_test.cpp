// Proofs that the qk_rope_cache verification can fail, next to controls that pass: an identity
// table with cos = 0.5 is rejected by Instance::verify, outputs that were never written are
// caught, a bf16 table is refused; plus the paths the correctness grid does not take (rotated
// input copies, the family's own instances, a timing-size launch of the fused kernel and the
// unfused sequence).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "kernels/qk_rope_cache/inputs.hpp"
#include "qk_rope_cache_device.hpp"

namespace ktune::rope::gpu_test {
namespace {

constexpr Config kFused{Layout::token, 8, 1, 128, true, true};
constexpr Config kUnfused{Layout::token, 8, 1, 256, true, false};
constexpr Shape kShape{37, 16, 4096, 3};

class QkRopeCacheControls : public WithDevice<testing::Test> {};

TEST_F(QkRopeCacheControls, IdentityTableWithCosOneHalfIsRejected) {
  for (const Config& c : {kFused, kUnfused})
    for (num::KvDtype kv : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn})
      for (num::KvDtype q : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fnuz}) {
        const Key key{16, kv, q, RopeMode::identity, true, 64};
        HostProblem problem = make_problem(key, kShape, 11);
        {
          DeviceInstance control(*device().ctx, problem, true, 1);
          const Verdict v = run_once(control, {c, kv, q});
          EXPECT_TRUE(v.ok) << "control (cos 1, sin 0): " << v.detail;
        }
        std::fill(problem.cos.begin(), problem.cos.end(), 0.5f);
        DeviceInstance mutated(*device().ctx, std::move(problem), true, 1);
        const Verdict v = run_once(mutated, {c, kv, q});
        EXPECT_FALSE(v.ok) << "an identity table with cos = 0.5 passed, " << to_params(c).canonical();
        EXPECT_THAT(v.detail, testing::HasSubstr("d=512"));
      }
}

TEST_F(QkRopeCacheControls, UnwrittenOutputsAreCaught) {
  for (num::KvDtype q : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz}) {
    const Key key{8, num::KvDtype::fp8_e4m3fn, q, RopeMode::full, false, 64};
    DeviceInstance instance(*device().ctx, make_problem(key, kShape, 3), true, 1);
    EXPECT_TRUE(run_once(instance, {kFused, key.kv_dtype, q}).ok) << "control";
    instance.poison();  // and no launch
    const Verdict v = instance.verify();
    EXPECT_FALSE(v.ok);
    EXPECT_THAT(v.detail, testing::HasSubstr("NaN/Inf")) << "q_out keeps its poison";
  }
}

TEST_F(QkRopeCacheControls, RefusesABf16Table) {
  const Key key{8, num::KvDtype::bf16, num::KvDtype::bf16, RopeMode::full, true, 64};
  HostProblem problem = make_problem(key, kShape, 3);
  problem.table_dtype = TableDtype::bf16;
  EXPECT_THAT([&] { DeviceInstance(*device().ctx, problem, false, 1); },
              testing::ThrowsMessage<Error>(testing::HasSubstr("must be fp32")));
}

TEST_F(QkRopeCacheControls, RotatedCopiesAndTheFamilysOwnInstances) {
  const Key key{12, num::KvDtype::fp8_e4m3fnuz, num::KvDtype::fp8_e4m3fn, RopeMode::identity, false, 64};
  DeviceInstance rotated(*device().ctx, make_problem(key, kShape, 5), true, 3);
  kernels().prepare({{kFused, key.kv_dtype, key.q_dtype}});
  rotated.poison();
  rotated.launch(kernels().candidate({kFused, key.kv_dtype, key.q_dtype}), 2);
  const Verdict v = rotated.verify();
  EXPECT_TRUE(v.ok) << "copy 2 holds the same inputs: " << v.detail;

  const Family& family = qk_rope_cache_family();
  for (const Params& shape : family.verify_shapes(to_params(key))) {
    auto instance = family.instantiate(*device().ctx, to_params(key), shape, 7, true);
    for (const Config& c : {kFused, kUnfused}) {
      kernels().prepare({{c, key.kv_dtype, key.q_dtype}});
      instance->poison();
      instance->launch(kernels().candidate({c, key.kv_dtype, key.q_dtype}), 0);
      const Verdict shape_verdict = instance->verify();
      EXPECT_TRUE(shape_verdict.ok) << shape.canonical() << " " << to_params(c).canonical() << ": "
                                    << shape_verdict.detail;
    }
  }
}

TEST_F(QkRopeCacheControls, TimingSizeLaunchesRunWithoutFault) {
  const Family& family = qk_rope_cache_family();
  const Key key{128, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fn, RopeMode::full, true, 4096};
  auto instance = family.instantiate(*device().ctx, to_params(key), to_params(Shape{0, 64, 163840, 0}), 1, false);
  for (const Config& c : {kFused, kUnfused, Config{Layout::token_head, 8, 4, 256, false, true}}) {
    kernels().prepare({{c, key.kv_dtype, key.q_dtype}});
    for (int r = 0; r < instance->rotations(); ++r)
      instance->launch(kernels().candidate({c, key.kv_dtype, key.q_dtype}), r);
  }
  device().ctx->synchronize();
  const Traffic t = instance->traffic();
  EXPECT_GT(t.bytes, 4096.0 * 128 * 576 * 3);  // q read (bf16) and written (fp8), at least
}

}  // namespace
}  // namespace ktune::rope::gpu_test
