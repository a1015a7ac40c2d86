// The dlopen handle both backends load their vendor libraries with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <xxhash.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <fmt/format.h>

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

// The hash read in pieces is the hash of the whole file: a copy of libstdc++ (larger than one
// piece) is opened by its path and hashed both ways.
TEST(DlLibrary, ContentHashIsTheHashOfTheWholeFile) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::terminate), &info), 0);
  const auto dir = std::filesystem::path(::testing::TempDir()) / "ktune_dl_library_hash";
  std::filesystem::create_directories(dir);
  const auto copy = dir / "libcopy.so";
  std::filesystem::copy_file(info.dli_fname, copy, std::filesystem::copy_options::overwrite_existing);
  std::ifstream f(copy, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  ASSERT_GT(bytes.size(), size_t{1} << 20) << "one piece would hash it whole";

  const DlLibrary lib = DlLibrary::open_first({copy.string()});
  EXPECT_EQ(lib.content_hash(), fmt::format("{:016x}", XXH3_64bits(bytes.data(), bytes.size())));
  EXPECT_EQ(DlLibrary().content_hash(), "unreadable");
}

}  // namespace
}  // namespace ktune::backend
