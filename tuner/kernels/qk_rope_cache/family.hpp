#pragma once
// The qk_rope_cache kernel family (fused QK-RoPE + MLA KV-cache write + query quantisation).
#include "kernels/family.hpp"

namespace ktune::rope {

const Family& qk_rope_cache_family();

}  // namespace ktune::rope
