// Bit-exact host encodings of bf16 and the two fp8 formats, checked against independent oracles:
// a brute-force nearest-value search over all 256 codes, and a direct bf16 rounding computation.
#include "verify/numeric.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace ktune::num {
namespace {

struct Fp8Format {
  const char* name;
  uint8_t (*encode)(float);
  float (*decode)(uint8_t);
  bool is_nan_code(uint8_t c) const { return fnuz ? c == 0x80 : (c & 0x7F) == 0x7F; }
  bool fnuz;
};
const Fp8Format kFn{"fp8_e4m3fn", f32_to_fp8_e4m3fn, fp8_e4m3fn_to_f32, false};
const Fp8Format kFnuz{"fp8_e4m3fnuz", f32_to_fp8_e4m3fnuz, fp8_e4m3fnuz_to_f32, true};
const Fp8Format* const kFormats[] = {&kFn, &kFnuz};

// Nearest finite code by exhaustive search: the codes of x's sign (and +0 for fnuz, which has no
// negative zero), ties to the even code. Saturation falls out: past max the nearest is max.
uint8_t nearest_code(const Fp8Format& f, float x) {
  const bool negative = std::signbit(x);
  int best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<uint8_t>(c);
    if (f.is_nan_code(code)) continue;
    const bool same_sign = ((code & 0x80) != 0) == negative;
    if (!same_sign && !(f.fnuz && code == 0)) continue;
    // Distances to huge x are all equal in double; the nearest there is the largest magnitude.
    const double d = std::fabs(x) > 1e6f ? -std::fabs(f.decode(code))
                                         : std::fabs(static_cast<double>(x) - static_cast<double>(f.decode(code)));
    if (d < best_distance || (d == best_distance && (code & 1) == 0)) {
      best = c;
      best_distance = d;
    }
  }
  return static_cast<uint8_t>(best);
}

std::vector<float> positive_finite_values(const Fp8Format& f) {
  std::set<float> values;
  for (int c = 0; c < 0x80; ++c)
    if (!f.is_nan_code(static_cast<uint8_t>(c))) values.insert(f.decode(static_cast<uint8_t>(c)));
  return {values.begin(), values.end()};
}

TEST(Fp8, EveryCodeRoundTripsAndNanCodesDecodeToNan) {
  for (const auto* f : kFormats) {
    int nan_codes = 0;
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<uint8_t>(c);
      const float v = f->decode(code);
      if (f->is_nan_code(code)) {
        ++nan_codes;
        EXPECT_TRUE(std::isnan(v)) << f->name << " code " << c;
        EXPECT_TRUE(f->is_nan_code(f->encode(v))) << f->name << " code " << c;
        continue;
      }
      ASSERT_TRUE(std::isfinite(v)) << f->name << " code " << c;
      EXPECT_EQ(f->encode(v), code) << f->name << " code " << c << " value " << v;
    }
    EXPECT_EQ(nan_codes, f->fnuz ? 1 : 2) << f->name;
  }
}

TEST(Fp8, DecodedValuesAreDistinctSoRoundTripsAreNotVacuous) {
  // Only fn's +0 / -0 pair may share a value; a decoder that collapsed codes would show up here.
  std::set<float> fn, fnuz;
  for (int c = 0; c < 256; ++c) {
    if (!kFn.is_nan_code(static_cast<uint8_t>(c))) fn.insert(kFn.decode(static_cast<uint8_t>(c)));
    if (!kFnuz.is_nan_code(static_cast<uint8_t>(c))) fnuz.insert(kFnuz.decode(static_cast<uint8_t>(c)));
  }
  EXPECT_EQ(fn.size(), 253u);
  EXPECT_EQ(fnuz.size(), 255u);
}

TEST(Fp8, KnownValuesOfTheTwoFormats) {
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x7E), 448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(0xFE), -448.0f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x07), 7 * std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x80), 0.0f);
  EXPECT_TRUE(std::signbit(fp8_e4m3fn_to_f32(0x80)));

  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x40), 1.0f);
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x7F), 240.0f);
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0xFF), -240.0f);
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x01), std::ldexp(1.0f, -10));
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x08), std::ldexp(1.0f, -7));
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x00), 0.0f);

  EXPECT_EQ(f32_to_fp8_e4m3fn(1.0f), 0x38);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(1.0f), 0x40);
}

TEST(Fp8, TheBiasesDifferSoSwappingFormatsIsCaught) {
  // A decoder with the other format's bias would be off by exactly a factor of two.
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x38), 1.0f);
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x40), 1.0f);
  EXPECT_EQ(fp8_e4m3fnuz_to_f32(0x38), 0.5f);
  EXPECT_EQ(fp8_e4m3fn_to_f32(0x40), 2.0f);
  EXPECT_NE(f32_to_fp8_e4m3fn(1.0f), f32_to_fp8_e4m3fnuz(1.0f));
}

