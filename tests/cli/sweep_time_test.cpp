// scripts/sweep_time.py: where a sweep's time went per key group, from measured_at stamps, on a
// hand-made database whose gaps are known.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_run.hpp"

namespace ktune::testing {
namespace {

// The part of the schema the script reads, in the database named by the Python's first argument.
constexpr const char* kTable = R"py(import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE measurements (id INTEGER PRIMARY KEY, key TEXT, measured_at TEXT)")
)py";
// Rows in id order (key, seconds after 12:00:00): batch=1 keys A and B, batch=8 key C, then a
// 300 s pause (a resumed call) before C's last row.
constexpr const char* kRows =
    R"py(rows = [("heads=8,batch=1", 0.0), ("heads=8,batch=1", 0.5), ("heads=8,batch=1", 0.75),
        ("heads=16,batch=1", 2.75), ("heads=16,batch=1", 3.0),
        ("heads=8,batch=8", 7.0), ("heads=8,batch=8", 8.0), ("heads=8,batch=8", 308.0)]
for key, s in rows:
    c.execute("INSERT INTO measurements (key, measured_at) VALUES (?, ?)",
              (key, "2026-12-03T12:%02d:%06.3fZ" % (s // 60, s % 60)))
c.commit()
)py";

struct SweepTime : ScriptTest {
  // A database of `rows` (Python statements after kTable).
  std::string db(const std::string& name, const std::string& rows = kRows) {
    const std::string path = dir.path() + "/" + name;
    const auto r = run_command("python3 '" + dir.write("make.py", std::string(kTable) + rows) + "' '" + path + "'");
    EXPECT_EQ(r.status, 0) << r.output;
    return path;
  }
};

TEST_F(SweepTime, GapsBeforeEachRowByKeyGroupFirstCandidatesApart) {
  const auto r = run_command(python_script("sweep_time.py") + " '" + db("a.db") + "' --by batch");
  ASSERT_EQ(r.status, 0) << r.output;
  // batch=1: A's first row has no gap before it; B's first took 2.0 s; the others 0.5, 0.25, 0.25.
  EXPECT_TRUE(contains(r.output, "| 1 | 2 | 4 | 2.0000 | 2.0 | 0.2500 | 1.0 | 3.0 |")) << r.output;
  // batch=8: its first 4.0 s, one other 1.0 s; the 300 s pause is not a candidate's time.
  EXPECT_TRUE(contains(r.output, "| 8 | 1 | 2 | 4.0000 | 4.0 | 1.0000 | 1.0 | 5.0 |")) << r.output;
}

TEST_F(SweepTime, KeysOfAnotherDatabaseOnly) {
  const std::string shard = db(
      "shard.db",
      R"py(c.execute("INSERT INTO measurements (key, measured_at) VALUES ('heads=16,batch=1', '2026-12-04T00:00:00.000Z')")
c.commit()
)py");
  const std::string all = db("a.db");
  const auto r = run_command(python_script("sweep_time.py") + " '" + all + "' --keys-of '" + shard + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| all | 1 | 2 | 2.0000 | 2.0 | 0.2500 | 0.2 | 2.2 |")) << "key B only: " << r.output;
  const auto pause = run_command(python_script("sweep_time.py") + " '" + all + "' --max-gap 400");
  EXPECT_TRUE(contains(pause.output, "| all | 3 | 7 | 3.0000 | 6.0 | 0.5000 | 302.0 | 308.0 |"))
      << "with a longer --max-gap the pause counts: " << pause.output;
}

TEST_F(SweepTime, AnEmptyDatabaseOrAMissingFieldIsRefused) {
  const std::string empty = db("empty.db", "c.commit()\n");
  const auto r = run_command(python_script("sweep_time.py") + " '" + empty + "'");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "has no measurements")) << r.output;
  const auto field = run_command(python_script("sweep_time.py") + " '" + db("a.db") + "' --by kv_dtype");
  EXPECT_NE(field.status, 0);
  EXPECT_TRUE(contains(field.output, "has no field 'kv_dtype'")) << field.output;
}

}  // namespace
}  // namespace ktune::testing
