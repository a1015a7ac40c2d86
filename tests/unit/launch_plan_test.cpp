// The launch builders the tuner's DeviceInstance and the runtime share: the arguments in the
// order of each kernel's parameter list, the grids, and which launches a config makes.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "kernels/kernel_launch.hpp"
#include "kernels/mla_decode/launch.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "kernels/qk_rope_cache/launch.hpp"
#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune {
namespace {

// A distinct fake device address per argument.
template <class T>
T* address(uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

// The value argument `i` of `pointers` (a kernel's void** arguments) points at.
template <class T, class Pointers>
T argument(const Pointers& pointers, size_t i) {
  return *static_cast<const T*>(pointers.at(i));
}

TEST(KernelArguments, MangledLikeTheCompiler) {
  // g++ mangles ktune::k<0>(these) as _ZN5ktune1kILi0EEEvPKtPKhPKiPKfPKxSA_S2_PjlSB_: substitutions
  // past the tenth are numbered in base 36, builtins are never substituted.
  using Args = KernelArguments<const unsigned short*, const unsigned char*, const int*, const float*, const long long*,
                               const long long*, const unsigned short*, unsigned*, long, unsigned*>;
  EXPECT_EQ(Args::mangled(kKernelNameSubstitutions), "EvPKtPKhPKiPKfPKxSA_S2_PjlSB_");
}

mla::LaunchProblem mla_problem() {
  mla::LaunchProblem p;
  p.q = address<const uint16_t>(0x1000);
  p.kv_cache = address<const uint8_t>(0x2000);
  p.block_table = address<const int32_t>(0x3000);
  p.kv_lens = address<const int32_t>(0x4000);
  p.o = address<uint16_t>(0x5000);
  p.lse = address<float>(0x6000);
  p.part_o = address<float>(0x7000);
  p.part_lse = address<float>(0x8000);
  p.softmax_scale = 0.125f;
  p.kv_scale = 0.5f;
  p.heads = 16;
  p.block_len = 2;
  p.batch = 3;
  p.max_pages = 9;
  p.page_size = 64;
  return p;
}

mla::Config mla_config(int rows, int threads) {
  mla::Config c;
  c.rows = rows;
  c.keys = 32;
  c.threads = threads;
  c.stages = 2;
  c.split = 1;
  c.math = mla::kMathMma;
  return c;
}

TEST(MlaLaunchPlan, ArgumentsInTheOrderOfTheParameterLists) {
  const auto p = mla_problem();
  auto plan = mla::launch_plan(p, mla_config(16, 128), 40960, 3);
  const auto m = plan.main.arguments.pointers();
  static_assert(m.size() == 15);
  EXPECT_EQ(argument<const uint16_t*>(m, 0), p.q);
  EXPECT_EQ(argument<const uint8_t*>(m, 1), p.kv_cache);
  EXPECT_EQ(argument<const int32_t*>(m, 2), p.block_table);
  EXPECT_EQ(argument<const int32_t*>(m, 3), p.kv_lens);
  EXPECT_EQ(argument<uint16_t*>(m, 4), p.o);
  EXPECT_EQ(argument<float*>(m, 5), p.lse);
  EXPECT_EQ(argument<float*>(m, 6), p.part_o);
  EXPECT_EQ(argument<float*>(m, 7), p.part_lse);
  EXPECT_EQ(argument<float>(m, 8), 0.125f);
  EXPECT_EQ(argument<float>(m, 9), 0.5f);
  EXPECT_EQ(argument<int>(m, 10), 16);  // heads
  EXPECT_EQ(argument<int>(m, 11), 2);   // block_len
  EXPECT_EQ(argument<int>(m, 12), 9);   // max_pages
  EXPECT_EQ(argument<int>(m, 13), 64);  // page_size
  EXPECT_EQ(argument<int>(m, 14), 3);   // num_splits

  ASSERT_TRUE(plan.combine.has_value());
  const auto c = plan.combine->arguments.pointers();
  static_assert(c.size() == 6);
  EXPECT_EQ(argument<const float*>(c, 0), p.part_o);
  EXPECT_EQ(argument<const float*>(c, 1), p.part_lse);
  EXPECT_EQ(argument<uint16_t*>(c, 2), p.o);
  EXPECT_EQ(argument<float*>(c, 3), p.lse);
  EXPECT_EQ(argument<int>(c, 4), 3 * 2 * 16);  // total_rows: B * L * H
  EXPECT_EQ(argument<int>(c, 5), 3);
}

TEST(MlaLaunchPlan, GridIsRowTilesBySplitsByBatch) {
  struct Case {
    int heads, block_len, rows, splits, batch;
    std::array<unsigned, 3> grid;
  };
  const Case cases[] = {
      {16, 1, 64, 1, 32, {1, 1, 32}},  // one tile holds every row
      {128, 1, 64, 4, 2, {2, 4, 2}},
      {12, 3, 16, 7, 5, {3, 7, 5}},  // 36 rows: the last tile is partial
      {16, 4, 32, 2, 1, {2, 2, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "heads " << c.heads << " block_len " << c.block_len << " rows " << c.rows);
    auto p = mla_problem();
    p.heads = c.heads;
    p.block_len = c.block_len;
    p.batch = c.batch;
    const auto plan = mla::launch_plan(p, mla_config(c.rows, 256), 12345, c.splits);
    EXPECT_EQ(plan.main.shape.grid, c.grid);
    EXPECT_EQ(plan.main.shape.block, 256u);
    EXPECT_EQ(plan.main.shape.shared_bytes, 12345u);
    EXPECT_FALSE(plan.main.shape.overlaps_previous);
  }
}

TEST(MlaLaunchPlan, CombineOnlyWhenTheKeysAreSplit) {
  const auto p = mla_problem();
  EXPECT_FALSE(mla::launch_plan(p, mla_config(16, 128), 0, 1).combine.has_value());
  for (int splits : {2, 64}) {
    const auto plan = mla::launch_plan(p, mla_config(16, 128), 0, splits);
    ASSERT_TRUE(plan.combine.has_value()) << splits;
    const std::array<unsigned, 3> one_block_per_row{3 * 2 * 16, 1, 1};
    EXPECT_EQ(plan.combine->shape.grid, one_block_per_row);
    EXPECT_EQ(plan.combine->shape.block, static_cast<unsigned>(mla::kCombineThreads));
    EXPECT_EQ(plan.combine->shape.shared_bytes, 0u);
    EXPECT_TRUE(plan.combine->shape.overlaps_previous);  // it waits for the main kernel itself
  }
}

rope::LaunchProblem rope_problem(num::KvDtype q_dtype) {
  rope::LaunchProblem p;
  p.q_nope = address<const uint16_t>(0x1000);
  p.q_pe = address<const uint16_t>(0x2000);
  p.kv_c = address<const uint16_t>(0x3000);
  p.k_pe = address<const uint16_t>(0x4000);
  p.positions = address<const rope::i64>(0x5000);
  p.slot_mapping = address<const rope::i64>(0x6000);
  p.cos = address<const float>(0x7000);
  p.sin = address<const float>(0x8000);
  p.kv_cache = address<uint8_t>(0x9000);
  p.q_out = address<uint8_t>(0xa000);
  p.k_scale = 0.25f;
  p.q_scale = 2.f;
  p.tokens = 37;
  p.heads = 16;
  p.table_rows = 4096;
  p.is_neox = true;
  p.q_dtype = q_dtype;
  p.q_pe_rot = address<uint16_t>(0xb000);
  p.k_pe_rot = address<uint16_t>(0xc000);
  p.q_cat = q_dtype == num::KvDtype::bf16 ? nullptr : address<uint16_t>(0xd000);
  return p;
}

rope::Config rope_config(bool fused, rope::Layout layout = rope::Layout::token) {
  rope::Config c;
  c.layout = layout;
  c.vec = 8;
  c.tokens_per_cta = 4;
  c.threads = 128;
  c.fused = fused;
  return c;
}

TEST(RopeFusedLaunch, ArgumentsInTheOrderOfTheParameterList) {
  const auto p = rope_problem(num::KvDtype::fp8_e4m3fn);
  auto l = rope::fused_launch(p, rope_config(true));
  const auto a = l.arguments.pointers();
  static_assert(a.size() == 16);
  EXPECT_EQ(argument<const uint16_t*>(a, 0), p.q_nope);
  EXPECT_EQ(argument<const uint16_t*>(a, 1), p.q_pe);
  EXPECT_EQ(argument<const uint16_t*>(a, 2), p.kv_c);
  EXPECT_EQ(argument<const uint16_t*>(a, 3), p.k_pe);
  EXPECT_EQ(argument<const rope::i64*>(a, 4), p.positions);
  EXPECT_EQ(argument<const rope::i64*>(a, 5), p.slot_mapping);
  EXPECT_EQ(argument<const float*>(a, 6), p.cos);
  EXPECT_EQ(argument<const float*>(a, 7), p.sin);
  EXPECT_EQ(argument<uint8_t*>(a, 8), p.kv_cache);
  EXPECT_EQ(argument<uint8_t*>(a, 9), p.q_out);
  EXPECT_EQ(argument<float>(a, 10), 4.f);   // 1 / k_scale
  EXPECT_EQ(argument<float>(a, 11), 0.5f);  // 1 / q_scale
  EXPECT_EQ(argument<int>(a, 12), 37);
  EXPECT_EQ(argument<int>(a, 13), 16);
  EXPECT_EQ(argument<rope::i64>(a, 14), 4096);
  EXPECT_EQ(argument<int>(a, 15), 1);  // is_neox
}

TEST(RopeFusedLaunch, GridPerLayout) {
  const auto p = rope_problem(num::KvDtype::bf16);
  // 37 tokens, 4 per CTA: 10 CTAs along x; token_head adds one per q head and one for the cache row.
  const auto token = rope::fused_launch(p, rope_config(true, rope::Layout::token)).shape;
  EXPECT_EQ(token.grid, (std::array<unsigned, 3>{10, 1, 1}));
  EXPECT_EQ(token.block, 128u);
  EXPECT_EQ(token.shared_bytes, 0u);
  const auto token_head = rope::fused_launch(p, rope_config(true, rope::Layout::token_head)).shape;
  EXPECT_EQ(token_head.grid, (std::array<unsigned, 3>{10, 17, 1}));
  EXPECT_EQ(token_head.block, 128u);
}

TEST(RopeUnfusedLaunches, SequenceForABf16QOut) {
  const auto p = rope_problem(num::KvDtype::bf16);
  auto u = rope::unfused_launches(p, rope_config(false));
  EXPECT_FALSE(u.quantise.has_value());  // the concatenation is q_out itself
  const int64_t q_rows = 37 * 16;
  auto blocks = [](int64_t items) { return static_cast<unsigned>((items + 127) / 128); };

  const auto r = u.rope.arguments.pointers();
  static_assert(r.size() == 11);
  EXPECT_EQ(argument<const uint16_t*>(r, 0), p.q_pe);
  EXPECT_EQ(argument<const uint16_t*>(r, 1), p.k_pe);
  EXPECT_EQ(argument<const rope::i64*>(r, 2), p.positions);
  EXPECT_EQ(argument<const float*>(r, 3), p.cos);
  EXPECT_EQ(argument<const float*>(r, 4), p.sin);
  EXPECT_EQ(argument<uint16_t*>(r, 5), p.q_pe_rot);
  EXPECT_EQ(argument<uint16_t*>(r, 6), p.k_pe_rot);
  EXPECT_EQ(argument<int>(r, 7), 37);
  EXPECT_EQ(argument<int>(r, 8), 16);
  EXPECT_EQ(argument<rope::i64>(r, 9), 4096);
  EXPECT_EQ(argument<int>(r, 10), 1);
  EXPECT_EQ(u.rope.shape.grid, (std::array<unsigned, 3>{blocks((q_rows + 37) * (rope::kRopeDim / 8)), 1, 1}));

  const auto c = u.cache.arguments.pointers();
  static_assert(c.size() == 6);
  EXPECT_EQ(argument<const uint16_t*>(c, 0), p.kv_c);
  EXPECT_EQ(argument<const uint16_t*>(c, 1), p.k_pe_rot);
  EXPECT_EQ(argument<const rope::i64*>(c, 2), p.slot_mapping);
  EXPECT_EQ(argument<uint8_t*>(c, 3), p.kv_cache);
  EXPECT_EQ(argument<float>(c, 4), 4.f);
  EXPECT_EQ(argument<int>(c, 5), 37);
  EXPECT_EQ(u.cache.shape.grid, (std::array<unsigned, 3>{blocks(37 * (rope::kRowDim / 8)), 1, 1}));

  const auto k = u.concat.arguments.pointers();
  static_assert(k.size() == 5);
  EXPECT_EQ(argument<const uint16_t*>(k, 0), p.q_nope);
  EXPECT_EQ(argument<const uint16_t*>(k, 1), p.q_pe_rot);
  EXPECT_EQ(argument<uint16_t*>(k, 2), reinterpret_cast<uint16_t*>(p.q_out));
  EXPECT_EQ(argument<int>(k, 3), 37);
  EXPECT_EQ(argument<int>(k, 4), 16);
  EXPECT_EQ(u.concat.shape.grid, (std::array<unsigned, 3>{blocks(q_rows * (rope::kRowDim / 8)), 1, 1}));

  for (const LaunchShape* s : {&u.rope.shape, &u.cache.shape, &u.concat.shape}) {
    EXPECT_EQ(s->block, 128u);
    EXPECT_EQ(s->shared_bytes, 0u);
    EXPECT_FALSE(s->overlaps_previous);
  }
}

TEST(RopeUnfusedLaunches, AnFp8QOutIsQuantisedFromTheConcatenation) {
  for (auto q_dtype : {num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz}) {
    const auto p = rope_problem(q_dtype);
    auto u = rope::unfused_launches(p, rope_config(false));
    EXPECT_EQ(argument<uint16_t*>(u.concat.arguments.pointers(), 2), p.q_cat);
    ASSERT_TRUE(u.quantise.has_value());
    const auto q = u.quantise->arguments.pointers();
    static_assert(q.size() == 4);
    const int64_t elements = 37 * 16 * rope::kRowDim;
    EXPECT_EQ(argument<const uint16_t*>(q, 0), p.q_cat);
    EXPECT_EQ(argument<uint8_t*>(q, 1), p.q_out);
    EXPECT_EQ(argument<float>(q, 2), 0.5f);
    EXPECT_EQ(argument<rope::i64>(q, 3), elements);
    EXPECT_EQ(u.quantise->shape.grid,
              (std::array<unsigned, 3>{static_cast<unsigned>((elements / 8 + 127) / 128), 1, 1}));
    EXPECT_EQ(u.quantise->shape.block, 128u);
  }
}

}  // namespace
}  // namespace ktune
