// The CPU reference of MLA decode: hand-computed cases, the causal mask, paging invariance,
// fp8 dequantisation, an independent naive implementation, and input validation.
#include "kernels/mla_decode/reference.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "kernels/mla_decode/inputs.hpp"

namespace ktune::mla {
namespace {

using ::testing::HasSubstr;
using num::KvDtype;

int row_bytes(KvDtype d) { return kHeadDim * num::bytes_of(d); }

// Logical key rows (raw cache bytes, [kv_len][576 * bytes]) of each request.
using Keys = std::vector<std::vector<uint8_t>>;

void put_bf16(std::vector<uint8_t>& row, int d, float x) {
  const uint16_t b = num::f32_to_bf16(x);
  row[2 * d] = static_cast<uint8_t>(b & 0xFF);
  row[2 * d + 1] = static_cast<uint8_t>(b >> 8);
}

// Lays the logical keys out in pages of `page_size`, in a shuffled page order with spare pages,
// and fills every byte no request owns (spare pages, tails of last pages) with NaN codes, so
// that reading outside the block table poisons the result. Unused block-table entries are -1.
void page_keys(HostProblem& p, const std::vector<Keys>& keys, int page_size, uint32_t seed) {
  const int rb = row_bytes(p.kv_dtype);
  p.page_size = page_size;
  p.batch = static_cast<int>(keys.size());
  p.max_pages = 1;
  int used = 0;
  p.kv_lens.clear();
  for (const auto& k : keys) {
    const int pages = (static_cast<int>(k.size()) + page_size - 1) / page_size;
    p.max_pages = std::max(p.max_pages, pages + 1);
    used += pages;
    p.kv_lens.push_back(static_cast<int32_t>(k.size()));
  }
  const int total_pages = used + 3;
  std::vector<int32_t> order(total_pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  const uint8_t nan_byte = p.kv_dtype == KvDtype::fp8_e4m3fnuz ? 0x80 : 0xFF;
  p.kv_cache.assign(static_cast<size_t>(total_pages) * page_size * rb, nan_byte);
  p.block_table.assign(static_cast<size_t>(p.batch) * p.max_pages, -1);
  int next = 0;
  for (int b = 0; b < p.batch; ++b)
    for (size_t j = 0; j < keys[b].size(); ++j) {
      const int logical_page = static_cast<int>(j) / page_size;
      int32_t& entry = p.block_table[static_cast<size_t>(b) * p.max_pages + logical_page];
      if (entry < 0) entry = order[next++];
      const size_t slot = static_cast<size_t>(entry) * page_size + j % page_size;
      std::copy(keys[b][j].begin(), keys[b][j].end(), p.kv_cache.begin() + slot * rb);
    }
}

UninitVector<uint16_t> random_q(int elems, std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 1.0f);
  UninitVector<uint16_t> q(elems);
  for (auto& x : q) x = num::f32_to_bf16(n(rng));
  return q;
}

Keys random_keys(int kv_len, KvDtype dtype, std::mt19937& rng) {
  std::normal_distribution<float> n(0.0f, 0.5f);
  Keys keys(kv_len, std::vector<uint8_t>(row_bytes(dtype)));
  for (auto& row : keys)
    for (int d = 0; d < kHeadDim; ++d) {
      const float x = n(rng);
      if (dtype == KvDtype::bf16)
        put_bf16(row, d, x);
      else if (dtype == KvDtype::fp8_e4m3fn)
        row[d] = num::f32_to_fp8_e4m3fn(x);
      else
        row[d] = num::f32_to_fp8_e4m3fnuz(x);
    }
  return keys;
}

HostProblem random_problem(std::vector<int> kv_lens, int L, int H, bool causal, KvDtype dtype, int page_size,
                           uint32_t seed) {
  std::mt19937 rng(seed);
  HostProblem p;
  p.block_len = L;
  p.heads = H;
  p.causal = causal;
  p.kv_dtype = dtype;
  p.softmax_scale = 1.0f / std::sqrt(192.0f);
  p.kv_scale = dtype == KvDtype::bf16 ? 1.0f : 0.75f;
  std::vector<Keys> keys;
  for (int len : kv_lens) keys.push_back(random_keys(len, dtype, rng));
  page_keys(p, keys, page_size, seed);
  p.q = random_q(p.batch * L * H * kHeadDim, rng);
  return p;
}

size_t row_of(const HostProblem& p, int b, int l, int h) {
  return (static_cast<size_t>(b) * p.block_len + l) * p.heads + h;
}

double q_at(const HostProblem& p, size_t row, int d) { return num::bf16_to_f32(p.q[row * kHeadDim + d]); }

float bf16_key(const std::vector<uint8_t>& row, int d) {
  return num::bf16_to_f32(static_cast<uint16_t>(row[2 * d] | (row[2 * d + 1] << 8)));
}

TEST(MlaReference, OneKeyGivesItsValueExactlyAndLseIsTheScaledScore) {
  std::mt19937 rng(1);
  HostProblem p;
  p.block_len = 1;
  p.heads = 3;
  p.softmax_scale = 0.125f;
  const Keys keys = random_keys(1, KvDtype::bf16, rng);
  page_keys(p, {keys}, 16, 1);
  p.q = random_q(p.heads * kHeadDim, rng);
  const Reference r = reference(p);
  for (int h = 0; h < p.heads; ++h) {
    double dot = 0;
    for (int d = 0; d < kHeadDim; ++d) dot += q_at(p, h, d) * bf16_key(keys[0], d);
    EXPECT_DOUBLE_EQ(r.lse[h], 0.125 * dot) << "h=" << h;
    for (int d = 0; d < kValueDim; ++d)
      ASSERT_EQ(r.o[h * kValueDim + d], bf16_key(keys[0], d)) << "h=" << h << " d=" << d;
  }
}

TEST(MlaReference, TwoKeysWithEqualScoresAverageTheirValues) {
  // q is zero on the 512 value dims, so the scores come from the shared rope dims only.
  std::mt19937 rng(2);
  HostProblem p;
  p.block_len = 1;
  p.heads = 1;
  p.softmax_scale = 0.5f;
  Keys keys = random_keys(2, KvDtype::bf16, rng);
  std::copy(keys[0].begin() + 2 * kValueDim, keys[0].end(), keys[1].begin() + 2 * kValueDim);
  page_keys(p, {keys}, 1, 2);
  p.q = random_q(kHeadDim, rng);
  std::fill(p.q.begin(), p.q.begin() + kValueDim, 0);
  const Reference r = reference(p);
  double dot = 0;
  for (int d = kValueDim; d < kHeadDim; ++d) dot += q_at(p, 0, d) * bf16_key(keys[0], d);
  EXPECT_DOUBLE_EQ(r.lse[0], 0.5 * dot + std::log(2.0));
  for (int d = 0; d < kValueDim; ++d)
    ASSERT_EQ(r.o[d], (static_cast<double>(bf16_key(keys[0], d)) + bf16_key(keys[1], d)) / 2) << d;
}

TEST(MlaReference, HandComputedSoftmaxOfTwoScores) {
  // q = e0, k1 = (1, v=10 in dim 1), k2 = (2, v=-4 in dim 1), scale 1: scores 1 and 2.
  HostProblem p;
  p.block_len = 1;
  p.heads = 1;
  p.softmax_scale = 1.0f;
  Keys keys(2, std::vector<uint8_t>(row_bytes(KvDtype::bf16), 0));
  put_bf16(keys[0], 0, 1.0f);
  put_bf16(keys[0], 1, 10.0f);
  put_bf16(keys[1], 0, 2.0f);
  put_bf16(keys[1], 1, -4.0f);
  page_keys(p, {keys}, 4, 3);
  p.q.assign(kHeadDim, 0);
  p.q[0] = num::f32_to_bf16(1.0f);
  const Reference r = reference(p);
  const double e1 = std::exp(1.0), e2 = std::exp(2.0);
  EXPECT_NEAR(r.lse[0], std::log(e1 + e2), 1e-14);
  EXPECT_NEAR(r.o[0], (1 * e1 + 2 * e2) / (e1 + e2), 1e-14);
  EXPECT_NEAR(r.o[1], (10 * e1 - 4 * e2) / (e1 + e2), 1e-14);
  EXPECT_EQ(r.o[2], 0.0);
}

TEST(MlaReference, LargeScoresStayFinite) {
  // Scores near 4000 would overflow exp() without subtracting the maximum first.
  HostProblem p;
  p.block_len = 1;
  p.heads = 1;
  p.softmax_scale = 1.0f;
  Keys keys(2, std::vector<uint8_t>(row_bytes(KvDtype::bf16), 0));
  put_bf16(keys[0], 0, 64.0f);
  put_bf16(keys[1], 0, 64.0f);
  put_bf16(keys[1], 1, 3.0f);
  page_keys(p, {keys}, 2, 4);
  p.q.assign(kHeadDim, 0);
  p.q[0] = num::f32_to_bf16(64.0f);
  const Reference r = reference(p);
  EXPECT_DOUBLE_EQ(r.lse[0], 4096.0 + std::log(2.0));
  EXPECT_DOUBLE_EQ(r.o[0], 64.0);
  EXPECT_DOUBLE_EQ(r.o[1], 1.5);
}

TEST(MlaReference, VisibleKeysFollowTheCausalContract) {
  HostProblem p;
  p.block_len = 4;
  p.kv_lens = {7, 4};
  p.causal = true;
  EXPECT_EQ(visible_keys(p, 0, 0), 4);
  EXPECT_EQ(visible_keys(p, 0, 3), 7);
  EXPECT_EQ(visible_keys(p, 1, 0), 1);
  p.causal = false;
  EXPECT_EQ(visible_keys(p, 0, 0), 7);
  EXPECT_EQ(visible_keys(p, 1, 0), 4);
}

TEST(MlaReference, CausalDiffersFromNonCausalExceptOnTheLastRowOfTheBlock) {
  const int L = 4, H = 3;
  const HostProblem causal = random_problem({9, 4}, L, H, true, KvDtype::bf16, 16, 5);
  HostProblem full = causal;
  full.causal = false;
  const Reference rc = reference(causal), rf = reference(full);
  for (int b = 0; b < 2; ++b)
    for (int l = 0; l < L; ++l)
      for (int h = 0; h < H; ++h) {
        const size_t row = row_of(causal, b, l, h);
        if (l == L - 1)
          EXPECT_EQ(rc.lse[row], rf.lse[row]) << "b=" << b << " h=" << h;
        else
          EXPECT_NE(rc.lse[row], rf.lse[row]) << "b=" << b << " l=" << l << " h=" << h;
      }
}

TEST(MlaReference, CausalAndNonCausalAgreeForSingleTokenDecode) {
  const HostProblem causal = random_problem({9, 1, 20}, 1, 4, true, KvDtype::fp8_e4m3fn, 16, 6);
  HostProblem full = causal;
  full.causal = false;
  const Reference rc = reference(causal), rf = reference(full);
  EXPECT_EQ(rc.o, rf.o);
  EXPECT_EQ(rc.lse, rf.lse);
}

TEST(MlaReference, CausalRowEqualsNonCausalDecodeOverItsVisiblePrefix) {
  // Row l of a causal block must see exactly kv_len - L + l + 1 keys: one more or one fewer
  // changes the result, so this pins the mask against off-by-one errors.
  const int L = 3, H = 2, kv_len = 11;
  std::mt19937 rng(7);
  const Keys keys = random_keys(kv_len, KvDtype::bf16, rng);
  HostProblem block;
  block.block_len = L;
  block.heads = H;
  block.causal = true;
  block.softmax_scale = 0.1f;
  page_keys(block, {keys}, 4, 7);
  block.q = random_q(L * H * kHeadDim, rng);
  const Reference rb = reference(block);
  for (int l = 0; l < L; ++l)
    for (int shift : {-1, 0, 1}) {
      const int seen = kv_len - L + l + 1 + shift;
      if (seen > kv_len) continue;
      HostProblem single;
      single.block_len = 1;
      single.heads = H;
      single.softmax_scale = block.softmax_scale;
      page_keys(single, {Keys(keys.begin(), keys.begin() + seen)}, 4, 8);
      single.q.assign(block.q.begin() + static_cast<ptrdiff_t>(l) * H * kHeadDim,
                      block.q.begin() + static_cast<ptrdiff_t>(l + 1) * H * kHeadDim);
      const Reference rs = reference(single);
      for (int h = 0; h < H; ++h) {
        if (shift == 0)
          EXPECT_EQ(rs.lse[h], rb.lse[row_of(block, 0, l, h)]) << "l=" << l << " h=" << h;
        else
          EXPECT_NE(rs.lse[h], rb.lse[row_of(block, 0, l, h)]) << "l=" << l << " h=" << h << " shift=" << shift;
      }
    }
}

TEST(MlaReference, PagingDoesNotChangeTheResult) {
  for (KvDtype dtype : {KvDtype::bf16, KvDtype::fp8_e4m3fnuz}) {
    const HostProblem base = random_problem({37, 16, 2}, 2, 5, true, dtype, 1, 9);
    const Reference expected = reference(base);
    for (int page_size : {16, 5, 64}) {
      // Same logical sequences (same seed for the values), different pages and page order.
      const HostProblem paged = random_problem({37, 16, 2}, 2, 5, true, dtype, page_size, 9);
      ASSERT_NE(paged.block_table, base.block_table);
      const Reference r = reference(paged);
      EXPECT_EQ(r.o, expected.o) << "page_size " << page_size;
      EXPECT_EQ(r.lse, expected.lse) << "page_size " << page_size;
    }
  }
}

TEST(MlaReference, PoisonedPagesAreNeverRead) {
  // Pointing one block-table entry at a spare (NaN-filled) page must show up in the output,
  // which proves the paging test above would notice a wrong gather.
  HostProblem p = random_problem({20}, 1, 2, false, KvDtype::bf16, 4, 10);
  ASSERT_TRUE(std::isfinite(reference(p).lse[0]));
  std::vector<bool> used(p.kv_cache.size() / (4 * row_bytes(p.kv_dtype)), false);
  for (int i = 0; i < 5; ++i) used[p.block_table[i]] = true;
  p.block_table[2] = static_cast<int32_t>(std::find(used.begin(), used.end(), false) - used.begin());
  EXPECT_TRUE(std::isnan(reference(p).lse[0]));
}

// The fp8 cache holds codes c with kv_scale s; the bf16 cache holds bf16(decode(c) * s), which
// is exact for s = 0.5 and s = 0.75 (at most 6 significant bits).
TEST(MlaReference, Fp8WithScaleEqualsBf16OfTheSameValues) {
  for (KvDtype dtype : {KvDtype::fp8_e4m3fn, KvDtype::fp8_e4m3fnuz}) {
    for (float scale : {0.5f, 0.75f}) {
      HostProblem fp8 = random_problem({13, 6}, 2, 3, true, dtype, 4, 11);
      fp8.kv_scale = scale;
      HostProblem bf16 = fp8;
      bf16.kv_dtype = KvDtype::bf16;
      bf16.kv_scale = 1.0f;
      bf16.kv_cache.assign(fp8.kv_cache.size() * 2, 0);
      for (size_t i = 0; i < fp8.kv_cache.size(); ++i) {
        const uint8_t c = fp8.kv_cache[i];
        const float v = dtype == KvDtype::fp8_e4m3fn ? num::fp8_e4m3fn_to_f32(c) : num::fp8_e4m3fnuz_to_f32(c);
        const uint16_t b = num::f32_to_bf16(v * scale);
        ASSERT_TRUE(std::isnan(v) || num::bf16_to_f32(b) == v * scale) << "not exact: " << v << " * " << scale;
        bf16.kv_cache[2 * i] = static_cast<uint8_t>(b & 0xFF);
        bf16.kv_cache[2 * i + 1] = static_cast<uint8_t>(b >> 8);
      }
      const Reference r8 = reference(fp8), r16 = reference(bf16);
      ASSERT_EQ(r8.o.size(), r16.o.size());
      for (size_t i = 0; i < r8.o.size(); ++i)
        ASSERT_NEAR(r8.o[i], r16.o[i], 1e-12 * (1 + std::fabs(r16.o[i]))) << i << " scale " << scale;
      for (size_t i = 0; i < r8.lse.size(); ++i) ASSERT_NEAR(r8.lse[i], r16.lse[i], 1e-12) << i;

      HostProblem unscaled = fp8;
      unscaled.kv_scale = 1.0f;
      EXPECT_GT(std::fabs(reference(unscaled).lse[0] - r8.lse[0]), 1e-3) << "kv_scale must matter";
    }
  }
}

// Straightforward transcription of the contract: one row at a time, gathering each key through
// the block table and dequantising it on the spot.
Reference naive(const HostProblem& p) {
  Reference r;
  const int rb = row_bytes(p.kv_dtype);
  auto key = [&](int b, int j, int d) {
    const int32_t page = p.block_table[static_cast<size_t>(b) * p.max_pages + j / p.page_size];
    const uint8_t* row = p.kv_cache.data() + (static_cast<size_t>(page) * p.page_size + j % p.page_size) * rb;
    switch (p.kv_dtype) {
      case KvDtype::bf16:
        return static_cast<double>(num::bf16_to_f32(static_cast<uint16_t>(row[2 * d] | (row[2 * d + 1] << 8))));
      case KvDtype::fp8_e4m3fn: return static_cast<double>(num::fp8_e4m3fn_to_f32(row[d])) * p.kv_scale;
      case KvDtype::fp8_e4m3fnuz: return static_cast<double>(num::fp8_e4m3fnuz_to_f32(row[d])) * p.kv_scale;
    }
    return 0.0;
  };
  for (int b = 0; b < p.batch; ++b)
    for (int l = 0; l < p.block_len; ++l)
      for (int h = 0; h < p.heads; ++h) {
        const size_t row = row_of(p, b, l, h);
        const int n = p.causal ? p.kv_lens[b] - p.block_len + l + 1 : p.kv_lens[b];
        std::vector<double> s(n);
        for (int j = 0; j < n; ++j) {
          for (int d = 0; d < kHeadDim; ++d) s[j] += q_at(p, row, d) * key(b, j, d);
          s[j] *= p.softmax_scale;
        }
        const double m = *std::max_element(s.begin(), s.end());
        double sum = 0;
        for (double x : s) sum += std::exp(x - m);
        r.lse.push_back(m + std::log(sum));
        for (int d = 0; d < kValueDim; ++d) {
          double acc = 0;
          for (int j = 0; j < n; ++j) acc += std::exp(s[j] - m) * key(b, j, d);
          r.o.push_back(acc / sum);
        }
      }
  return r;
}

TEST(MlaReference, MatchesANaiveTranscriptionOfTheContract) {
  struct Case {
    std::vector<int> kv_lens;
    int L, H;
    bool causal;
    KvDtype dtype;
    int page_size;
  };
  const Case cases[] = {
      {{23, 3, 40}, 3, 5, true, KvDtype::fp8_e4m3fnuz, 3},  // 15 rows: groups of 8 plus a partial one
      {{17}, 2, 8, false, KvDtype::fp8_e4m3fn, 16},
      {{5, 64}, 1, 1, true, KvDtype::bf16, 1},
  };
  uint32_t seed = 20;
  for (const auto& c : cases) {
    const HostProblem p = random_problem(c.kv_lens, c.L, c.H, c.causal, c.dtype, c.page_size, ++seed);
    const Reference got = reference(p), want = naive(p);
    ASSERT_EQ(got.o.size(), want.o.size());
    ASSERT_EQ(got.lse.size(), want.lse.size());
    for (size_t i = 0; i < want.o.size(); ++i)
      ASSERT_NEAR(got.o[i], want.o[i], 1e-12) << "seed " << seed << " o[" << i << "]";
    for (size_t i = 0; i < want.lse.size(); ++i)
      ASSERT_NEAR(got.lse[i], want.lse[i], 1e-12) << "seed " << seed << " lse[" << i << "]";
  }
}

void expect_error(const HostProblem& p, const std::string& fragment) {
  try {
    reference(p);
    ADD_FAILURE() << "no error; expected one mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(fragment));
  }
}

TEST(MlaReference, InconsistentInputsThrowNamingTheProblem) {
  const HostProblem good = random_problem({8, 5}, 2, 2, true, KvDtype::fp8_e4m3fn, 4, 30);
  ASSERT_NO_THROW(reference(good));

  HostProblem p = good;
  p.q.pop_back();
  expect_error(p, "q has 4607 elements, expected B*L*H*576 = 4608");
  p = good;
  p.kv_lens[1] = 1;
  expect_error(p, "request b=1 has kv_len 1 < block_len 2");
  p = good;
  p.kv_lens[0] = 4 * p.max_pages + 1;
  expect_error(p, "block_table has max_pages");
  p = good;
  p.block_table[p.max_pages] = -1;
  expect_error(p, "block_table[b=1][0] = -1 is outside the cache's");
  p = good;
  p.block_table[1] = 1000;
  expect_error(p, "block_table[b=0][1] = 1000 is outside the cache's");
  p = good;
  p.kv_cache.pop_back();
  expect_error(p, "not a whole number of pages");
  p = good;
  p.block_table.pop_back();
  expect_error(p, "block_table has");
  p = good;
  p.kv_lens.push_back(3);
  expect_error(p, "kv_lens has 3 entries, expected B = 2");
  p = good;
  p.page_size = 0;
  expect_error(p, "page_size=0");
  p = good;
  p.softmax_scale = NAN;
  expect_error(p, "must be finite");
  p = good;
  p.kv_dtype = KvDtype::bf16;
  p.kv_cache.resize(p.kv_cache.size() * 2);
  p.kv_scale = 2.0f;
  expect_error(p, "bf16 cache takes no scale");
}

// set_cache_element writes what request_keys reads back: the key's logical position through the
// block table, every cache format, both bytes of a bf16 value (-1.5 and 2.75 differ in both).
TEST(MlaReference, SetCacheElementIsReadBackThroughTheBlockTable) {
  for (auto dtype : {num::KvDtype::bf16, num::KvDtype::fp8_e4m3fn, num::KvDtype::fp8_e4m3fnuz}) {
    HostProblem p = make_problem({8, 1, false, dtype, 2}, Shape{100, 16, 0, false}, 3);
    const int b = 1, key = 37, dim = 500;
    const size_t row =
        static_cast<size_t>(p.block_table[static_cast<size_t>(b) * p.max_pages + key / p.page_size]) * p.page_size +
        key % p.page_size;
    for (float x : {-1.5f, 2.75f}) {
      set_cache_element(p, row * kHeadDim + dim, x);
      EXPECT_EQ(request_keys(p, b)[static_cast<size_t>(key) * kHeadDim + dim], x)
          << "cache type " << static_cast<int>(dtype);
    }
  }
}

}  // namespace
}  // namespace ktune::mla
