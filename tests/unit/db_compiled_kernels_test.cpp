// Compile-only runs and their compiled kernels: stored and read back (NULL resources included),
// kept apart from sweeps by every reader of measurements, winners, gaps, arches and resumable
// runs, refused where they do not belong, and recorded all or nothing.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db_test_support.hpp"

namespace ktune::db {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

Run compile_run(std::string arch = "gfx90a") {
  Run r = test::sample_run("mla_decode", "", std::move(arch));
  r.kind = RunKind::compile;
  r.backend = "hip";
  r.compute_units = 0;
  r.copy_gbps = 0;
  r.compiler_version = "hiprtc 5.2";
  r.command = "ktune compile --kernel mla_decode --arch gfx90a --db x.db";
  return r;
}

CompiledKernel kernel(int64_t run_id, int64_t rows, std::string name = "ktune::mla_decode_mma<16>") {
  CompiledKernel k;
  k.run_id = run_id;
  k.key = test::key(16);
  k.config = test::config(rows);
  k.kernel = std::move(name);
  k.symbol = "_Z" + k.kernel;
  k.compile_seconds = 1.5;
  k.resources.vgprs = 128;
  k.resources.agprs = 32;
  k.resources.sgprs = 40;
  k.resources.scratch_bytes = 0;
  k.resources.lds_bytes = 49152;
  k.resources.waves_per_simd = 2;
  return k;
}

CompiledKernel failed(int64_t run_id, int64_t rows) {
  CompiledKernel k;
  k.run_id = run_id;
  k.key = test::key(16);
  k.config = test::config(rows);
  k.status = Status::compile_error;
  k.detail = "error: no matching function";
  return k;
}

TEST(DbCompiledKernels, RoundTripWithUnknownResourcesAsNone) {
  test::TempDir dir;
  auto db = Database::open(dir.file("c.db"), true);
  const auto id = db->begin_run(compile_run());
  auto known = kernel(id, 64);
  auto unknown = kernel(id, 32, "ktune::mla_combine<4>");
  unknown.resources = {};
  unknown.from_cache = true;
  EXPECT_EQ(db->record_compiled({known, unknown, failed(id, 16)}), 3u);

  const auto rows = db->compiled_kernels();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].arch, "gfx90a");
  EXPECT_EQ(rows[0].kernel, known.kernel);
  EXPECT_EQ(rows[0].symbol, known.symbol);
  EXPECT_EQ(rows[0].resources.vgprs, 128);
  EXPECT_EQ(rows[0].resources.agprs, 32);
  EXPECT_EQ(rows[0].resources.sgprs, 40);
  EXPECT_EQ(rows[0].resources.scratch_bytes, 0);
  EXPECT_EQ(rows[0].resources.lds_bytes, 49152);
  EXPECT_EQ(rows[0].resources.waves_per_simd, 2);
  EXPECT_DOUBLE_EQ(rows[0].compile_seconds, 1.5);
  EXPECT_FALSE(rows[0].from_cache);
  EXPECT_TRUE(rows[1].from_cache);
  for (const auto* v :
       {&rows[1].resources.vgprs, &rows[1].resources.agprs, &rows[1].resources.sgprs, &rows[1].resources.scratch_bytes,
        &rows[1].resources.lds_bytes, &rows[1].resources.waves_per_simd})
    EXPECT_FALSE(v->has_value()) << "a figure the code object does not give must read back as none, not 0";
  EXPECT_EQ(rows[2].status, Status::compile_error);
  EXPECT_EQ(rows[2].symbol, "");
  EXPECT_EQ(rows[2].detail, "error: no matching function");

  Filter f;
  f.status = Status::compile_error;
  EXPECT_EQ(db->compiled_kernels(f).size(), 1u);
  f = {};
  f.key_equals = {{"heads", 8}};
  EXPECT_TRUE(db->compiled_kernels(f).empty());
  const auto pairs = db->compiled({id});
  EXPECT_EQ(pairs.size(), 3u) << "distinct (key, config) pairs";
}

