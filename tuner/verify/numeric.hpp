#pragma once
// Host-side encodings of the device number formats, done on bits so that host and device agree
// exactly: bf16, fp8_e4m3fn (OCP: bias 7, max 448, NaN = S.1111.111, no infinities) and
// fp8_e4m3fnuz (AMD gfx942: bias 8, max 240, NaN = 0x80 only, no negative zero).
// Encoders round to nearest even. The fp8 encoders saturate finite values and infinities to the
// format's max (like CUDA's __NV_SATFINITE) and map NaN to NaN (fn keeps the sign); bf16 keeps
// Inf and overflows to Inf like __float2bfloat16_rn, and keeps NaN quiet.
#include <cstdint>

namespace ktune::num {

enum class KvDtype : int { bf16 = 0, fp8_e4m3fn = 1, fp8_e4m3fnuz = 2 };
int bytes_of(KvDtype d) noexcept;  // 2 or 1

uint16_t f32_to_bf16(float x) noexcept;
float bf16_to_f32(uint16_t b) noexcept;
uint8_t f32_to_fp8_e4m3fn(float x) noexcept;
float fp8_e4m3fn_to_f32(uint8_t b) noexcept;
uint8_t f32_to_fp8_e4m3fnuz(float x) noexcept;
float fp8_e4m3fnuz_to_f32(uint8_t b) noexcept;

}  // namespace ktune::num