TEST(Fp8, TiesRoundToEven) {
  // fn: 1.0 = 0x38, 1.125 = 0x39, 1.25 = 0x3A; subnormal step 2^-9.
  EXPECT_EQ(f32_to_fp8_e4m3fn(1.0625f), 0x38);
  EXPECT_EQ(f32_to_fp8_e4m3fn(1.1875f), 0x3A);
  EXPECT_EQ(f32_to_fp8_e4m3fn(std::nextafter(1.0625f, 2.0f)), 0x39);
  EXPECT_EQ(f32_to_fp8_e4m3fn(std::ldexp(1.0f, -10)), 0x00);
  EXPECT_EQ(f32_to_fp8_e4m3fn(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(f32_to_fp8_e4m3fn(3 * std::ldexp(1.0f, -10)), 0x02);
  EXPECT_EQ(f32_to_fp8_e4m3fn(-1.1875f), 0xBA);
  // fnuz: 1.0 = 0x40; subnormal step 2^-10.
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(1.0625f), 0x40);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(1.1875f), 0x42);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(std::ldexp(1.0f, -11)), 0x00);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(3 * std::ldexp(1.0f, -11)), 0x02);
  // Largest subnormal rounding up into the smallest normal.
  EXPECT_EQ(f32_to_fp8_e4m3fn(15 * std::ldexp(1.0f, -10)), 0x08);
}

TEST(Fp8, SaturatesFiniteValuesAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float x : {448.0f, 464.0f, 479.0f, 480.0f, 1e6f, 3e38f, inf}) {
    EXPECT_EQ(f32_to_fp8_e4m3fn(x), 0x7E) << x;
    EXPECT_EQ(f32_to_fp8_e4m3fn(-x), 0xFE) << x;
  }
  for (float x : {240.0f, 248.0f, 256.0f, 1e6f, inf}) {
    EXPECT_EQ(f32_to_fp8_e4m3fnuz(x), 0x7F) << x;
    EXPECT_EQ(f32_to_fp8_e4m3fnuz(-x), 0xFF) << x;
  }
  // Just below the max still rounds to a finite neighbour, not to the NaN code.
  // (416 = 0x7D, 448 = 0x7E; 432 is their tie and goes to the even code.)
  EXPECT_EQ(f32_to_fp8_e4m3fn(432.0f), 0x7E);
  EXPECT_EQ(f32_to_fp8_e4m3fn(431.0f), 0x7D);
}

TEST(Fp8, NanAndNegativeZero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(f32_to_fp8_e4m3fn(nan), 0x7F);
  EXPECT_EQ(f32_to_fp8_e4m3fn(-nan), 0xFF);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(nan), 0x80);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(-nan), 0x80);
  EXPECT_EQ(f32_to_fp8_e4m3fn(-0.0f), 0x80);
  // fnuz has no -0: 0x80 would be NaN.
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(-0.0f), 0x00);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(-1e-9f), 0x00);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(-std::ldexp(1.0f, -11)), 0x00);
  EXPECT_EQ(f32_to_fp8_e4m3fnuz(-std::nextafter(std::ldexp(1.0f, -11), 1.0f)), 0x81);
}

TEST(Fp8, EncoderMatchesBruteForceNearestValue) {
  std::mt19937 rng(1234);
  for (const auto* f : kFormats) {
    std::vector<float> inputs;
    const auto values = positive_finite_values(*f);
    for (size_t i = 0; i < values.size(); ++i) {
      inputs.push_back(values[i]);
      if (i + 1 < values.size()) {
        const float mid = (values[i] + values[i + 1]) / 2;  // exact: few significant bits
        inputs.push_back(mid);
        inputs.push_back(std::nextafter(mid, 0.0f));
        inputs.push_back(std::nextafter(mid, 1e9f));
      }
    }
    std::uniform_real_distribution<float> wide(0.0f, 600.0f);
    std::uniform_real_distribution<float> exponent(-30.0f, 10.0f);
    for (int i = 0; i < 20000; ++i) {
      inputs.push_back(wide(rng));
      inputs.push_back(std::exp2(exponent(rng)));
    }
    inputs.push_back(std::numeric_limits<float>::denorm_min());
    inputs.push_back(std::numeric_limits<float>::max());
    size_t mismatches = 0;
    for (float x : inputs)
      for (float signed_x : {x, -x}) {
        const uint8_t want = nearest_code(*f, signed_x);
        const uint8_t got = f->encode(signed_x);
        if (got != want && ++mismatches <= 5)
          ADD_FAILURE() << f->name << ": encode(" << signed_x << ") = " << int(got) << ", nearest is " << int(want);
      }
    EXPECT_EQ(mismatches, 0u) << f->name << " over " << 2 * inputs.size() << " inputs";
  }
}

// Direct computation of bf16 rounding: the two bf16 neighbours of x, the nearer one, ties to
// the even code; the neighbour past the largest finite bf16 stands for 2^128 (IEEE overflow).
uint16_t bf16_nearest(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const auto down = static_cast<uint16_t>(bits >> 16);
  const auto up = static_cast<uint16_t>(down + 1);
  auto value = [](uint16_t b) {
    if ((b & 0x7FFF) == 0x7F80) return std::copysign(std::ldexp(1.0, 128), bf16_to_f32(b));
    return static_cast<double>(bf16_to_f32(b));
  };
  const double d_down = std::fabs(x - value(down));
  const double d_up = std::fabs(x - value(up));
  if (d_down != d_up) return d_down < d_up ? down : up;
  return (down & 1) == 0 ? down : up;
}

