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

Output ktune(const db::test::TempDir& dir, const std::string& verb, const std::string& args) {
  const auto out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const int raw = std::system(fmt::format("'{}' {} {} >'{}' 2>'{}'", KTUNE_EXE, verb, args, out, err).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, db::test::read_file(out), db::test::read_file(err)};
}

Output codegen(const db::test::TempDir& dir, const std::string& args) { return ktune(dir, "codegen", args); }

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

// Runs that measured today's templates under the hash older ktune builds recorded (the whole
// rendered source, jit::source_hash): codegen's refusal names `ktune migrate` for them alone, and
// migrate gives them today's hash; a run of other templates stays stale through it.
TEST(CodegenCli, RunsOfTodaysTemplatesUnderTheOlderHashAreMigratedAndOthersStayStale) {
  db::test::TempDir dir;
  const auto path = dir.file("it's.db");  // a quote, for the command the message gives
  const std::string older = jit::source_hash(family("mla_decode").template_file());
  ASSERT_NE(older, current_hash());
  const Params config{{"rows", 32}, {"keys", 32}, {"threads", 128}, {"stages", 2}, {"split", 2}, {"math", 0}};
  {
    auto db = db::Database::open(path, true);
    const auto same = db->begin_run(db::test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", older));
    db->record(db::test::timed(same, db::test::key(16, 2, 1, 1, 32), config, 12.0));
    const auto other = db->begin_run(db::test::sample_run("mla_decode", "NVIDIA H200", "sm_90a", "feedfacefeedface"));
    db->record(db::test::timed(other, db::test::key(64, 1, 0, 0, 32), config, 20.0));
  }
  const std::string quoted = "'" + dir.path() + "/it'\\''s.db'";
  const auto out = dir.file("mla_decode_dispatch.hpp");
  const auto args = fmt::format("--db \"{}\" --kernel mla_decode --out '{}'", path, out);
  const auto before = codegen(dir, args);
  EXPECT_EQ(before.code, 1);
  EXPECT_THAT(before.err, AllOf(HasSubstr("template hash validator"), HasSubstr(older), HasSubstr("feedfacefeedface"),
                                HasSubstr("; run 1 measured these very templates"),
                                HasSubstr("`ktune migrate --db " + quoted + "` gives it today's hash")));

  const auto migrated = ktune(dir, "migrate", fmt::format("--db \"{}\"", path));
  ASSERT_EQ(migrated.code, 0) << migrated.err;
  EXPECT_THAT(migrated.out, AllOf(HasSubstr("1 run(s) of mla_decode"), HasSubstr(older),
                                  HasSubstr("template hash now " + current_hash())));
  EXPECT_THAT(migrated.out, Not(HasSubstr("qk_rope_cache")));
  const auto after = codegen(dir, args);
  EXPECT_EQ(after.code, 1);
  EXPECT_THAT(after.err, AllOf(HasSubstr("1 key(s) of mla_decode"), HasSubstr("'feedfacefeedface' (run 2)"),
                               Not(HasSubstr("ktune migrate"))));
  EXPECT_FALSE(fs::exists(out));
  {
    auto db = db::Database::open(path, false, true);
    EXPECT_EQ(db->run(1).template_hash, current_hash());
    EXPECT_EQ(db->run(2).template_hash, "feedfacefeedface");
  }
  const auto again = ktune(dir, "migrate", fmt::format("--db \"{}\"", path));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("nothing to migrate"));
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
