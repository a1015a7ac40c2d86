#pragma once
// The mla_decode kernel family (paged MLA decode attention with draft / verify blocks).
#include "kernels/family.hpp"

namespace ktune::mla {

const Family& mla_decode_family();

}  // namespace ktune::mla
