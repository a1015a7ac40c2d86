#pragma once
// Host-side encodings of the device number formats, done on bits so that host and device agree
// exactly: bf16, fp8_e4m3fn (OCP: bias 7, max 448, NaN = S.1111.111, no infinities) and
// fp8_e4m3fnuz (AMD gfx942: bias 8, max 240, NaN = 0x80 only, no negative zero).
// Encoders round to nearest even. The fp8 encoders saturate finite values and infinities to the
// format's max (like CUDA's __NV_SATFINITE) and map NaN to NaN (fn keeps the sign); bf16 keeps
// Inf and overflows to Inf like __float2bfloat16_rn, and keeps NaN quiet.
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ktune::num {

enum class KvDtype : int { bf16 = 0, fp8_e4m3fn = 1, fp8_e4m3fnuz = 2 };
int bytes_of(KvDtype d) noexcept;  // 2 or 1

uint16_t f32_to_bf16(float x) noexcept;
float bf16_to_f32(uint16_t b) noexcept;
uint8_t f32_to_fp8_e4m3fn(float x) noexcept;
float fp8_e4m3fn_to_f32(uint8_t b) noexcept;
uint8_t f32_to_fp8_e4m3fnuz(float x) noexcept;
float fp8_e4m3fnuz_to_f32(uint8_t b) noexcept;

// Element i of a KV buffer in format D: bf16 little-endian (two bytes) or one fp8 code. The one
// place that knows that layout; store rounds x to the nearest value of the format.
template <KvDtype D>
void store_kv(uint8_t* buffer, size_t i, float x) noexcept {
  if constexpr (D == KvDtype::bf16) {
    const uint16_t bits = f32_to_bf16(x);
    buffer[2 * i] = static_cast<uint8_t>(bits & 0xff);
    buffer[2 * i + 1] = static_cast<uint8_t>(bits >> 8);
  } else if constexpr (D == KvDtype::fp8_e4m3fn) {
    buffer[i] = f32_to_fp8_e4m3fn(x);
  } else {
    buffer[i] = f32_to_fp8_e4m3fnuz(x);
  }
}
template <KvDtype D>
float load_kv(const uint8_t* buffer, size_t i) noexcept {
  if constexpr (D == KvDtype::bf16)
    return bf16_to_f32(static_cast<uint16_t>(buffer[2 * i] | (buffer[2 * i + 1] << 8)));
  else if constexpr (D == KvDtype::fp8_e4m3fn)
    return fp8_e4m3fn_to_f32(buffer[i]);
  else
    return fp8_e4m3fnuz_to_f32(buffer[i]);
}

// f(std::integral_constant<KvDtype, D>{}) for d's D: the format chosen once, outside a loop over
// hundreds of millions of elements, rather than per element.
template <class F>
decltype(auto) with_kv_dtype(KvDtype d, F&& f) {
  switch (d) {
    case KvDtype::fp8_e4m3fn: return f(std::integral_constant<KvDtype, KvDtype::fp8_e4m3fn>{});
    case KvDtype::fp8_e4m3fnuz: return f(std::integral_constant<KvDtype, KvDtype::fp8_e4m3fnuz>{});
    case KvDtype::bf16: break;
  }
  return f(std::integral_constant<KvDtype, KvDtype::bf16>{});
}
inline void store_kv(KvDtype d, uint8_t* buffer, size_t i, float x) noexcept {
  with_kv_dtype(d, [&](auto dt) { store_kv<dt.value>(buffer, i, x); });
}
inline float load_kv(KvDtype d, const uint8_t* buffer, size_t i) noexcept {
  return with_kv_dtype(d, [&](auto dt) { return load_kv<dt.value>(buffer, i); });
}

}  // namespace ktune::num
