// `ktune codegen` end to end on mla_decode databases written through the db API: what it
// writes and prints, and its refusals (exit code, message, the previous header left untouched).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::dispatch {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

struct Output {
  int code = -1;
  std::string out, err;
};

Output codegen(const db::test::TempDir& dir, const std::string& args) {
  const auto out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const int raw = std::system(fmt::format("'{}' codegen {} >'{}' 2>'{}'", KTUNE_EXE, args, out, err).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, db::test::read_file(out), db::test::read_file(err)};
}

std::string current_hash() { return jit::template_hash(family("mla_decode").template_file()); }

// mla_decode results of one run per device: two keys with a winner each, and a declared gap.
std::string mla_db(const db::test::TempDir& dir, const std::string& hash,
                   const std::vector<std::string>& devices = {"NVIDIA H200"}) {
  const auto path = dir.file("mla.db");
  auto db = db::Database::open(path, true);
  const Params config{{"rows", 32}, {"keys", 32}, {"threads", 128}, {"stages", 2}, {"split", 2}, {"math", 0}};
  for (const auto& device : devices) {
    const auto run = db->begin_run(db::test::sample_run("mla_decode", device, "sm_90a", hash));
    db->record(db::test::timed(run, db::test::key(16, 2, 1, 1, 32), config, 12.0));
    db->record(db::test::timed(run, db::test::key(64, 1, 0, 0, 32), config, 20.0));
  }
  db->add_gap(db::test::declared_gap("sm_90a", db::test::key(16, 2, 0, 1, 32),
                                     db::test::key(16, 4, 0, 1, 32).canonical(), "pad the block to 4 tokens"));
  return path;
}

size_t files_in(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(CodegenCli, WritesTheHeaderAndSaysWhatIsInIt) {
  db::test::TempDir dir;
  const auto db = mla_db(dir, current_hash());
  const auto out = dir.file("mla_decode_dispatch.hpp");
  const auto r = codegen(dir, fmt::format("--db '{}' --kernel mla_decode --out '{}'", db, out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("wrote " + out), HasSubstr("sm_90a: 3 entries (2 kernel(s), 1 gap(s)) from run(s) 1")));
  const auto header = db::test::read_file(out);
  EXPECT_THAT(header, AllOf(HasSubstr("namespace ktune_dispatch::mla_decode {"), HasSubstr("kTableSize = 3;")));
  // Same database, same bytes.
  ASSERT_EQ(codegen(dir, fmt::format("--db '{}' --kernel mla_decode --out '{}'", db, dir.file("again.hpp"))).code, 0);
  EXPECT_EQ(db::test::read_file(dir.file("again.hpp")), header);
}

TEST(CodegenCli, StaleResultsAreRefusedAndTheOldHeaderStays) {
  db::test::TempDir dir;
  const auto db = mla_db(dir, "feedfacefeedface");
  fs::create_directory(dir.file("include"));
  const auto out = dir.file("include/mla_decode_dispatch.hpp");
  db::test::write_file(out, "previous header\n");
  const auto r = codegen(dir, fmt::format("--db '{}' --kernel mla_decode --out '{}'", db, out));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, AllOf(HasSubstr("template hash validator"), HasSubstr("feedfacefeedface"),
                           HasSubstr(current_hash()), HasSubstr("--allow-stale")));
  EXPECT_EQ(db::test::read_file(out), "previous header\n");
  EXPECT_EQ(files_in(dir.file("include")), 1u);  // no temporary file left behind
  const auto allowed = codegen(dir, fmt::format("--db '{}' --kernel mla_decode --allow-stale --out '{}'", db, out));
  EXPECT_EQ(allowed.code, 0) << allowed.err;
  EXPECT_THAT(db::test::read_file(out), HasSubstr("template hash feedfacefeedface"));
}

TEST(CodegenCli, MixedDevicesAreRefusedUntilOneIsChosen) {
  db::test::TempDir dir;
  const auto db = mla_db(dir, current_hash(), {"NVIDIA H200", "NVIDIA H100"});
  const auto out = dir.file("mla_decode_dispatch.hpp");
  const auto r = codegen(dir, fmt::format("--db '{}' --kernel mla_decode --out '{}'", db, out));
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err,
              AllOf(HasSubstr("device validator"), HasSubstr("'NVIDIA H100' (run 2)"), HasSubstr("--device NAME")));
  EXPECT_FALSE(fs::exists(out));
  const auto chosen =
      codegen(dir, fmt::format("--db '{}' --kernel mla_decode --device 'NVIDIA H100' --out '{}'", db, out));
  EXPECT_EQ(chosen.code, 0) << chosen.err;
  EXPECT_THAT(db::test::read_file(out), AllOf(HasSubstr("device 'NVIDIA H100'"), Not(HasSubstr("NVIDIA H200"))));
}

TEST(CodegenCli, UnknownFamilyAndMissingDatabaseAreErrors) {
  db::test::TempDir dir;
  const auto db = mla_db(dir, current_hash());
  const auto family = codegen(dir, fmt::format("--db '{}' --kernel no_such --out '{}'", db, dir.file("x.hpp")));
  EXPECT_EQ(family.code, 1);
  EXPECT_THAT(family.err, AllOf(HasSubstr("no_such"), HasSubstr("mla_decode")));
  const auto missing =
      codegen(dir, fmt::format("--db '{}' --kernel mla_decode --out '{}'", dir.file("none.db"), dir.file("x.hpp")));
  EXPECT_NE(missing.code, 0);
  EXPECT_FALSE(fs::exists(dir.file("x.hpp")));
}

}  // namespace
}  // namespace ktune::dispatch
