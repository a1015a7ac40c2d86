// `ktune compile --db`'s compile-only runs on the toy family: one row per kernel of each candidate
// (a failed program's candidates as compile_error rows), batches committed as they compile, so that a
// compile stopped half-way keeps what it recorded and --resume finishes it as one uninterrupted run
// would, and never continues another shard's run.
#include <atomic>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/database.hpp"
#include "sweep/compile_run.hpp"
#include "sweep_toy.hpp"

namespace ktune::testing {
namespace {

using ::testing::HasSubstr;

// The fake compiler, which stops being able to run after `works_for` programs.
class StoppingCompiler : public jit::Compiler {
 public:
  explicit StoppingCompiler(int works_for) : works_for_(works_for) {}
  std::string version() const override { return inner_.version(); }
  backend::CompileResult compile(const backend::CompileRequest& req) const override {
    if (calls_++ >= works_for_) throw jit::CompilerUnavailable("the compile worker was killed");
    return inner_.compile(req);
  }

 private:
  FakeCompiler inner_;
  int works_for_;
  mutable std::atomic<int> calls_{0};
};

db::Run compile_provenance() {
  auto r = ToySweep::provenance();
  r.kind = db::RunKind::compile;
  r.device_name = "";
  return r;
}

sweep::CompileRunSummary compile(ToySweep& toy, db::Database* db, const sweep::Space& space,
                                 const jit::Compiler& compiler, sweep::CompileRunOptions options = {}) {
  jit::CompileSettings cs;
  cs.arch = "sm_90a";
  cs.jobs = 1;
  return sweep::run_compile(space, db, compile_provenance(), compiler, cs, options);
}

std::set<std::pair<std::string, std::string>> recorded(db::Database& db) {
  std::set<std::pair<std::string, std::string>> out;
  for (const auto& k : db.compiled_kernels()) out.insert({k.key.canonical(), k.config.canonical()});
  return out;
}

TEST(SweepCompileRun, RecordsEveryCandidateOnceWithItsStatus) {
  ToySweep toy("exit 1");
  auto db = db::Database::open(toy.tmp.path() + "/c.db", true);
  // heads 4: rows 16 only (rows > 4 * heads is infeasible); heads 32: rows 16, 64 and 99, which fails.
  const auto space = toy.space({4, 32}, {16, 64, 99}, {1, 2});
  sweep::CompileRunOptions options;
  options.batch_candidates = 3;
  const auto s = compile(toy, db.get(), space, toy.compiler, options);
  EXPECT_GT(s.run_id, 0);
  EXPECT_EQ(s.candidates, 8u);
  EXPECT_EQ(s.infeasible, 4u);
  EXPECT_EQ(s.rows, 8u);
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_EQ(s.failures.front().candidates, 2u) << "rows=99 in both stages";
  const auto rows = db->compiled_kernels();
  ASSERT_EQ(rows.size(), 8u);
  size_t failed = 0;
  for (const auto& r : rows) {
    EXPECT_EQ(r.arch, "sm_90a");
    if (r.status == db::Status::compile_error) {
      ++failed;
      EXPECT_THAT(r.detail, HasSubstr("bad tile"));
    } else {
      EXPECT_EQ(r.symbol, "lowered " + r.kernel);
      EXPECT_FALSE(r.resources.vgprs) << "ktune reads no resources of NVIDIA code objects";
    }
  }
  EXPECT_EQ(failed, 2u);
  ASSERT_EQ(s.kinds.size(), 1u);
  EXPECT_EQ(s.kinds.front().kind, "toy");
  EXPECT_EQ(s.kinds.front().kernels, 6u);
  EXPECT_EQ(s.kinds.front().read, 0u);
  EXPECT_TRUE(db->runs().empty()) << "a compile-only run is no sweep";
}

TEST(SweepCompileRun, WithoutADatabaseRecordsNothing) {
  ToySweep toy("exit 1");
  const auto s = compile(toy, nullptr, toy.space({16}, {16, 64}, {1}), toy.compiler);
  EXPECT_EQ(s.run_id, 0);
  EXPECT_EQ(s.rows, 0u);
  EXPECT_EQ(s.stats.programs, 2u);
}

TEST(SweepCompileRun, AStoppedCompileKeepsItsBatchesAndResumeFinishesIt) {
  ToySweep toy("exit 1");
  // 12 candidates of 6 programs; a batch is whole keys of at least 4 candidates: one key.
  const auto space = toy.space({16, 32}, {16, 32, 64}, {1, 2});
  sweep::CompileRunOptions options;
  options.batch_candidates = 4;

  auto whole = db::Database::open(toy.tmp.path() + "/whole.db", true);
  compile(toy, whole.get(), space, toy.compiler, options);

  auto db = db::Database::open(toy.tmp.path() + "/c.db", true);
  StoppingCompiler stops(3);  // the first batch (key 16) needs 6 programs
  EXPECT_THROW(compile(toy, db.get(), space, stops, options), jit::CompilerUnavailable);
  EXPECT_TRUE(db->compiled_kernels().empty()) << "the batch in flight is not recorded in part";

  StoppingCompiler later(8);  // the first batch, then not all of the second
  EXPECT_THROW(compile(toy, db.get(), space, later, options), jit::CompilerUnavailable);
  // Each attempt starts its own run without --resume; the second kept its first batch.
  const auto kept = db->compiled_kernels();
  ASSERT_EQ(kept.size(), 6u);

  options.resume = true;
  const auto s = compile(toy, db.get(), space, toy.compiler, options);
  EXPECT_TRUE(s.resumed);
  EXPECT_EQ(s.run_id, kept.front().run_id) << "the newest compatible run is continued";
  EXPECT_EQ(s.already_done, 6u);
  EXPECT_EQ(s.candidates, 6u);
  db::Filter of_run;
  of_run.run_id = s.run_id;
  EXPECT_EQ(db->compiled_kernels(of_run).size(), 12u) << "nothing recorded twice, nothing left out";
  EXPECT_EQ(recorded(*db), recorded(*whole));

  const auto again = compile(toy, db.get(), space, toy.compiler, options);
  EXPECT_EQ(again.candidates, 0u);
  EXPECT_EQ(again.already_done, 12u);
}

TEST(SweepCompileRun, ResumeNeverContinuesAnotherShardsRunNorAnotherCompilers) {
  ToySweep toy("exit 1");
  auto db = db::Database::open(toy.tmp.path() + "/c.db", true);
  const auto space = toy.space({16, 32}, {16, 32}, {1});
  sweep::CompileRunOptions first;
  first.shard = {0, 2};
  const auto a = compile(toy, db.get(), space, toy.compiler, first);
  sweep::CompileRunOptions second;
  second.shard = {1, 2};
  second.resume = true;
  const auto b = compile(toy, db.get(), space, toy.compiler, second);
  EXPECT_FALSE(b.resumed) << "shard 0's run holds keys outside shard 1's plan";
  EXPECT_NE(a.run_id, b.run_id);
  EXPECT_EQ(b.candidates, 2u);

  auto other = compile_provenance();
  other.compiler_version = "fake 2.0";
  jit::CompileSettings cs;
  cs.arch = "sm_90a";
  const auto c = sweep::run_compile(space, db.get(), other, toy.compiler, cs, second);
  EXPECT_FALSE(c.resumed) << "another compiler's run is not continued";
}

TEST(SweepCompileRun, RefusesASweepRunsProvenance) {
  ToySweep toy("exit 1");
  jit::CompileSettings cs;
  cs.arch = "sm_90a";
  EXPECT_THROW(sweep::run_compile(toy.space({16}, {16}, {1}), nullptr, ToySweep::provenance(), toy.compiler, cs, {}),
               Error);
}

}  // namespace
}  // namespace ktune::testing
