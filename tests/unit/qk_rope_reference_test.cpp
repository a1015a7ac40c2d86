// The qk_rope_cache reference and its output check, on the CPU: rope math against hand-computed
// values (GPT-J and NeoX pairs), fp8 encoding of q_out and the cache, padded tokens and untouched
// slots, the inputs' edges (1-row identity table, positions up to 2^20), and the mutation the
// design names: an identity table with cos = 0.5 fails the check. Each check has a twin that
// makes it fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/error.hpp"
#include "kernels/qk_rope_cache/inputs.hpp"
#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune::rope {
namespace {

using testing::HasSubstr;

constexpr num::KvDtype kDtypes[] = {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz};

Key key(int heads, num::KvDtype kv, num::KvDtype q, RopeMode rope, bool neox, int tokens = 8) {
  return Key{heads, kv, q, rope, neox, tokens};
}

// One token, one head, a 2-row table; q_pe and k_pe hold 1, 2, 3 at elements 0, 1, 32 and 0
// elsewhere, row 1 of the table has cos 0.5, sin 0.25 at angle 0. Every value is exact.
HostProblem hand_problem(bool is_neox) {
  HostProblem p =
      make_problem(key(1, num::KvDtype::bf16, num::KvDtype::bf16, RopeMode::full, is_neox, 1), Shape{1, 1, 2, 0}, 1);
  p.positions = {1};
  std::fill(p.q_pe.begin(), p.q_pe.end(), uint16_t{0});
  std::fill(p.cos.begin(), p.cos.end(), 1.f);
  std::fill(p.sin.begin(), p.sin.end(), 0.f);
  p.cos[kTableDim] = 0.5f;
  p.sin[kTableDim] = 0.25f;
  for (auto* pe : {&p.q_pe, &p.k_pe}) {
    std::fill(pe->begin(), pe->end(), uint16_t{0});
    (*pe)[0] = num::f32_to_bf16(1.f);
    (*pe)[1] = num::f32_to_bf16(2.f);
    (*pe)[32] = num::f32_to_bf16(3.f);
  }
  return p;
}

TEST(QkRopeReference, GptjRotatesInterleavedPairs) {
  const HostProblem p = hand_problem(false);
  const Reference r = reference(p);
  // Pair (0, 1) by angle 0: 1 * 0.5 - 2 * 0.25 and 2 * 0.5 + 1 * 0.25; element 32 pairs with 33
  // (0) by angle 16, which has cos 1 and sin 0 in this table.
  for (const auto* row : {&r.q_out, &r.kv_rows}) {
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 0], 0.0);
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 1], 1.25);
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 32], 3.0);
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 33], 0.0);
  }
  for (int d = 0; d < kNopeDim; ++d) ASSERT_EQ(r.q_out[d], num::bf16_to_f32(p.q_nope[d])) << "nope copied, d=" << d;
}

TEST(QkRopeReference, NeoxRotatesHalvesAndDiffersFromGptj) {
  const HostProblem p = hand_problem(true);
  const Reference r = reference(p);
  // Element 0 pairs with 32 by angle 0: 1 * 0.5 - 3 * 0.25 and 3 * 0.5 + 1 * 0.25; element 1 pairs
  // with 33 (0) by angle 1 (cos 1, sin 0).
  for (const auto* row : {&r.q_out, &r.kv_rows}) {
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 0], -0.25);
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 32], 1.75);
    EXPECT_DOUBLE_EQ((*row)[kNopeDim + 1], 2.0);
  }
  EXPECT_NE(r.q_out, reference(hand_problem(false)).q_out);
}

TEST(QkRopeReference, FullRopeRotatesByThePositionsRow) {
  HostProblem p = hand_problem(false);
  const Reference at_one = reference(p);
  p.positions = {0};  // row 0: the identity
  const Reference at_zero = reference(p);
  EXPECT_DOUBLE_EQ(at_zero.q_out[kNopeDim + 1], 2.0);
  EXPECT_NE(at_zero.q_out, at_one.q_out);
}

