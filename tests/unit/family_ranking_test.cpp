// Every registered family ranks its key fields for the sweep's run order (Family::ranking_fields):
// each key field once, none other, so that no key field is left out of a key's similarity.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/family.hpp"

namespace ktune {
namespace {

TEST(RankingFields, EveryFamilyRanksEachOfItsKeyFieldsOnce) {
  ASSERT_FALSE(families().empty());
  for (const Family* family : families()) {
    std::vector<std::string> ranked = family->ranking_fields();
    std::vector<std::string> keys;
    for (const auto& f : family->key_fields()) keys.push_back(f.name);
    std::sort(ranked.begin(), ranked.end());
    std::sort(keys.begin(), keys.end());
    EXPECT_EQ(ranked, keys) << family->name();
  }
}

}  // namespace
}  // namespace ktune
