// The worker's cache of loaded code objects: one load per distinct code object, byte for byte,
// the least recently used dropped beyond the capacity, and nothing kept of a code object that
// does not load.
#include "sweep/module_cache.hpp"

#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep_test_support.hpp"

namespace ktune::sweep {
namespace {
using testing::FakeContext;

std::span<const char> bytes(const std::string& s) { return {s.data(), s.size()}; }

TEST(ModuleCache, EachCodeObjectLoadsOnce) {
  FakeContext ctx;
  ModuleCache cache(4);
  const std::string a = "value=1 us=1", b = "value=2 us=1";
  backend::Module& first = cache.load(ctx, bytes(a));
  EXPECT_EQ(&cache.load(ctx, bytes(a)), &first) << "the same module again";
  EXPECT_EQ(ctx.loads, 1);
  EXPECT_NE(&cache.load(ctx, bytes(b)), &first);
  EXPECT_EQ(ctx.loads, 2);
  const std::string a_prefix = "value=1 us=1 ";  // a's bytes and one more: another code object
  cache.load(ctx, bytes(a_prefix));
  EXPECT_EQ(ctx.loads, 3) << "equal bytes, not an equal prefix";
}

TEST(ModuleCache, TheLeastRecentlyUsedGoesBeyondTheCapacity) {
  FakeContext ctx;
  ModuleCache cache(2);
  const std::string a = "value=1", b = "value=2", c = "value=3";
  cache.load(ctx, bytes(a));
  cache.load(ctx, bytes(b));
  cache.load(ctx, bytes(a));  // b is now the least recently used
  cache.load(ctx, bytes(c));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(ctx.loads, 3);
  cache.load(ctx, bytes(a));
  EXPECT_EQ(ctx.loads, 3) << "a stayed";
  cache.load(ctx, bytes(b));
  EXPECT_EQ(ctx.loads, 4) << "b went, so it loads again";
}

TEST(ModuleCache, ACodeObjectThatDoesNotLoadIsNotKept) {
  FakeContext ctx;
  ModuleCache cache(2);
  const std::string broken = "broken";
  EXPECT_THROW(cache.load(ctx, bytes(broken)), Error);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_THROW(cache.load(ctx, bytes(broken)), Error) << "tried again, fails again";
}

}  // namespace
}  // namespace ktune::sweep
