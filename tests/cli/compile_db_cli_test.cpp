// `ktune compile --db` end to end with hipRTC for gfx90a (no device): a compile-only run recorded,
// listed by `ktune query --compiled` with the kernels' resources and marked as not measured, never
// taken for a measurement by query, gaps or codegen, resumed without recording twice; and the
// database failures (a missing folder, a file that is not a ktune database, a read-only file, a
// newer schema) refused before anything is compiled, leaving the file as it was.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_run.hpp"

namespace ktune::testing {
namespace {
namespace fs = std::filesystem;

// One key of qk_rope_cache and four of its configs (two fused, two unfused): a few seconds of hipRTC.
const std::string kSmall =
    "compile --kernel qk_rope_cache --space smoke --arch gfx90a --heads 16 --where q_dtype=bf16 --where rope=full "
    "--where tokens=64 --where layout=token --where vec=8 --where tokens_per_cta=1 --where clamp=1 --where threads=128";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(CompileDbCli, RecordsACompileOnlyRunThatNoReaderTakesForAMeasurement) {
  CliTempDir tmp;
  const std::string env = "KTUNE_CACHE_DIR=" + tmp.path() + "/cache";
  const std::string db = tmp.path() + "/c.db";
  auto r = run_ktune(kSmall + " --db " + db, env);
  SKIP_WITHOUT_COMPILER(r, "gfx90a");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "compile: run 1 (compile-only: nothing was run or timed): ")) << r.output;
  EXPECT_TRUE(contains(r.output, "resources: ktune::qk_rope_cache: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "resources: ktune::unfused_rope: ")) << r.output;

  auto listed = run_ktune("query --compiled --format json --db " + db);
  ASSERT_EQ(listed.status, 0) << listed.output;
  const auto rows = nlohmann::json::parse(listed.output);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row["measured"], "no: compile-only");
    EXPECT_EQ(row["arch"], "gfx90a");
    EXPECT_EQ(row["status"], "ok");
    EXPECT_GT(row["vgprs"].get<int>(), 0) << row.dump();
    EXPECT_GT(row["sgprs"].get<int>(), 0) << row.dump();
    EXPECT_EQ(row["scratch_bytes"], 0) << row.dump();
    EXPECT_GE(row["waves_per_simd"].get<int>(), 1) << row.dump();
  }

  auto measured = run_ktune("query --db " + db);
  EXPECT_EQ(measured.status, 0) << measured.output;
  EXPECT_TRUE(contains(measured.output, "no matching rows")) << measured.output;
  auto winners = run_ktune("query --winners --db " + db);
  EXPECT_TRUE(contains(winners.output, "no matching rows")) << winners.output;
  auto gaps = run_ktune("gaps --db " + db);
  EXPECT_TRUE(contains(gaps.output, "no matching rows")) << gaps.output;
  auto codegen = run_ktune("codegen --kernel qk_rope_cache --db " + db + " --out " + tmp.path() + "/d.hpp");
  EXPECT_EQ(codegen.status, 1) << codegen.output;
  EXPECT_TRUE(contains(codegen.output, "has no results of qk_rope_cache")) << codegen.output;

  std::smatch planned;
  ASSERT_TRUE(std::regex_search(r.output, planned, std::regex(R"(; 1 keys, (\d+) candidates)"))) << r.output;
  auto again = run_ktune(kSmall + " --db " + db + " --resume", env);
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "compile: run 1 (resumed) (compile-only: nothing was run or timed): 0 rows "
                                     "recorded, " +
                                         planned[1].str() + " candidates done before"))
      << again.output;
  auto fresh = run_ktune(kSmall + " --db " + db, env);
  EXPECT_TRUE(contains(fresh.output, "compile: run 2 (compile-only")) << "without --resume, a run of its own";
}

TEST(CompileDbCli, DatabaseFailuresAreRefusedBeforeCompilingAndLeaveTheFile) {
  CliTempDir tmp;
  const std::string env = "KTUNE_CACHE_DIR=" + tmp.path() + "/cache";
  auto missing_folder = run_ktune(kSmall + " --db " + tmp.path() + "/no/such/folder/c.db", env);
  SKIP_WITHOUT_COMPILER(missing_folder, "gfx90a");
  EXPECT_EQ(missing_folder.status, 1) << missing_folder.output;
  EXPECT_TRUE(contains(missing_folder.output, tmp.path() + "/no/such/folder/c.db")) << missing_folder.output;
  EXPECT_FALSE(contains(missing_folder.output, "programs:")) << "nothing is compiled: " << missing_folder.output;

  const std::string text = tmp.path() + "/notes.db";
  std::ofstream(text) << "not a database\n";
  auto not_sqlite = run_ktune(kSmall + " --db " + text, env);
  EXPECT_EQ(not_sqlite.status, 1) << not_sqlite.output;
  EXPECT_EQ(file_bytes(text), "not a database\n");

  const std::string newer = tmp.path() + "/newer.db";
  {
    SQLite::Database raw(newer, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("CREATE TABLE meta (id INTEGER PRIMARY KEY, schema_version INTEGER NOT NULL, created_by TEXT NOT NULL);"
             "INSERT INTO meta VALUES (1, 999, 'ktune 9');");
  }
  const auto newer_bytes = file_bytes(newer);
  auto too_new = run_ktune(kSmall + " --db " + newer, env);
  EXPECT_EQ(too_new.status, 1) << too_new.output;
  EXPECT_TRUE(contains(too_new.output, "upgrade ktune")) << too_new.output;
  EXPECT_EQ(file_bytes(newer), newer_bytes);

  auto resume_alone = run_ktune(kSmall + " --resume", env);
  EXPECT_NE(resume_alone.status, 0);
  EXPECT_TRUE(contains(resume_alone.output, "--resume requires --db")) << resume_alone.output;

  if (::geteuid() == 0) GTEST_SKIP() << "root writes read-only files; the read-only case needs another user";
  const std::string read_only = tmp.path() + "/ro.db";
  ASSERT_EQ(run_ktune(kSmall + " --db " + read_only, env).status, 0);
  ::chmod(read_only.c_str(), 0444);
  const auto before = file_bytes(read_only);
  auto refused = run_ktune(kSmall + " --db " + read_only, env);
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_TRUE(contains(refused.output, read_only)) << refused.output;
  EXPECT_EQ(file_bytes(read_only), before);
}

}  // namespace
}  // namespace ktune::testing