TEST(QkRopeReference, EncodedOutputsPassTheCheckForEveryDtype) {
  for (num::KvDtype kv : kDtypes)
    for (num::KvDtype q : kDtypes)
      for (RopeMode rope : {RopeMode::full, RopeMode::identity})
        for (bool neox : {false, true}) {
          const HostProblem p = make_problem(key(12, kv, q, rope, neox), Shape{0, 16, 4096, 3}, 5);
          const Reference r = reference(p);
          const Outputs out = encode(p, r);
          const Verdict v = check(p, r, out.q_out, out.kv_cache);
          EXPECT_TRUE(v.ok) << static_cast<int>(kv) << " " << static_cast<int>(q) << ": " << v.detail;
        }
}

TEST(QkRopeReference, Fp8StoresRoundOfValueOverScale) {
  HostProblem p = make_problem(key(1, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz, RopeMode::full, true, 1),
                               Shape{1, 1, 16, 0}, 3);
  p.q_nope[0] = num::f32_to_bf16(0.75f);
  p.kv_c[0] = num::f32_to_bf16(-1.25f);
  const Reference r = reference(p);
  const Outputs out = encode(p, r);
  // 0.75 / 0.02 = 37.5 and -1.25 / 0.03 = -41.7 lie between e4m3 values 4 apart: 36 and -40.
  EXPECT_EQ(out.q_out[0], num::f32_to_fp8_e4m3fnuz(0.75f / kFp8QScale));
  EXPECT_EQ(num::fp8_e4m3fnuz_to_f32(out.q_out[0]), 36.f);
  const size_t slot = static_cast<size_t>(p.slot_mapping[0]) * kRowDim;
  EXPECT_EQ(out.kv_cache[slot], num::f32_to_fp8_e4m3fn(-1.25f / kFp8KScale));
  EXPECT_EQ(num::fp8_e4m3fn_to_f32(out.kv_cache[slot]), -40.f);
  // Twin: a code that ignores the scale is out of tolerance.
  Outputs unscaled = out;
  unscaled.q_out[0] = num::f32_to_fp8_e4m3fnuz(0.75f);
  EXPECT_FALSE(check(p, r, unscaled.q_out, out.kv_cache).ok);
  EXPECT_TRUE(check(p, r, out.q_out, out.kv_cache).ok);
}

TEST(QkRopeReference, PaddedTokensAndUntouchedSlotsKeepTheirBytes) {
  const HostProblem p = make_problem(key(4, num::KvDtype::fp8_e4m3fn, num::KvDtype::bf16, RopeMode::full, false, 0),
                                     Shape{9, 4, 64, 3}, 2);
  ASSERT_EQ(std::count(p.slot_mapping.begin(), p.slot_mapping.end(), -1), 3);
  const Reference r = reference(p);
  const Outputs out = encode(p, r);
  ASSERT_TRUE(check(p, r, out.q_out, out.kv_cache).ok);
  std::set<int64_t> written(p.slot_mapping.begin(), p.slot_mapping.end());
  int64_t untouched = 0;
  while (written.count(untouched)) ++untouched;
  // A padded token's row written anyway lands in a slot no token maps to: one byte is enough.
  Outputs stray = out;
  stray.kv_cache[static_cast<size_t>(untouched) * kRowDim + 100] ^= 0x01;
  const Verdict v = check(p, r, out.q_out, stray.kv_cache);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.detail, HasSubstr("1 slot(s) that no token maps to were written"));
  EXPECT_THAT(v.detail, HasSubstr("slot " + std::to_string(untouched)));
  // A token whose row was not written keeps the canary, which is no value the reference expects.
  Outputs missing = out;
  const size_t first_written = static_cast<size_t>(p.slot_mapping[0]) * kRowDim;
  std::copy_n(p.kv_cache.begin() + static_cast<std::ptrdiff_t>(first_written), kRowDim,
              missing.kv_cache.begin() + static_cast<std::ptrdiff_t>(first_written));
  EXPECT_FALSE(check(p, r, out.q_out, missing.kv_cache).ok);
}

