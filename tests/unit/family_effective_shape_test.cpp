// Family::effective_shape: a shape's bucket field at 0 stands for the key's value, so that
// `ktune bench` can tell a database's time at the space's shape (batch=0) from one at another.
#include <gtest/gtest.h>

#include "kernels/family.hpp"

namespace ktune {
namespace {

TEST(EffectiveShape, ABucketFieldAtZeroTakesTheKeysValue) {
  const Family& mla = family("mla_decode");
  const Params key{{"heads", 16}, {"block_len", 1}, {"causal", 0}, {"kv_dtype", 0}, {"batch", 32}};
  const Params space{{"ctx", 4096}, {"page_size", 64}, {"batch", 0}, {"ragged", 0}};
  const Params explicit_batch{{"ctx", 4096}, {"page_size", 64}, {"batch", 32}, {"ragged", 0}};
  const Params other_batch{{"ctx", 4096}, {"page_size", 64}, {"batch", 8}, {"ragged", 0}};
  EXPECT_EQ(mla.effective_shape(key, space), explicit_batch);
  EXPECT_EQ(mla.effective_shape(key, explicit_batch), explicit_batch);
  EXPECT_EQ(mla.effective_shape(key, other_batch), other_batch) << "a batch given is the batch";

  const Family& rope = family("qk_rope_cache");
  ASSERT_EQ(rope.bucket_field(), "tokens");
  Params rope_key;
  for (const auto& f : rope.key_fields()) rope_key.set(f.name, f.name == "tokens" ? 64 : f.min);
  const Params rope_space{{"tokens", 0}, {"page_size", 64}, {"table_rows", 4096}, {"padded_every", 0}};
  EXPECT_EQ(rope.effective_shape(rope_key, rope_space).at("tokens"), 64);

  // An identity rope reads one table row whatever table_rows says; a full rope reads them all.
  Params full_rope = rope_key, identity = rope_key;
  full_rope.set("rope", 0);
  identity.set("rope", 1);
  Params longer_table = rope_space;
  longer_table.set("table_rows", 8192);
  EXPECT_EQ(rope.effective_shape(identity, rope_space), rope.effective_shape(identity, longer_table));
  EXPECT_NE(rope.effective_shape(full_rope, rope_space), rope.effective_shape(full_rope, longer_table));
}

}  // namespace
}  // namespace ktune
