// Building the dispatch table from a database: which row serves a key, and the validators
// (template hash, device, compiler) that refuse to build a table from results that do not belong
// together. Every refusal has a passing twin that differs only in what the validator checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "dispatch/cpp_text.hpp"
#include "dispatch_support.hpp"

namespace ktune::dispatch {
namespace {

using test::config;
using test::key;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string build_error(db::Database& db, const Request& req) {
  try {
    build_table(db, test::toy(), req);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// The table the runtime's KTUNE_DB builds (refused arches dropped), checked to serve sm_90a alone
// and to have refused `refused` alone.
Table sm_90a_alone(db::Database& db, const std::string& refused) {
  auto req = test::request();
  req.drop_refused_arches = true;
  auto table = build_table(db, test::toy(), req);
  EXPECT_EQ(table.arches.size(), 1u);
  if (!table.arches.empty()) {
    EXPECT_EQ(table.arches[0].arch, "sm_90a");
  }
  EXPECT_EQ(table.refused.size(), 1u);
  if (!table.refused.empty()) {
    EXPECT_EQ(table.refused[0].arch, refused);
  }
  return table;
}

TEST(DispatchTable, WinnerIsTheFastestVerifiedConfigAndCarriesWhatTheFamilySays) {
  test::ToyDb t;
  auto r = t.run();
  t.ok(r, key(16, 2, 0, 1, 32), config(64, 2), 12.5);
  t.ok(r, key(16, 2, 0, 1, 32), config(32, 1), 9.25);
  t.failed(r, key(16, 2, 0, 1, 32), config(128), db::Status::verify_failed, "max abs err 0.5");
  const auto table = build_table(t.db(), test::toy(), test::request());
  ASSERT_EQ(table.arches.size(), 1u);
  EXPECT_EQ(table.arches[0].arch, "sm_90a");
  EXPECT_EQ(table.covering_fields, (std::vector<std::string>{"heads", "block_len"}));
  const auto* e = test::find(table, "sm_90a", key(16, 2, 0, 1, 32));
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->kernel);
  EXPECT_EQ(e->kernel->config, config(32, 1));
  EXPECT_DOUBLE_EQ(e->kernel->median_us, 9.25);
  EXPECT_EQ(e->kernel->launch.threads_per_block, 64);
  EXPECT_EQ(e->kernel->launch.shared_bytes, 32 * 1152);
  EXPECT_EQ(e->kernel->name_expressions, (std::vector<std::string>{"toy::attn<32, 0, 1>", "toy::combine<1>"}));
  EXPECT_EQ(e->kernel->run_id, r);
  ASSERT_EQ(table.arches[0].runs.size(), 1u);
  EXPECT_EQ(table.arches[0].runs[0].id, r);
}

// An ok row without a time passes the schema's CHECK (NULL) and heads the winners view: written by
// another tool, it would beat every measured config of its key. Refused, naming the row.
TEST(DispatchTable, AnOkRowWithoutATimeIsRefused) {
  test::ToyDb t;
  auto r = t.run();
  t.ok(r, key(16, 2, 0, 1, 32), config(64, 2), 12.5);
  EXPECT_EQ(build_error(t.db(), test::request()), "") << "the twin: a measured time";
  t.ok(r, key(16, 2, 0, 1, 32), config(32, 1), 9.25);
  {
    SQLite::Database raw(t.path(), SQLite::OPEN_READWRITE);
    raw.exec("UPDATE measurements SET median_us = NULL, p10_us = NULL, p90_us = NULL WHERE id = 2");
  }
  EXPECT_THAT(build_error(t.db(), test::request()),
              AllOf(HasSubstr("measurement 2 of run"), HasSubstr("no positive median time")));
}

// Rows of an arch ktune does not know are refused, named as a string literal: one with a NUL
// byte was cut at it in the header (select("sm_90a") answered for it).
TEST(DispatchTable, AnArchKtuneDoesNotKnowIsRefused) {
  for (const auto& unknown : {std::string("sm_90a\0evil", 11), std::string("gfx1100")}) {
    SCOPED_TRACE(unknown);
    test::ToyDb t;
    const auto r = t.run(unknown);
    t.ok(r, key(16, 2, 0, 1, 32), config(64, 2), 12.5);
    EXPECT_THAT(build_error(t.db(), test::request()),
                AllOf(HasSubstr(fmt::format("arch {} is not a target ktune knows", string_literal(unknown))),
                      HasSubstr("gfx90a, gfx942")));
    auto explicit_arch = test::request();
    explicit_arch.arch = unknown;
    EXPECT_THAT(build_error(t.db(), explicit_arch), HasSubstr("is not a target ktune knows"));
    const auto ok = t.run("sm_90a");
    t.ok(ok, key(16, 2, 0, 1, 32), config(64, 2), 12.5);
    sm_90a_alone(t.db(), unknown);  // the twin: the other arch serves
  }
}

// A malformed gap (a key that does not parse, a fallback that is not canonical) refuses its own
// arch: the runtime's KTUNE_DB still serves the others.
TEST(DispatchTable, AMalformedGapStandsInTheWayOfItsArchAlone) {
  auto padded = key(16, 2, 0, 1, 32).canonical();
  padded.replace(padded.find("=16"), 3, "=016");
  for (const auto& [update, expected] :
       {std::pair{std::string("UPDATE gaps SET key = 'heads==32'"), std::string("gaps row 1, column key")},
        std::pair{fmt::format("UPDATE gaps SET fallback = '{}'", padded), std::string("not in canonical form")}}) {
    SCOPED_TRACE(update);
    test::ToyDb t;
    t.ok(t.run("sm_90a"), key(16, 2, 0, 1, 32), config(64, 2), 12.5);
    t.declared_gap("gfx942", key(32, 2, 0, 1, 32), "vendor lib 1.0", "aborts", key(16, 2, 0, 1, 32).canonical());
    ASSERT_EQ(build_table(t.db(), test::toy(), test::request()).arches.size(), 2u) << "the twin: well formed";
    SQLite::Database(t.path(), SQLite::OPEN_READWRITE).exec(update);
    EXPECT_THAT(build_error(t.db(), test::request()), HasSubstr(expected));
    sm_90a_alone(t.db(), "gfx942");
  }
}

TEST(DispatchTable, NewestRunWinsNotTheFastest) {
  test::ToyDb t;
  auto old_run = t.run();
  auto new_run = t.run();
  t.ok(old_run, key(16, 2, 0, 1, 32), config(64), 5.0);  // faster, but older
  t.ok(new_run, key(16, 2, 0, 1, 32), config(32), 9.0);
  t.ok(old_run, key(32, 2, 0, 1, 32), config(64), 7.0);  // only the old run has this key
  const auto table = build_table(t.db(), test::toy(), test::request());
  EXPECT_EQ(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel->config, config(32));
  EXPECT_EQ(test::find(table, "sm_90a", key(32, 2, 0, 1, 32))->kernel->config, config(64));
  ASSERT_EQ(table.arches[0].runs.size(), 2u);
}

TEST(DispatchTable, NewestIsByStartTimeNotById) {
  test::ToyDb t;
  auto later = t.run("sm_90a", "NVIDIA H200", test::kHash, "nvrtc 13.0", "2025-07-01T00:00:00Z");
  auto earlier = t.run("sm_90a", "NVIDIA H200", test::kHash, "nvrtc 13.0", "2025-01-01T00:00:00Z");
  ASSERT_LT(later, earlier);  // e.g. runs merged from shards in another order
  t.ok(later, key(16, 2, 0, 1, 32), config(32), 9.0);
  t.ok(earlier, key(16, 2, 0, 1, 32), config(64), 5.0);
  const auto table = build_table(t.db(), test::toy(), test::request());
  EXPECT_EQ(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel->config, config(32));
}

TEST(DispatchTable, MeasuredGapOfANewerRunReplacesAnOlderWinnerAndViceVersa) {
  test::ToyDb t;
  auto first = t.run();
  auto second = t.run();
  t.ok(first, key(16, 2, 0, 1, 32), config(32), 9.0);
  t.measured_gap(second, "sm_90a", key(16, 2, 0, 1, 32), db::GapReason::verify_failed, "max abs err 0.5");
  t.measured_gap(first, "sm_90a", key(32, 2, 0, 1, 32), db::GapReason::compile_error, "too many registers");
  t.ok(second, key(32, 2, 0, 1, 32), config(64), 11.0);
  const auto table = build_table(t.db(), test::toy(), test::request());
  const auto* gap = test::find(table, "sm_90a", key(16, 2, 0, 1, 32));
  ASSERT_TRUE(gap->gap);
  EXPECT_EQ(gap->gap->reason, db::GapReason::verify_failed);
  EXPECT_EQ(gap->gap->run_id, second);
  EXPECT_TRUE(test::find(table, "sm_90a", key(32, 2, 0, 1, 32))->kernel);
  EXPECT_EQ(table.arches[0].kernels(), 1);
  EXPECT_EQ(table.arches[0].gaps(), 1);
}

TEST(DispatchTable, DeclaredGapOverridesNothingMeasuredToWork) {
  test::ToyDb t;
  auto r = t.run();
  t.ok(r, key(16, 2, 0, 1, 32), config(32), 9.0);
  t.declared_gap("sm_90a", key(16, 2, 0, 1, 32), "aiter 0.1.19", "no fp8 2-token non-causal fold");
  const auto table = build_table(t.db(), test::toy(), test::request());
  EXPECT_TRUE(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel);
  ASSERT_EQ(table.arches[0].ignored_declarations.size(), 1u);
  EXPECT_EQ(table.arches[0].ignored_declarations[0].source, "aiter 0.1.19");
  EXPECT_EQ(table.arches[0].ignored_declarations[0].winner_run_id, r);
}

TEST(DispatchTable, DeclaredGapReplacesAMeasuredGapAndStandsAlone) {
  test::ToyDb t;
  auto r = t.run();
  t.measured_gap(r, "sm_90a", key(16, 2, 0, 1, 32), db::GapReason::no_config, "");
  t.declared_gap("sm_90a", key(16, 2, 0, 1, 32), "aiter 0.1.19", "no fp8 2-token non-causal fold",
                 key(16, 4, 0, 1, 32).canonical(), "pad the block to 4 tokens");
  t.declared_gap("sm_90a", key(16, 2, 0, 1, 32), "a note without fallback", "same key");
  t.declared_gap("gfx942", key(8, 1, 1, 0, 1), "vendor list", "no kernel for 8 heads");
  const auto table = build_table(t.db(), test::toy(), test::request());
  ASSERT_EQ(table.arches.size(), 2u);  // gfx942 has declared gaps only
  EXPECT_EQ(table.arches[0].arch, "gfx942");
  EXPECT_TRUE(table.arches[0].runs.empty());
  const auto* e = test::find(table, "sm_90a", key(16, 2, 0, 1, 32));
  ASSERT_TRUE(e->gap);
  EXPECT_EQ(e->gap->reason, db::GapReason::declared);
  EXPECT_EQ(e->gap->source, "aiter 0.1.19");  // the declaration with a fallback wins
  EXPECT_EQ(e->gap->fallback, key(16, 4, 0, 1, 32));
  EXPECT_EQ(e->gap->fallback_note, "pad the block to 4 tokens");
}

TEST(DispatchTable, GapsThatFallBackToOneAnotherAreRefusedNamingTheLoop) {
  const auto a = key(16, 2, 0, 1, 32), b = key(16, 4, 0, 1, 32);
  {  // A to B, B to A.
    test::ToyDb t;
    t.ok(t.run(), key(128, 1, 0, 0, 1), config(32), 9.0);
    t.declared_gap("sm_90a", a, "aiter 0.1.19", "no fold", b.canonical(), "pad to 4");
    t.declared_gap("sm_90a", b, "aiter 0.1.20", "no fold", a.canonical(), "flatten to 2");
    EXPECT_THAT(build_error(t.db(), test::request()),
                AllOf(HasSubstr("fallback validator"), HasSubstr("sm_90a"),
                      HasSubstr("{heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn batch=32} (aiter 0.1.19) -> "
                                "{heads=16 block_len=4 causal=0 kv_dtype=fp8_e4m3fn batch=32} (aiter 0.1.20) -> "
                                "{heads=16 block_len=2"),
                      HasSubstr("gap rm")));
    // Twin: once B is measured to work, A's fallback ends at B's kernel.
    t.ok(t.run(), b, config(32), 9.0);
    EXPECT_EQ(build_error(t.db(), test::request()), "");
  }
  {  // A to its own key at another batch, which no row has: the batch bucket answers with A again.
    test::ToyDb t;
    t.declared_gap("sm_90a", a, "vendor", "no fold", key(16, 2, 0, 1, 64).canonical(), "a larger batch");
    EXPECT_THAT(build_error(t.db(), test::request()),
                HasSubstr("{heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn batch=32} (vendor) -> {heads=16"));
    // Twin: a kernel at batch 128 is the bucket of batch 64.
    t.ok(t.run(), key(16, 2, 0, 1, 128), config(32), 9.0);
    EXPECT_EQ(build_error(t.db(), test::request()), "");
  }
  {  // Chains that end: at a gap without a fallback, at an untuned key, at a covering kernel.
    test::ToyDb t;
    t.ok(t.run(), key(32, 8, 0, 1, 32), config(32), 9.0);
    t.declared_gap("sm_90a", a, "x", "", b.canonical(), "");
    t.declared_gap("sm_90a", b, "y", "");
    t.declared_gap("sm_90a", key(16, 1, 0, 0, 32), "z", "", key(8, 1, 1, 2, 32).canonical(), "");
    t.declared_gap("sm_90a", key(16, 1, 1, 0, 32), "w", "", key(16, 4, 0, 1, 32).canonical(), "");
    t.declared_gap("sm_90a", key(16, 3, 0, 1, 32), "v", "", key(16, 5, 0, 1, 32).canonical(), "");
    EXPECT_EQ(build_error(t.db(), test::request()), "");
  }
}

TEST(DispatchTable, StaleTemplateHashIsRefusedWithTheWayOut) {
  test::ToyDb t;
  auto r = t.run("sm_90a", "NVIDIA H200", "feedfacefeedface");
  t.ok(r, key(16, 2, 0, 1, 32), config(32), 9.0);
  EXPECT_THAT(build_error(t.db(), test::request()),
              AllOf(HasSubstr("template hash validator"), HasSubstr("feedfacefeedface"), HasSubstr(test::kHash),
                    HasSubstr("heads=16,block_len=2"), HasSubstr("re-run `ktune sweep`"), HasSubstr("--allow-stale")));
  // Twin: the same database is accepted when the current templates are the ones measured...
  EXPECT_EQ(build_error(t.db(), test::request("feedfacefeedface")), "");
  // ...or when stale results are allowed.
  auto allow = test::request();
  allow.allow_stale = true;
  const auto table = build_table(t.db(), test::toy(), allow);
  EXPECT_TRUE(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel);
}

TEST(DispatchTable, ARefusedArchCanBeDroppedAloneForTheRuntime) {
  test::ToyDb t;
  t.ok(t.run(), key(16, 2, 0, 1, 32), config(32), 9.0);
  t.ok(t.run("gfx942", "AMD Instinct MI300X", "feedfacefeedface"), key(16, 2, 0, 1, 32), config(32), 9.0);
  EXPECT_THAT(build_error(t.db(), test::request()), HasSubstr("template hash validator"));  // codegen: all or none
  const auto table = sm_90a_alone(t.db(), "gfx942");
  ASSERT_EQ(table.refused.size(), 1u);
  EXPECT_THAT(table.refused[0].why, AllOf(HasSubstr("template hash validator"), HasSubstr("feedfacefeedface")));
  // Nothing left: refused, with every arch's reason.
  test::ToyDb u;
  u.ok(u.run("gfx942", "AMD Instinct MI300X", "feedfacefeedface"), key(16, 2, 0, 1, 32), config(32), 9.0);
  auto req = test::request();
  req.drop_refused_arches = true;
  EXPECT_THAT(build_error(u.db(), req), AllOf(HasSubstr("template hash validator"), HasSubstr("gfx942")));
}

TEST(DispatchTable, StaleResultsSupersededByFreshOnesAreNoError) {
  test::ToyDb t;
  auto stale = t.run("sm_90a", "NVIDIA H200", "feedfacefeedface");
  auto fresh = t.run();
  t.ok(stale, key(16, 2, 0, 1, 32), config(64), 5.0);
  t.ok(fresh, key(16, 2, 0, 1, 32), config(32), 9.0);
  auto table = build_table(t.db(), test::toy(), test::request());
  EXPECT_EQ(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel->config, config(32));
  // A fresh run beats a newer stale one (e.g. a sweep made with --templates DIR).
  auto newer_stale = t.run("sm_90a", "NVIDIA H200", "feedfacefeedface");
  t.ok(newer_stale, key(16, 2, 0, 1, 32), config(128), 4.0);
  table = build_table(t.db(), test::toy(), test::request());
  EXPECT_EQ(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel->config, config(32));
  // Twin: a key only the stale runs have is refused.
  t.ok(stale, key(32, 2, 0, 1, 32), config(64), 5.0);
  EXPECT_THAT(build_error(t.db(), test::request()), HasSubstr("1 key(s)"));
}

TEST(DispatchTable, MixedDevicesAreRefusedUnlessOneIsChosen) {
  test::ToyDb t;
  auto h200 = t.run("sm_90a", "NVIDIA H200");
  auto h100 = t.run("sm_90a", "NVIDIA H100");
  t.ok(h200, key(16, 2, 0, 1, 32), config(32), 9.0);
  t.ok(h100, key(16, 2, 0, 1, 32), config(64), 14.0);
  t.ok(h100, key(32, 2, 0, 1, 32), config(64), 15.0);
  EXPECT_THAT(build_error(t.db(), test::request()),
              AllOf(HasSubstr("device validator"), HasSubstr("'NVIDIA H100' (run 2)"),
                    HasSubstr("'NVIDIA H200' (run 1)"), HasSubstr("--device NAME")));
  auto req = test::request();
  req.device = "NVIDIA H200";
  const auto table = build_table(t.db(), test::toy(), req);
  EXPECT_EQ(test::find(table, "sm_90a", key(16, 2, 0, 1, 32))->kernel->config, config(32));
  EXPECT_EQ(test::find(table, "sm_90a", key(32, 2, 0, 1, 32)), nullptr);  // nothing of the H100
  ASSERT_EQ(table.arches[0].runs.size(), 1u);
  EXPECT_EQ(table.arches[0].runs[0].device_name, "NVIDIA H200");
}

TEST(DispatchTable, DevicesOfDifferentArchesDoNotMix) {
  test::ToyDb t;
  t.ok(t.run("sm_90a", "NVIDIA H200"), key(16, 2, 0, 1, 32), config(32), 9.0);
  t.ok(t.run("gfx942", "AMD Instinct MI300X"), key(16, 2, 0, 1, 32), config(64), 11.0);
  const auto table = build_table(t.db(), test::toy(), test::request());
  ASSERT_EQ(table.arches.size(), 2u);
  EXPECT_EQ(table.arches[0].arch, "gfx942");
  EXPECT_EQ(table.arches[1].arch, "sm_90a");
  auto req = test::request();
  req.device = "NVIDIA H200";  // keeps the arch of that device only
  ASSERT_EQ(build_table(t.db(), test::toy(), req).arches.size(), 1u);
}

TEST(DispatchTable, MixedCompilersAreRefusedUnlessOneIsChosen) {
  test::ToyDb t;
  auto old_nvrtc = t.run("sm_90a", "NVIDIA H200", test::kHash, "nvrtc 12.8");
  auto new_nvrtc = t.run("sm_90a", "NVIDIA H200", test::kHash, "nvrtc 13.0");
  t.ok(old_nvrtc, key(16, 2, 0, 1, 32), config(64), 10.0);
  t.ok(new_nvrtc, key(16, 2, 0, 1, 32), config(32), 9.0);
  auto req = test::request();
  req.device = "NVIDIA H200";  // choosing the device does not choose among its compilers
  EXPECT_THAT(build_error(t.db(), req), AllOf(HasSubstr("compiler validator"), HasSubstr("'nvrtc 12.8' (run 1)"),
                                              HasSubstr("'nvrtc 13.0' (run 2)"), HasSubstr("--compiler VERSION")));
  req.compiler = "nvrtc 12.8";
  EXPECT_EQ(test::find(build_table(t.db(), test::toy(), req), "sm_90a", key(16, 2, 0, 1, 32))->kernel->config,
            config(64));
}

TEST(DispatchTable, NothingToGenerateSaysWhatTheDatabaseHas) {
  test::ToyDb t;
  EXPECT_THAT(build_error(t.db(), test::request()),
              AllOf(HasSubstr("no results of toy_decode"), HasSubstr("ktune sweep --kernel toy_decode")));
  t.ok(t.run("sm_90a", "NVIDIA H200"), key(16, 2, 0, 1, 32), config(32), 9.0);
  auto req = test::request();
  req.arch = "gfx942";
  EXPECT_THAT(build_error(t.db(), req),
              AllOf(HasSubstr("no results of toy_decode on gfx942"), HasSubstr("sm_90a / NVIDIA H200 / nvrtc 13.0")));
  req.arch.reset();
  req.device = "AMD Instinct MI300X";
  EXPECT_THAT(build_error(t.db(), req), HasSubstr("of device 'AMD Instinct MI300X'"));
  req.device.reset();
  EXPECT_EQ(build_error(t.db(), req), "");
}

TEST(DispatchTable, RowsThatNoLongerFitTheFamilyAreRefused) {
  test::ToyDb t;
  auto r = t.run();
  t.ok(r, Params{{"heads", 16}, {"block_len", 2}}, config(32), 9.0);  // an older key layout
  EXPECT_THAT(build_error(t.db(), test::request()),
              AllOf(HasSubstr("heads=16,block_len=2"), HasSubstr("fields changed since the sweep")));

  test::ToyDb u;
  u.ok(u.run(), key(16, 2, 0, 1, 32), config(32), 9.0);
  u.declared_gap("sm_90a", key(32, 2, 0, 1, 32), "someone", "no kernel", "heads=16", "a key of an older layout");
  EXPECT_THAT(build_error(u.db(), test::request()), AllOf(HasSubstr("fallback of gap"), HasSubstr("someone")));
}

}  // namespace
}  // namespace ktune::dispatch