TEST(DbCompiledKernels, ACompileRunIsNoMeasurementToAnyReader) {
  test::TempDir dir;
  auto db = Database::open(dir.file("c.db"), true);
  const auto sweep = db->begin_run(test::sample_run("mla_decode", "AMD Instinct MI250X", "gfx90a"));
  db->record(test::timed(sweep, test::key(16), test::config(64), 10));
  const auto compiled = db->begin_run(compile_run());
  db->record_compiled({kernel(compiled, 64)});
  const auto compiled_942 = db->begin_run(compile_run("gfx942"));
  db->record_compiled({kernel(compiled_942, 64)});

  ASSERT_EQ(db->runs().size(), 1u) << "runs() lists sweeps unless asked for compile-only runs";
  EXPECT_EQ(db->runs().front().id, sweep);
  Filter compile_only;
  compile_only.run_kind = RunKind::compile;
  const auto compile_runs = db->runs(compile_only);
  ASSERT_EQ(compile_runs.size(), 2u);
  EXPECT_EQ(compile_runs[0].kind, RunKind::compile);
  EXPECT_EQ(db->run(compiled).kind, RunKind::compile);
  EXPECT_EQ(db->run(sweep).kind, RunKind::sweep);
  EXPECT_EQ(db->arches("mla_decode"), std::vector<std::string>{"gfx90a"}) << "gfx942 has only a compile run";
  EXPECT_EQ(db->winners().size(), 1u);
  EXPECT_EQ(db->measurements().size(), 1u);

  // --resume of a sweep never continues a compile run, nor the reverse.
  auto like_sweep = db->run(compiled);
  like_sweep.kind = RunKind::sweep;
  EXPECT_TRUE(db->compatible_runs(like_sweep).empty());
  const auto resumable = db->compatible_runs(db->run(compiled));
  ASSERT_EQ(resumable.size(), 1u);
  EXPECT_EQ(resumable.front().id, compiled);
}

TEST(DbCompiledKernels, EachRowBelongsToItsKindOfRun) {
  test::TempDir dir;
  const auto path = dir.file("c.db");
  auto db = Database::open(path, true);
  const auto sweep = db->begin_run(test::sample_run());
  const auto compiled = db->begin_run(compile_run());
  try {
    db->record(test::timed(compiled, test::key(16), test::config(64), 10));
    ADD_FAILURE() << "a timing was recorded in a compile-only run";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("measurements belong to sweep runs")));
  }
  try {
    db->record_compiled({kernel(sweep, 64)});
    ADD_FAILURE() << "a compiled kernel was recorded in a sweep";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("compiled kernels belong to compile-only runs"));
  }
  auto with_roof = compile_run();
  with_roof.copy_gbps = 1000;
  try {
    db->begin_run(with_roof);
    ADD_FAILURE() << "a compile-only run recorded a roof";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a compile-only run measures no roofs"));
  }
  EXPECT_TRUE(db->measurements().empty());
  EXPECT_TRUE(db->compiled_kernels().empty());
}

TEST(DbCompiledKernels, ABatchIsRecordedWholeOrNotAtAll) {
  test::TempDir dir;
  const auto path = dir.file("c.db");
  auto db = Database::open(path, true);
  const auto id = db->begin_run(compile_run());
  db->record_compiled({kernel(id, 128)});

  auto no_symbol = kernel(id, 32);
  no_symbol.symbol = "";  // an ok row must name its kernel
  EXPECT_THROW(db->record_compiled({kernel(id, 64), no_symbol}), Error);
  EXPECT_THROW(db->record_compiled({kernel(id, 64), kernel(id + 7, 32)}), Error) << "no such run";
  auto negative = kernel(id, 32);
  negative.resources.vgprs = -1;
  EXPECT_THROW(db->record_compiled({kernel(id, 64), negative}), Error);
  auto timed_status = kernel(id, 32);
  timed_status.status = Status::fault;
  try {
    db->record_compiled({kernel(id, 64), timed_status});
    ADD_FAILURE() << "a fault was recorded as a compile outcome";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no compile outcome"));
  }
  ASSERT_EQ(db->compiled_kernels().size(), 1u) << "the rows before each failing one were rolled back";
  EXPECT_EQ(db->compiled_kernels().front().config, test::config(128));
}

TEST(DbCompiledKernels, AReadOnlyOpenRecordsNothing) {
  test::TempDir dir;
  const auto path = dir.file("c.db");
  int64_t id = 0;
  {
    auto db = Database::open(path, true);
    id = db->begin_run(compile_run());
  }
  const auto before = test::fingerprint(path);
  auto db = Database::open(path, false, true);
  try {
    db->record_compiled({kernel(id, 64)});
    ADD_FAILURE() << "a read-only connection recorded a compiled kernel";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr(path), HasSubstr("readonly")));
  }
  EXPECT_EQ(db->compiled_kernels().size(), 0u);
  db.reset();
  EXPECT_EQ(test::fingerprint(path), before);
}

TEST(DbCompiledKernels, RunsOfOlderFilesAreSweeps) {
  test::TempDir dir;
  const auto path = dir.file("v1.db");
  test::write_v1_by_hand(path);
  auto db = Database::open(path, false);
  const auto runs = db->runs();
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& r : runs) EXPECT_EQ(r.kind, RunKind::sweep);
  EXPECT_TRUE(db->compiled_kernels().empty());
  EXPECT_EQ(db->winners().size(), 2u);
}

}  // namespace
}  // namespace ktune::db
