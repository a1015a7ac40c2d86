// scripts/run_order.py: a key's first candidate against its best under the previous-key and the
// ranked run orders, on a hand-made database whose answers are worked out below.
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_run.hpp"

namespace ktune::testing {
namespace {

// Plan (heads, kv_dtype): (32, 0), (32, 1), (16, 0), (16, 1). Config a takes 10 us with kv_dtype 0
// and 20 with 1; b 20 and 5.
constexpr const char* kMake = R"py(import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE measurements (id INTEGER PRIMARY KEY, key TEXT, config TEXT, status TEXT, median_us REAL)")
for key in ["heads=32,kv_dtype=0", "heads=32,kv_dtype=1", "heads=16,kv_dtype=0", "heads=16,kv_dtype=1"]:
    fp8 = key.endswith("1")
    for config, us in [("a", 20.0 if fp8 else 10.0), ("b", 5.0 if fp8 else 20.0), ("c", None)]:
        c.execute("INSERT INTO measurements (key, config, status, median_us) VALUES (?, ?, ?, ?)",
                  (key, config, "verify_failed" if us is None else "ok", us))
c.commit()
)py";

struct RunOrder : ScriptTest {
  const std::string database = make();
  std::string make() {
    const std::string path = dir.path() + "/r.db";
    const auto r = run_command("python3 '" + dir.write("make.py", kMake) + "' '" + path + "'");
    EXPECT_EQ(r.status, 0) << r.output;
    return path;
  }
  CliResult run(const std::string& args) {
    return run_command(python_script("run_order.py") + " '" + database + "' " + args);
  }
};

TEST_F(RunOrder, PreviousKeyAgainstTheMostSimilar) {
  const auto r = run("--fields kv_dtype,heads");
  ASSERT_EQ(r.status, 0) << r.output;
  // previous: (32, 1) after (32, 0) runs a first, 20 / 5; (16, 0) after (32, 1) runs b, 20 / 10;
  // (16, 1) after (16, 0) runs a, 20 / 5: (4 x 2 x 4)^(1/3).
  EXPECT_TRUE(contains(r.output, "| previous | 3 | 3.175 | 3 |")) << r.output;
  // ranked: (32, 1) has only (32, 0) before it, 4; (16, 0) follows (32, 0) and (16, 1) follows
  // (32, 1), each first candidate its best.
  EXPECT_TRUE(contains(r.output, "| ranked | 3 | 1.587 | 1 |")) << r.output;
  // Ranked by heads first, (16, 0)'s most similar is (32, 0) still (equal kv_dtype breaks the
  // tie of no equal heads), and (16, 1)'s is (16, 0): a, 20 / 5.
  const auto heads = run("--fields heads,kv_dtype");
  EXPECT_TRUE(contains(heads.output, "| ranked | 3 | 2.520 | 2 |")) << heads.output;
}

TEST_F(RunOrder, AShardsPreviousKeyIsTheShardsPrevious) {
  const auto r = run("--fields kv_dtype,heads --shard 1/2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| previous | 1 | 1.000 | 0 |")) << "(16, 1) after (32, 1): " << r.output;
}

TEST_F(RunOrder, AFieldNoKeyHasIsRefused) {
  const auto r = run("--fields kv_dtype,rows");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "has no field 'rows'")) << r.output;
}

}  // namespace
}  // namespace ktune::testing
