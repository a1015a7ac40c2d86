// The numbers of math=mfma_native on an fp8 cache (templates/mla_decode/mma/mfma_native.hpp), against
// mla_decode's CPU reference and tolerances: Q K^T on the fp8 MFMA takes the queries in fp8, as two
// terms per element with a power-of-two scale per row (mla_tile::query_scale_bits, shared with the
// kernel), P V as math=mma computes it (P one fp16 term, V decoded exactly). No AMD GPU has run the
// path, so this emulation is what stands for its verification until one does: each query is
// quantized exactly as the kernel does it (the row's largest |q| as bf16 bits, the scale, hi and lo
// through the host encoders that the kernels' bit encoders match), the products of fp8 values are
// exact and accumulate in fp32 (here in double), and the output is compared with the reference
// exactly as DeviceInstance::verify compares a kernel's, on the family's own verification shapes.
// One fp8 term (hi alone) must fail: the check can tell the path's quantization from a broken one.
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/geometry.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/instance.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "verify/compare.hpp"

namespace ktune::mla {
namespace {

enum class QueryTerms {
  two,      // hi + lo: the kernel's
  hi_only,  // hi alone: 4 significant bits, what one fp8 term keeps
};

float fp8_round(num::KvDtype d, float x) {
  return d == num::KvDtype::fp8_e4m3fn ? num::fp8_e4m3fn_to_f32(num::f32_to_fp8_e4m3fn(x))
                                       : num::fp8_e4m3fnuz_to_f32(num::f32_to_fp8_e4m3fnuz(x));
}

// The largest |q| of a row as bf16 bits, as the kernel's shared maximum reduces it.
uint32_t row_abs_max(const uint16_t* q) {
  uint32_t m = 0;
  for (int d = 0; d < kHeadDim; ++d) m = std::max<uint32_t>(m, q[d] & 0x7fffu);
  return m;
}

// The query row as the fp8 products see it, scaled by the row's s_r: hi + lo (or hi).
std::vector<float> quantized_row(num::KvDtype d, const uint16_t* q, QueryTerms terms) {
  const float scale = std::bit_cast<float>(mla_tile::query_scale_bits(row_abs_max(q)));
  std::vector<float> out(kHeadDim);
  for (int i = 0; i < kHeadDim; ++i) {
    const float v = num::bf16_to_f32(q[i]) * scale;
    const float hi = fp8_round(d, v);
    out[i] = terms == QueryTerms::two ? hi + fp8_round(d, v - hi) : hi;
  }
  return out;
}

struct Emulated {
  std::vector<float> o, lse;
};

// o and lse of an fp8-cache problem as math=mfma_native computes them.
Emulated attend(const HostProblem& p, QueryTerms terms) {
  constexpr float kLog2e = 1.4426950408889634f;
  constexpr float kLn2 = 0.6931471805599453f;
  const int rows = p.block_len * p.heads;
  const float score_scale = p.softmax_scale * p.kv_scale * 1.f * kLog2e;  // the codes' unit is 1
  Emulated out{std::vector<float>(static_cast<size_t>(p.batch) * rows * kValueDim),
               std::vector<float>(static_cast<size_t>(p.batch) * rows)};
  for (int b = 0; b < p.batch; ++b) {
    const std::vector<float> keys = request_keys(p, b);
    for (int r = 0; r < rows; ++r) {
      const int visible = visible_keys(p, b, r / p.heads);
      const uint16_t* q = p.q.data() + (static_cast<size_t>(b) * rows + r) * kHeadDim;
      const std::vector<float> qs = quantized_row(p.kv_dtype, q, terms);
      const float row_scale = score_scale * std::bit_cast<float>(mla_tile::query_unscale_bits(row_abs_max(q)));
      std::vector<float> s(visible);
      float max = -INFINITY;
      for (int j = 0; j < visible; ++j) {
        double dot = 0;
        for (int d = 0; d < kHeadDim; ++d) dot += double{qs[d]} * keys[static_cast<size_t>(j) * kHeadDim + d];
        s[j] = static_cast<float>(dot) * row_scale;
        max = std::max(max, s[j]);
      }
      std::vector<double> o(kValueDim, 0.0);
      double sum = 0;
      for (int j = 0; j < visible; ++j) {
        const float pj = std::exp2(s[j] - max);
        sum += pj;
        const double weight = static_cast<float>(static_cast<_Float16>(pj));  // P: one fp16 term
        for (int d = 0; d < kValueDim; ++d) o[d] += weight * keys[static_cast<size_t>(j) * kHeadDim + d];
      }
      const size_t row = static_cast<size_t>(b) * rows + r;
      for (int d = 0; d < kValueDim; ++d)
        out.o[row * kValueDim + d] = num::bf16_to_f32(num::f32_to_bf16(static_cast<float>(o[d] / sum * p.kv_scale)));
      out.lse[row] = static_cast<float>((max + std::log2(sum)) * kLn2);
    }
  }
  return out;
}

Verdict check(const HostProblem& p, const Reference& ref, QueryTerms terms) {
  const Emulated e = attend(p, terms);
  return verify::merge(verify::compare("o", e.o, ref.o, kOutputTolerance),
                       verify::compare("lse", e.lse, ref.lse, kLseTolerance));
}

constexpr num::KvDtype kFp8[] = {num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz};

// The family's verification shapes (every candidate is verified on them) of a causal draft
// block of 4 tokens at 16 heads, both fp8 formats: the kernel's two terms pass o and lse; one term
// fails (its 4 significant bits move the scores by about 2e-2 rms, the lse tolerance is 1e-4).
TEST(MlaDecodeNativeFp8Numbers, TwoQueryTermsPassTheFamilysChecksAndOneFails) {
  for (const num::KvDtype dtype : kFp8) {
    const Key key{16, 4, true, dtype, 32};
    for (const Params& shape_params : mla_decode_family().verify_shapes(to_params(key))) {
      const Shape shape = shape_of(shape_params);
      const HostProblem p = make_problem(key, shape, 7);
      const Reference ref = reference(p);
      SCOPED_TRACE(testing::Message() << "kv_dtype=" << static_cast<int>(dtype) << " ctx=" << shape.ctx);
      const Verdict two = check(p, ref, QueryTerms::two);
      EXPECT_TRUE(two.ok) << two.detail;
      EXPECT_FALSE(check(p, ref, QueryTerms::hi_only).ok);
    }
  }
}

// hi + lo is the scaled bf16 query exactly wherever lo stays above the format's smallest step
// (here: every element of at least 1 after scaling, the row's largest in [64, 128)), and within
// half that step (2^-10 fn, 2^-11 fnuz) below it.
TEST(MlaDecodeNativeFp8Numbers, TwoTermsHoldTheScaledQueryExactly) {
  for (const num::KvDtype dtype : kFp8) {
    const HostProblem p = make_problem(Key{16, 4, true, dtype, 32}, Shape{77, 16, 3, true}, 3);
    const float half_step = dtype == num::KvDtype::fp8_e4m3fn ? std::ldexp(1.f, -10) : std::ldexp(1.f, -11);
    for (size_t row = 0; row < p.q.size() / kHeadDim; ++row) {
      const uint16_t* q = p.q.data() + row * kHeadDim;
      const float scale = std::bit_cast<float>(mla_tile::query_scale_bits(row_abs_max(q)));
      const float largest = num::bf16_to_f32(static_cast<uint16_t>(row_abs_max(q))) * scale;
      ASSERT_GE(largest, 64.f);
      ASSERT_LT(largest, 128.f);
      const std::vector<float> qs = quantized_row(dtype, q, QueryTerms::two);
      for (int d = 0; d < kHeadDim; ++d) {
        const float v = num::bf16_to_f32(q[d]) * scale;
        if (std::fabs(v) >= 1.f)
          ASSERT_EQ(qs[d], v) << "row " << row << " dim " << d;
        else
          ASSERT_LE(std::fabs(qs[d] - v), half_step) << "row " << row << " dim " << d;
      }
    }
  }
}

// The scale and its inverse: a power of two that takes the row's largest |q| into [64, 128), both
// normal floats for every bf16 maximum (zero rows and infinities included).
TEST(MlaDecodeNativeFp8Numbers, RowScalesArePowersOfTwoIntoTheTermsRange) {
  EXPECT_EQ(std::bit_cast<float>(mla_tile::query_scale_bits(num::f32_to_bf16(2.f))), 32.f);
  EXPECT_EQ(std::bit_cast<float>(mla_tile::query_unscale_bits(num::f32_to_bf16(2.f))), 1.f / 32.f);
  EXPECT_EQ(std::bit_cast<float>(mla_tile::query_scale_bits(num::f32_to_bf16(1.99f))), 64.f);
  EXPECT_EQ(std::bit_cast<float>(mla_tile::query_scale_bits(num::f32_to_bf16(0.001f))), 65536.f);
  for (uint32_t bits = 0; bits <= 0x7f80u; ++bits) {
    const float scale = std::bit_cast<float>(mla_tile::query_scale_bits(bits));
    const float unscale = std::bit_cast<float>(mla_tile::query_unscale_bits(bits));
    ASSERT_TRUE(std::isnormal(scale) && std::isnormal(unscale)) << bits;
    ASSERT_EQ(scale * unscale, 1.f) << bits;
    const float largest = num::bf16_to_f32(static_cast<uint16_t>(bits));
    if (largest >= std::ldexp(1.f, -120) && std::isfinite(largest)) {
      ASSERT_GE(largest * scale, 64.f) << bits;
      ASSERT_LT(largest * scale, 128.f) << bits;
    }
  }
}

}  // namespace
}  // namespace ktune::mla
