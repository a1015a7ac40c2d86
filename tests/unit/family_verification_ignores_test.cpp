// The key fields a family's verification ignores (Family::fields_verification_ignores) must be
// ones its verification problems do not depend on: a sweep verifies a program once for all keys
// that differ only in them, so a field listed there wrongly would let a program pass problems it
// never ran. For each family, every verify shape's inputs are built for two keys that differ
// only in the ignored field (they must be equal) and for two that differ in a field verification
// keeps (they must not: the comparison can fail).
#include <gtest/gtest.h>

#include "kernels/mla_decode/family.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/qk_rope_cache/family.hpp"
#include "kernels/qk_rope_cache/inputs.hpp"

namespace ktune {
namespace {

constexpr uint64_t kSeed = 7;

bool same(const mla::HostProblem& a, const mla::HostProblem& b) {
  return a.batch == b.batch && a.heads == b.heads && a.block_len == b.block_len && a.causal == b.causal &&
         a.page_size == b.page_size && a.max_pages == b.max_pages && a.kv_dtype == b.kv_dtype &&
         a.kv_scale == b.kv_scale && a.q == b.q && a.kv_cache == b.kv_cache && a.block_table == b.block_table &&
         a.kv_lens == b.kv_lens;
}

bool same(const rope::HostProblem& a, const rope::HostProblem& b) {
  return a.tokens == b.tokens && a.heads == b.heads && a.page_size == b.page_size && a.num_slots == b.num_slots &&
         a.identity == b.identity && a.is_neox == b.is_neox && a.kv_dtype == b.kv_dtype && a.q_dtype == b.q_dtype &&
         a.q_nope == b.q_nope && a.q_pe == b.q_pe && a.kv_c == b.kv_c && a.k_pe == b.k_pe &&
         a.positions == b.positions && a.slot_mapping == b.slot_mapping && a.cos == b.cos && a.sin == b.sin &&
         a.kv_cache == b.kv_cache;
}

// Whether every verify shape of `a` builds the same inputs for `b`, and the shapes are the same.
template <class Ns>
bool verification_agrees(const Family& family, const Params& a, const Params& b) {
  const auto shapes = family.verify_shapes(a);
  EXPECT_FALSE(shapes.empty());
  if (shapes != family.verify_shapes(b)) return false;
  for (const Params& shape : shapes)
    if (!same(Ns::make(a, shape), Ns::make(b, shape))) return false;
  return true;
}

struct Mla {
  static mla::HostProblem make(const Params& key, const Params& shape) {
    return mla::make_problem(mla::key_of(key), mla::shape_of(shape), kSeed);
  }
};
struct Qk {
  static rope::HostProblem make(const Params& key, const Params& shape) {
    return rope::make_problem(rope::key_of(key), rope::shape_of(shape), kSeed);
  }
};

TEST(FamilyVerificationIgnores, MlaDecodeVerifiesTheSameProblemsWhateverTheBatch) {
  const Family& family = mla::mla_decode_family();
  EXPECT_EQ(family.fields_verification_ignores(), std::vector<std::string>{"batch"});
  const mla::Key key{16, 2, true, num::KvDtype::fp8_e4m3fn, 1};
  mla::Key other_batch = key, other_heads = key;
  other_batch.batch = 128;
  other_heads.heads = 8;
  EXPECT_TRUE(verification_agrees<Mla>(family, mla::to_params(key), mla::to_params(other_batch)));
  EXPECT_FALSE(verification_agrees<Mla>(family, mla::to_params(key), mla::to_params(other_heads)));
}

TEST(FamilyVerificationIgnores, QkRopeCacheVerifiesTheSameProblemsWhateverTheTokens) {
  const Family& family = rope::qk_rope_cache_family();
  EXPECT_EQ(family.fields_verification_ignores(), std::vector<std::string>{"tokens"});
  const rope::Key key{16, num::KvDtype::fp8_e4m3fn, num::KvDtype::bf16, rope::RopeMode::full, true, 64};
  rope::Key other_tokens = key, other_neox = key;
  other_tokens.tokens = 4096;
  other_neox.is_neox = false;
  EXPECT_TRUE(verification_agrees<Qk>(family, rope::to_params(key), rope::to_params(other_tokens)));
  EXPECT_FALSE(verification_agrees<Qk>(family, rope::to_params(key), rope::to_params(other_neox)));
}

}  // namespace
}  // namespace ktune