TEST(Bf16, RoundsToNearestEvenLikeADirectComputation) {
  std::mt19937 rng(99);
  size_t mismatches = 0, checked = 0;
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    if (i % 4 == 0) bits = (bits & 0xFFFF0000u) | 0x8000u;  // exact ties
    const float x = std::bit_cast<float>(bits);
    if (std::isnan(x) || std::isinf(x)) continue;
    ++checked;
    if (f32_to_bf16(x) != bf16_nearest(x) && ++mismatches <= 5)
      ADD_FAILURE() << std::hex << "bits 0x" << bits << ": got 0x" << f32_to_bf16(x) << ", want 0x" << bf16_nearest(x);
  }
  EXPECT_EQ(mismatches, 0u) << "over " << checked << " inputs";
}

TEST(Bf16, KnownTiesOverflowAndSpecials) {
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);      // tie, down to even
  EXPECT_EQ(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);  // tie, up to even
  EXPECT_EQ(f32_to_bf16(-1.0f - 3 * std::ldexp(1.0f, -8)), 0xBF82);
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // overflows to Inf
  EXPECT_EQ(f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(f32_to_bf16(-std::numeric_limits<float>::infinity()), 0xFF80);
  // A NaN whose payload is only in the dropped half must not turn into Inf.
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::bit_cast<float>(0x7F800001u)))));
  EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(std::bit_cast<float>(0xFF800001u)))));
  EXPECT_EQ(bf16_to_f32(0xC040), -3.0f);
}

TEST(Bf16, EveryCodeRoundTrips) {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const auto code = static_cast<uint16_t>(c);
    const float v = bf16_to_f32(code);
    if (std::isnan(v))
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(v)))) << c;
    else
      EXPECT_EQ(f32_to_bf16(v), code) << c;
  }
}

TEST(KvDtype, BytesPerElement) {
  EXPECT_EQ(bytes_of(KvDtype::bf16), 2);
  EXPECT_EQ(bytes_of(KvDtype::fp8_e4m3fn), 1);
  EXPECT_EQ(bytes_of(KvDtype::fp8_e4m3fnuz), 1);
}

// The buffer layout every family's inputs and references share: element i of a bf16 buffer is
// bytes 2i (low) and 2i + 1 (high), of an fp8 buffer byte i, and nothing else is written.
TEST(KvDtype, ElementsSitWhereTheDevicesReadThem) {
  std::vector<uint8_t> buffer(8, 0xAA);
  store_kv(KvDtype::bf16, buffer.data(), 1, -3.0f);  // bf16 0xC040
  EXPECT_EQ(buffer, (std::vector<uint8_t>{0xAA, 0xAA, 0x40, 0xC0, 0xAA, 0xAA, 0xAA, 0xAA}));
  EXPECT_EQ(load_kv(KvDtype::bf16, buffer.data(), 1), -3.0f);
  store_kv(KvDtype::fp8_e4m3fn, buffer.data(), 5, 448.0f);
  EXPECT_EQ(buffer[5], 0x7E);
  EXPECT_EQ(load_kv(KvDtype::fp8_e4m3fn, buffer.data(), 5), 448.0f);
  store_kv(KvDtype::fp8_e4m3fnuz, buffer.data(), 6, 240.0f);
  EXPECT_EQ(buffer[6], 0x7F);
  EXPECT_EQ(load_kv(KvDtype::fp8_e4m3fnuz, buffer.data(), 6), 240.0f);
  EXPECT_EQ(buffer, (std::vector<uint8_t>{0xAA, 0xAA, 0x40, 0xC0, 0xAA, 0x7E, 0x7F, 0xAA}));
}

// The run-time format picks its own decoder and encoder (the two fp8 formats differ on most codes,
// so a swapped case is caught).
TEST(KvDtype, RunTimeFormatsPickTheirOwnCodes) {
  for (int c = 0; c < 256; ++c) {
    const auto code = static_cast<uint8_t>(c);
    for (const KvDtype d : {KvDtype::fp8_e4m3fn, KvDtype::fp8_e4m3fnuz}) {
      const float want = d == KvDtype::fp8_e4m3fn ? fp8_e4m3fn_to_f32(code) : fp8_e4m3fnuz_to_f32(code);
      const float got = load_kv(d, &code, 0);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << c;
        continue;
      }
      EXPECT_EQ(got, want) << c;
      uint8_t back[2] = {};  // room for any format's element (store_kv's bf16 branch writes two bytes)
      store_kv(d, back, 0, want);
      EXPECT_EQ(load_kv(d, back, 0), want) << c;  // -0 and +0 of fnuz share code 0
    }
  }
}

}  // namespace
}  // namespace ktune::num
