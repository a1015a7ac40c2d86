// The backend registry: lookups by arch and by name, and the errors for what it does not know.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "backend/backend.hpp"
#include "common/error.hpp"

namespace ktune::backend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

bool built(std::string_view name) {
  for (Backend* b : all())
    if (b->name() == name) return true;
  return false;
}

std::string error_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(BackendRegistry, ListsEachBackendOnce) {
  std::set<std::string_view> names;
  for (Backend* b : all()) EXPECT_TRUE(names.insert(b->name()).second) << b->name() << " listed twice";
  EXPECT_FALSE(names.empty()) << "configure found neither cuda.h nor hip/hiprtc.h";
}

TEST(BackendRegistry, GfxArchGoesToHip) {
  if (!built("hip")) GTEST_SKIP() << "hip backend not built: hip/hiprtc.h was not found at configure time";
  EXPECT_EQ(for_arch("gfx90a").name(), "hip");
  EXPECT_EQ(for_arch("gfx942").name(), "hip");
  EXPECT_FALSE(for_arch("gfx90a").handles_arch("sm_90a"));
}

TEST(BackendRegistry, SmArchGoesToCuda) {
  if (!built("cuda")) GTEST_SKIP() << "cuda backend not built: cuda.h / nvrtc.h were not found at configure time";
  EXPECT_EQ(for_arch("sm_90a").name(), "cuda");
  EXPECT_FALSE(for_arch("sm_90a").handles_arch("gfx90a"));
}

TEST(BackendRegistry, UnknownArchNamesTheKnownPrefixes) {
  EXPECT_THROW(for_arch("tpu_v5"), Error);
  EXPECT_THAT(error_of([] { for_arch("tpu_v5"); }), AllOf(HasSubstr("'tpu_v5'"), HasSubstr("sm_"), HasSubstr("gfx")));
}

TEST(BackendRegistry, BarePrefixIsNoArch) {
  EXPECT_THROW(for_arch("gfx"), Error);
  EXPECT_THROW(for_arch("sm_"), Error);
  EXPECT_THROW(for_arch(""), Error);
}

TEST(BackendRegistry, ByNameFindsBuiltBackendsAndRejectsOthers) {
  for (Backend* b : all()) EXPECT_EQ(&by_name(b->name()), b);
  EXPECT_THAT(error_of([] { by_name("metal"); }), HasSubstr("'metal'"));
}

}  // namespace
}  // namespace ktune::backend
