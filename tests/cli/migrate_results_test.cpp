// scripts/migrate_results.sh over a results tree of two dumps written the way sweep_results.sh
// writes them on the GPU machine (Python's iterdump): one whose run measured today's mla_decode
// templates under their whole-source hash becomes byte for byte the dump of the same run under
// today's hash, with the header codegen makes of it; one of other templates is left untouched.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_run.hpp"
#include "db/database.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::testing {
namespace {
namespace fs = std::filesystem;

class MigrateResults : public ScriptTest {
 protected:
  // A database of one run of `family` under `hash`, with a winner for mla_decode.
  std::string database(const std::string& name, const std::string& family, const std::string& hash) {
    const auto path = dir.file(name);
    auto db = db::Database::open(path, true);
    const auto run = db->begin_run(db::test::sample_run(family, "NVIDIA H200", "sm_90a", hash));
    if (family == "mla_decode")
      db->record(db::test::timed(
          run, db::test::key(16, 2, 1, 1, 32),
          Params{{"rows", 32}, {"keys", 32}, {"threads", 128}, {"stages", 2}, {"split", 2}, {"math", 0}}, 12.0));
    return path;
  }
  // The dump of a copy of `db` whose runs carry `hash`, at `out`, as sweep_results.sh writes it
  // where the sqlite3 shell is absent.
  void dump(const std::string& db, const std::string& hash, const std::string& out) {
    const auto copy = out + ".db";
    fs::copy_file(db, copy);
    const auto r =
        run_command("python3 -c 'import sqlite3,sys; c = sqlite3.connect(sys.argv[1]); c.execute(\"UPDATE runs SET "
                    "template_hash = ?\", (sys.argv[2],)); c.commit(); print(\"\\n\".join(c.iterdump()))' '" +
                    copy + "' " + hash + " >'" + out + "'");
    ASSERT_EQ(r.status, 0) << r.output;
    fs::remove(copy);
  }
};

TEST_F(MigrateResults, AdoptsRunsOfTodaysKernelsAndLeavesOtherDumpsUntouched) {
  const auto file = family("mla_decode").template_file();
  const std::string today = jit::template_hash(file), older = jit::source_hash(file);
  ASSERT_NE(today, older);
  const std::string results = dir.path() + "/results", device = results + "/nvidia-h200";
  fs::create_directories(device + "/default");
  // What the dump and header must become.
  const auto current = database("current.db", "mla_decode", today);
  dump(current, today, dir.file("expected.sql"));
  const auto made =
      run_ktune("codegen --db '" + current + "' --kernel mla_decode --out '" + dir.file("expected.hpp") + "'");
  ASSERT_EQ(made.status, 0) << made.output;
  // The committed text: the same run under the older hash, its header made by an older ktune.
  dump(current, older, device + "/default/mla_decode.sql");
  db::test::write_file(device + "/default/mla_decode_dispatch.hpp", "// an older header\n");
  dump(database("other.db", "qk_rope_cache", "feedfacefeedface"), "feedfacefeedface", device + "/qk_rope_cache.sql");
  const auto other = db::test::read_file(device + "/qk_rope_cache.sql");
  db::test::write_file(device + "/qk_rope_cache_dispatch.hpp", "// a header of other templates\n");

  const auto r = run_command("KTUNE='" + ktune_exe() + "' KTUNE_RESULTS_DIR='" + results +
                             "' '" KTUNE_SOURCE_DIR "/scripts/migrate_results.sh'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(
      contains(r.output, "1 run(s) of mla_decode under template hash " + older + " measured these very templates"))
      << r.output;
  EXPECT_TRUE(contains(r.output, device + "/qk_rope_cache.sql: nothing adopted, left as it is")) << r.output;
  EXPECT_EQ(db::test::read_file(device + "/default/mla_decode.sql"), db::test::read_file(dir.file("expected.sql")));
  EXPECT_EQ(db::test::read_file(device + "/default/mla_decode_dispatch.hpp"),
            db::test::read_file(dir.file("expected.hpp")));
  EXPECT_EQ(db::test::read_file(device + "/qk_rope_cache.sql"), other);
  EXPECT_EQ(db::test::read_file(device + "/qk_rope_cache_dispatch.hpp"), "// a header of other templates\n");
}

}  // namespace
}  // namespace ktune::testing
