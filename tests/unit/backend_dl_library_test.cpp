// The dlopen handle both backends load their vendor libraries with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backend/dl_library.hpp"

namespace ktune::backend {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(DlLibrary, OpensTheFirstCandidateThatLoads) {
  DlLibrary lib = DlLibrary::open_first({"libktune_missing.so.1", "libm.so.6"});
  EXPECT_EQ(lib.path(), "libm.so.6");
  auto cosine = lib.require<double (*)(double)>("cos");
  EXPECT_DOUBLE_EQ(cosine(0.0), 1.0);
  EXPECT_EQ(lib.find("ktune_no_such_symbol"), nullptr);
}

TEST(DlLibrary, MissingLibrariesAreUnavailableNamingEachCandidate) {
  try {
    DlLibrary::open_first({"libktune_missing.so.1", "/nonexistent/libktune_other.so"});
    FAIL() << "a missing library loaded";
  } catch (const Unavailable& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("libktune_missing.so.1"), HasSubstr("/nonexistent/libktune_other.so")));
  }
}

TEST(DlLibrary, MissingSymbolIsUnavailable) {
  DlLibrary lib = DlLibrary::open_first({"libm.so.6"});
  EXPECT_THROW(lib.require<void (*)()>("ktune_no_such_symbol"), Unavailable);
}

TEST(DlLibrary, MovedFromHandleFindsNothing) {
  DlLibrary lib = DlLibrary::open_first({"libm.so.6"});
  DlLibrary moved = std::move(lib);
  EXPECT_NE(moved.find("cos"), nullptr);
  EXPECT_EQ(lib.find("cos"), nullptr);  // NOLINT(bugprone-use-after-move): the contract under test
}

}  // namespace
}  // namespace ktune::backend
