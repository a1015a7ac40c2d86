// The number format of the softmax weights P in O = P V, against mla_decode's output tolerance:
// why the matrix-core kernels feed P V two bf16 terms of P (or one fp16 term), and not the one
// bf16 term that FlashMLA uses; and what one fp16 term costs a bf16 cache, whose values wgmma's
// P V converts to fp16 (mla_decode_mma.hip, number formats): its range. Each format is emulated on the CPU the way the
// kernels compute (fp32 scores in the exp2 domain, P = 2^(S - max) in fp32 and then rounded to the format, the row sum
// of the unrounded P, fp32 accumulation, one bf16 rounding of the output) and compared with the double reference
// exactly as DeviceInstance::verify compares a kernel's output. On the H200 the two one-term kernels of
// experiments/2026-12-02-mla-decode-seesaw failed verification the same way (ctx=77: err 5.5e-4 and 5.8e-4 against 5e-4
// + 1e-2 |ref|).
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/instance.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "verify/compare.hpp"

namespace ktune::mla {
namespace {

enum class Weights {
  fp32,            // P as computed
  bf16_two_terms,  // hi = the top 16 bits, lo = the rest rounded to bf16 (the bf16 cache's P V)
  fp16,            // rounded to fp16 (the fp8 caches' P V)
  bf16_rounded,    // one bf16 term, rounded to nearest even
  bf16_truncated,  // one bf16 term, the top 16 bits
};

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
float top_half(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return bits_to_float(b & 0xffff0000u);
}
float bf16_round(float x) { return num::bf16_to_f32(num::f32_to_bf16(x)); }

// x rounded to fp16, to nearest even, as the hardware conversion: 11 significant bits down to
// 2^-14, then steps of 2^-24; from 65520 on (half a step past the largest, 65504), infinity.
float fp16_round(float x) {
  const float a = std::fabs(x);
  if (a >= 65520.f) return std::copysign(INFINITY, x);
  if (a < std::ldexp(1.f, -14)) return std::copysign(std::ldexp(std::nearbyint(std::ldexp(a, 24)), -24), x);
  int e = 0;
  const float m = std::frexp(a, &e);
  return std::copysign(std::ldexp(std::nearbyint(std::ldexp(m, 11)), e - 11), x);
}

enum class Values {
  cached,  // V as the bf16 cache holds it (mma.sync, MFMA)
  fp16,    // converted to fp16 (wgmma's P V)
};

float in_format(float p, Weights w) {
  switch (w) {
    case Weights::fp32: return p;
    case Weights::bf16_two_terms: return top_half(p) + bf16_round(p - top_half(p));
    case Weights::fp16: return fp16_round(p);
    case Weights::bf16_rounded: return bf16_round(p);
    case Weights::bf16_truncated: return top_half(p);
  }
  return p;
}

// The output [B, L, H, 512] of a bf16-cache problem with P in format w and V in format v.
std::vector<float> attend(const HostProblem& p, Weights w, Values v = Values::cached) {
  constexpr float kLog2e = 1.4426950408889634f;
  const int rows = p.block_len * p.heads;
  const float score_scale = p.softmax_scale * p.kv_scale * kLog2e;
  std::vector<float> out(static_cast<size_t>(p.batch) * rows * kValueDim);
  for (int b = 0; b < p.batch; ++b) {
    std::vector<float> keys = request_keys(p, b);
    if (v == Values::fp16)
      for (size_t j = 0; j < keys.size() / kHeadDim; ++j)
        for (int d = 0; d < kValueDim; ++d) keys[j * kHeadDim + d] = fp16_round(keys[j * kHeadDim + d]);
    for (int r = 0; r < rows; ++r) {
      const int visible = visible_keys(p, b, r / p.heads);
      const uint16_t* q = p.q.data() + (static_cast<size_t>(b) * rows + r) * kHeadDim;
      std::vector<float> s(visible);
      float max = -INFINITY;
      for (int j = 0; j < visible; ++j) {
        double dot = 0;
        for (int d = 0; d < kHeadDim; ++d) dot += num::bf16_to_f32(q[d]) * keys[static_cast<size_t>(j) * kHeadDim + d];
        s[j] = static_cast<float>(dot) * score_scale;
        max = std::max(max, s[j]);
      }
      std::vector<double> o(kValueDim, 0.0);
      double sum = 0;
      for (int j = 0; j < visible; ++j) {
        const float pj = std::exp2(s[j] - max);
        sum += pj;
        const double weight = in_format(pj, w);
        for (int d = 0; d < kValueDim; ++d) o[d] += weight * keys[static_cast<size_t>(j) * kHeadDim + d];
      }
      float* dst = out.data() + (static_cast<size_t>(b) * rows + r) * kValueDim;
      for (int d = 0; d < kValueDim; ++d) dst[d] = bf16_round(static_cast<float>(o[d] / sum));
    }
  }
  return out;
}

bool passes(const HostProblem& p, const Reference& ref, Weights w, Values v = Values::cached) {
  return verify::compare("o", attend(p, w, v), ref.o, kOutputTolerance).ok;
}

// Two of mla_decode's verification shapes (DeviceInstance verifies every candidate on them): the
// whole context is the draft block of 4, and ragged lengths up to 77. Short contexts are where one
// bf16 term fails: a few keys share the weight, and rounding one of them by up to 2^-8 of itself
// moves the output by up to a quarter of that times the spread of their values ([-1, 1) here,
// so up to about 1e-3), which the absolute tolerance, 5e-4, does not cover.
TEST(MlaDecodeSoftmaxWeights, TheOutputToleranceAcceptsTwoBf16TermsAndRejectsOne) {
  const Key key{16, 4, true, num::KvDtype::bf16, 32};
  for (const Shape& shape : {Shape{4, 1, 2, false}, Shape{77, 16, 3, true}})
    for (uint64_t seed : {1u, 2u}) {
      const HostProblem p = make_problem(key, shape, seed);
      const Reference ref = reference(p);
      SCOPED_TRACE(testing::Message() << "ctx=" << shape.ctx << " seed=" << seed);
      EXPECT_TRUE(passes(p, ref, Weights::fp32));
      EXPECT_TRUE(passes(p, ref, Weights::bf16_two_terms));
      EXPECT_TRUE(passes(p, ref, Weights::fp16));
      EXPECT_TRUE(passes(p, ref, Weights::fp16, Values::fp16));  // wgmma's P V
      EXPECT_FALSE(passes(p, ref, Weights::bf16_rounded));
      EXPECT_FALSE(passes(p, ref, Weights::bf16_truncated));
    }
}

// wgmma's P V converts a bf16 cache's values to fp16: exact up to 65504, so the largest bf16
// value below it (65280) passes, and the next one (65536) overflows to infinity and fails, where
// mma.sync's format (two bf16 terms of P against V as cached) holds both.
TEST(MlaDecodeSoftmaxWeights, Fp16ValuesHoldABf16CacheBelow65504) {
  const Key key{16, 1, true, num::KvDtype::bf16, 32};
  for (const float big : {65280.f, 65536.f}) {
    HostProblem p = make_problem(key, Shape{77, 16, 3, true}, 1);
    // Value dim 5 of request 0's first key.
    const size_t slot = static_cast<size_t>(p.block_table[0]) * p.page_size;
    const uint16_t bits = num::f32_to_bf16(big);
    ASSERT_EQ(num::bf16_to_f32(bits), big) << "a bf16 value";
    std::memcpy(p.kv_cache.data() + slot * kHeadDim * 2 + 5 * 2, &bits, sizeof bits);
    const Reference ref = reference(p);
    SCOPED_TRACE(testing::Message() << "value " << big);
    EXPECT_TRUE(passes(p, ref, Weights::bf16_two_terms));
    EXPECT_EQ(passes(p, ref, Weights::fp16, Values::fp16), big < 65504.f);
  }
}

// The format rounds where it should: the two terms hold 16 significant bits of P, one term 8.
TEST(MlaDecodeSoftmaxWeights, FormatsKeepTheirSignificantBits) {
  const float p = 0.7071067811865476f;
  EXPECT_LE(std::fabs(in_format(p, Weights::bf16_two_terms) - p), std::ldexp(p, -16));
  EXPECT_LE(std::fabs(in_format(p, Weights::fp16) - p), std::ldexp(p, -11));
  EXPECT_LE(std::fabs(in_format(p, Weights::bf16_rounded) - p), std::ldexp(p, -8));
  const float tie = 0.5f + std::ldexp(1.f, -9);  // half a bf16 step above 0.5: rounds to even, 0.5
  EXPECT_EQ(in_format(tie, Weights::bf16_rounded), 0.5f);
  EXPECT_EQ(in_format(tie, Weights::bf16_truncated), 0.5f);
  EXPECT_EQ(in_format(tie, Weights::bf16_two_terms), tie);
  EXPECT_EQ(in_format(tie, Weights::fp16), tie);
  EXPECT_EQ(in_format(std::ldexp(1.f, -20), Weights::fp16), std::ldexp(1.f, -20)) << "fp16 subnormal, exact";
  EXPECT_EQ(fp16_round(1.f), 1.f);
  EXPECT_EQ(fp16_round(-65504.f), -65504.f);
  EXPECT_EQ(fp16_round(65519.f), 65504.f);
  EXPECT_EQ(fp16_round(65520.f), INFINITY);
  EXPECT_EQ(fp16_round(-3.f * std::ldexp(1.f, -26)), -std::ldexp(1.f, -24)) << "to the nearest fp16 subnormal";
}

}  // namespace
}  // namespace ktune::mla
