#pragma once
// Random host inputs of one qk_rope_cache problem, in the device layouts, deterministic for a seed.
#include <cstdint>

#include "kernels/qk_rope_cache/problem.hpp"
#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune::rope {

// Quantisation scales of fp8 outputs; deliberately not powers of two, so that a kernel ignoring
// one fails.
inline constexpr float kFp8KScale = 0.03f;
inline constexpr float kFp8QScale = 0.02f;
// Positions of an identity rope reach this (and 0): a kernel that reads its 1-row table at the
// position instead of clamping reads far out of bounds.
inline constexpr int64_t kIdentityMaxPosition = int64_t{1} << 20;
inline constexpr double kRopeTheta = 10000.0;  // DeepSeek-V3 / Kimi base of the rotary angles

// T = shape.tokens, or key.tokens when that is 0. Inputs are bf16 in [-2, 2). The cache has room
// for 2T + 7 tokens rounded up to whole pages, filled with random canary bytes; the tokens' slots
// are a random choice among them (so pages are partly written and neighbours stay untouched),
// every shape.padded_every-th token is padded (slot -1). Full rope: tables of shape.table_rows rows
// of cos / sin(pos * theta^(-i / 32)), positions random in the table, the first token at its last
// row. Identity rope: a 1-row table of cos 1, sin 0 and positions up to kIdentityMaxPosition.
// Throws Error for a key / shape the family's contract excludes.
HostProblem make_problem(const Key& key, const Shape& shape, uint64_t seed);

}  // namespace ktune::rope
