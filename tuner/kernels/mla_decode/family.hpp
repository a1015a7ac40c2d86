#pragma once
// The mla_decode kernel family (paged MLA decode attention with draft / verify blocks).
#include <optional>
#include <string>

#include "kernels/family.hpp"
#include "kernels/mla_decode/problem.hpp"

namespace ktune::mla {

const Family& mla_decode_family();

// Why `c` cannot run with `kv_dtype` on `target` at all (tile shape, shared memory, registers), or
// nullopt. Family::infeasible adds the rules about speed (tiles mostly padding, mma configs that a
// sibling beats); correctness tests use this to run geometries that sweeps prune.
std::optional<std::string> unrunnable(const Config& c, num::KvDtype kv_dtype, const TargetLimits& target);

}  // namespace ktune::mla
