#pragma once
// The MFMA forms beyond gfx90a's that the AMD targets' matrix cores have (LLVM's AMDGPU back end:
// the builtins __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8 from gfx940, _16x16x32_bf16 from gfx950),
// for the families' pruning: a config that needs a form its target lacks is never compiled there.
#include <string_view>

namespace ktune {

struct MfmaFormats {
  bool fp8_e4m3fnuz = false;  // v_mfma_f32_16x16x32_fp8_fp8 reading fp8_e4m3fnuz (gfx942)
  bool fp8_e4m3fn = false;    // the same instruction reading the OCP fp8_e4m3fn (gfx950)
  bool bf16_k32 = false;      // v_mfma_f32_16x16x32_bf16: 32 reduction dims a product (gfx950)
};

constexpr MfmaFormats mfma_formats(std::string_view arch) noexcept {
  if (arch == "gfx942") return {true, false, false};
  if (arch == "gfx950") return {false, true, true};
  return {};
}

}  // namespace ktune
