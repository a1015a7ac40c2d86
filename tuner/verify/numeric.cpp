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
  if (biased == 0) return 0;  // fp32 subnormals are far below half the smallest fp8 subnormal
  const int e = biased - 127;
  const uint32_t significand = (abs_bits & 0x7FFFFFu) | 0x800000u;  // 24 bits, implicit one
  // Keep 3 fraction bits for fp8 normals; for fp8 subnormals (e below 1 - bias) shift further
  // so that the kept integer counts multiples of the smallest subnormal 2^(1 - bias - 3).
  const int min_normal_e = 1 - f.bias;
  const int shift = 20 + (e < min_normal_e ? min_normal_e - e : 0);
  if (shift > 24) return 0;  // below half the smallest subnormal
  const uint32_t kept = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  const uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
  // For normals `rounded` includes the implicit 8, so adding it to (exponent - 1) << 3 yields the
  // code, and a carry to 16 moves into the next exponent by itself; subnormals (and a subnormal
  // rounding up to the smallest normal, code 8) are just `rounded`.
  const int exponent_part = e < min_normal_e ? 0 : (e + f.bias - 1) << 3;
  // |x| < max and max is representable, so rounding never passes the largest finite code.
  return static_cast<uint8_t>(exponent_part + static_cast<int>(rounded));
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
  if ((b & 0x7F) == 0x7F) return (b & 0x80) ? -std::numeric_limits<float>::quiet_NaN()
                                            : std::numeric_limits<float>::quiet_NaN();
  return e4m3_value(b, kFn.bias);
}

uint8_t f32_to_fp8_e4m3fnuz(float x) noexcept {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;
  if (abs_bits > 0x7F800000u) return 0x80;
  const uint8_t magnitude =
      std::fabs(x) >= kFnuz.max_value ? kFnuz.max_code : e4m3_magnitude(abs_bits, kFnuz);
  // 0x80 is the NaN code: a negative value that rounds to zero becomes +0.
  if (magnitude == 0) return 0;
  return static_cast<uint8_t>(((bits >> 24) & 0x80) | magnitude);
}

float fp8_e4m3fnuz_to_f32(uint8_t b) noexcept {
  if (b == 0x80) return std::numeric_limits<float>::quiet_NaN();
  return e4m3_value(b, kFnuz.bias);
}

}  // namespace ktune::num