TEST(QkRopeReference, IdentityInputsUseAOneRowTableAndPositionsUpToTwoToTheTwenty) {
  const HostProblem p = make_problem(key(16, num::KvDtype::bf16, num::KvDtype::bf16, RopeMode::identity, true, 64),
                                     Shape{0, 1, 4096, 0}, 9);
  EXPECT_EQ(p.table_rows, 1);
  EXPECT_EQ(p.cos, std::vector<float>(kTableDim, 1.f));
  EXPECT_EQ(p.sin, std::vector<float>(kTableDim, 0.f));
  EXPECT_EQ(*std::max_element(p.positions.begin(), p.positions.end()), kIdentityMaxPosition);
  EXPECT_EQ(*std::min_element(p.positions.begin(), p.positions.end()), 0);
  // The reference of an identity rope is the input itself.
  const Reference r = reference(p);
  for (int j = 0; j < kRopeDim; ++j) EXPECT_EQ(r.q_out[kNopeDim + j], num::bf16_to_f32(p.q_pe[j]));
  // Twin: a full rope at these positions would read past its table, and is refused.
  HostProblem full = p;
  full.identity = false;
  EXPECT_THAT([&] { reference(full); }, testing::ThrowsMessage<Error>(HasSubstr("outside the 1-row table")));
}

// What a clamping kernel computes for an identity key: the full rotation by row 0 of the table
// it is given (every position clamps to it), encoded.
Outputs clamping_kernel_outputs(const HostProblem& identity_problem) {
  HostProblem as_read = identity_problem;
  as_read.identity = false;
  std::fill(as_read.positions.begin(), as_read.positions.end(), 0);
  return encode(as_read, reference(as_read));
}

TEST(QkRopeReference, IdentityTableWithCosOneHalfFailsTheCheck) {
  for (num::KvDtype kv : kDtypes)
    for (num::KvDtype q : kDtypes)
      for (bool neox : {false, true}) {
        HostProblem p = make_problem(key(8, kv, q, RopeMode::identity, neox), Shape{0, 16, 1, 2}, 4);
        const Reference r = reference(p);
        const Outputs good = clamping_kernel_outputs(p);
        EXPECT_TRUE(check(p, r, good.q_out, good.kv_cache).ok) << "control: the identity table";
        std::fill(p.cos.begin(), p.cos.end(), 0.5f);  // the mutation
        const Outputs mutated = clamping_kernel_outputs(p);
        const Verdict v = check(p, reference(p), mutated.q_out, mutated.kv_cache);
        EXPECT_FALSE(v.ok) << "cos = 0.5 passed for kv " << static_cast<int>(kv) << " q " << static_cast<int>(q);
        EXPECT_THAT(v.detail, HasSubstr("first at q_out t=0 h=0 d=512")) << "the first rope element fails";
      }
}

TEST(QkRopeReference, RejectsABf16TableWithAClearError) {
  HostProblem p = hand_problem(true);
  EXPECT_NO_THROW(reference(p));
  p.table_dtype = TableDtype::bf16;
  EXPECT_THAT([&] { reference(p); },
              testing::ThrowsMessage<Error>(HasSubstr("must be fp32; a bf16 table is rejected")));
}

TEST(QkRopeReference, RejectsInconsistentProblems) {
  const HostProblem good = make_problem(key(2, num::KvDtype::fp8_e4m3fn, num::KvDtype::bf16, RopeMode::full, false, 4),
                                        Shape{0, 4, 8, 0}, 1);
  EXPECT_NO_THROW(reference(good));
  auto rejects = [&](auto mutate, const char* message) {
    HostProblem p = good;
    mutate(p);
    EXPECT_THAT([&] { reference(p); }, testing::ThrowsMessage<Error>(HasSubstr(message)));
  };
  rejects([](HostProblem& p) { p.positions[1] = 8; }, "outside the 8-row table");
  rejects([](HostProblem& p) { p.slot_mapping[1] = p.slot_mapping[0]; }, "written by two tokens");
  rejects([](HostProblem& p) { p.slot_mapping[2] = p.num_slots; }, "the cache has");
  rejects([](HostProblem& p) { p.q_pe.pop_back(); }, "q_pe has");
  rejects([](HostProblem& p) { p.kv_dtype = num::KvDtype::bf16; }, "kv_cache (bytes)");
  rejects([](HostProblem& p) { p.q_scale = 0.5f; }, "bf16 q_out takes no scale");
}

}  // namespace
}  // namespace ktune::rope
