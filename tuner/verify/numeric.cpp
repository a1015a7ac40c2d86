#include "verify/numeric.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace ktune::num {
namespace {

// The two fp8 formats differ only in exponent bias, largest finite code and NaN codes.
struct E4M3 {
  int bias;
  uint8_t max_code;  // largest finite magnitude code
  float max_value;
};
constexpr E4M3 kFn{7, 0x7E, 448.0f};
constexpr E4M3 kFnuz{8, 0x7F, 240.0f};

// Magnitude code of |x| (x finite, |x| < max) rounded to nearest even, done on the fp32 bits so
// that the result does not depend on the host's floating-point environment.
uint8_t e4m3_magnitude(uint32_t abs_bits, const E4M3& f) {
  const int biased = static_cast<int>(abs_bits >> 23);
  const int min_normal_e = 1 - f.bias;
  if (biased >= 127 + min_normal_e) {
    // An fp8 normal, the common case (make_problem encodes hundreds of millions): the top 3
    // fraction bits rounded to nearest even at bit 20, in one addition whose carry moves into the
    // exponent by itself; rebiasing the exponent field then leaves the code. |x| < max and max is
    // representable, so rounding never passes the largest finite code.
    const uint32_t rounded = abs_bits + 0x7FFFFu + ((abs_bits >> 20) & 1);
    return static_cast<uint8_t>((rounded >> 20) - (static_cast<uint32_t>(127 - f.bias) << 3));
  }
  if (biased == 0) return 0;  // fp32 subnormals are far below half the smallest fp8 subnormal
  const int e = biased - 127;
  const uint32_t significand = (abs_bits & 0x7FFFFFu) | 0x800000u;  // 24 bits, implicit one
  // An fp8 subnormal (e below 1 - bias): the kept integer counts multiples of the smallest
  // subnormal 2^(1 - bias - 3), possibly rounding up to the smallest normal (code 8).
  const int shift = 20 + min_normal_e - e;
  if (shift > 24) return 0;  // below half the smallest subnormal
  const uint32_t kept = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return static_cast<uint8_t>(kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0));
}

float e4m3_value(uint8_t b, int bias) {
  const int exponent = (b >> 3) & 0xF;
  const int mantissa = b & 0x7;
  const float magnitude = exponent == 0 ? std::ldexp(static_cast<float>(mantissa), 1 - bias - 3)
                                        : std::ldexp(static_cast<float>(8 + mantissa), exponent - bias - 3);
  return (b & 0x80) ? -magnitude : magnitude;
}

}  // namespace

int bytes_of(KvDtype d) noexcept { return d == KvDtype::bf16 ? 2 : 1; }

uint16_t f32_to_bf16(float x) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  // Truncating a NaN whose payload sits in the low half would give Inf: force the quiet bit.
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint32_t round_bias = 0x7FFFu + ((bits >> 16) & 1);  // ties to even
  return static_cast<uint16_t>((bits + round_bias) >> 16);
}

float bf16_to_f32(uint16_t b) noexcept { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint8_t f32_to_fp8_e4m3fn(float x) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint8_t sign = static_cast<uint8_t>((bits >> 24) & 0x80);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return sign | 0x7F;
  if (std::fabs(x) >= kFn.max_value) return sign | kFn.max_code;  // Inf included
  return sign | e4m3_magnitude(abs_bits, kFn);
}

float fp8_e4m3fn_to_f32(uint8_t b) noexcept {
  if ((b & 0x7F) == 0x7F)
    return (b & 0x80) ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  return e4m3_value(b, kFn.bias);
}

uint8_t f32_to_fp8_e4m3fnuz(float x) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return 0x80;
  const uint8_t magnitude = std::fabs(x) >= kFnuz.max_value ? kFnuz.max_code : e4m3_magnitude(abs_bits, kFnuz);
  // 0x80 is the NaN code: a negative value that rounds to zero becomes +0.
  if (magnitude == 0) return 0;
  return static_cast<uint8_t>(((bits >> 24) & 0x80) | magnitude);
}

float fp8_e4m3fnuz_to_f32(uint8_t b) noexcept {
  if (b == 0x80) return std::numeric_limits<float>::quiet_NaN();
  return e4m3_value(b, kFnuz.bias);
}

}  // namespace ktune::num
