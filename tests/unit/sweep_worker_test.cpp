// The worker's side of a candidate on a fake device: verification before timing, poisoned
// outputs, screening, and how each kind of failure is reported.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "common/seed.hpp"
#include "sweep/worker.hpp"
#include "sweep_test_support.hpp"

namespace ktune::sweep {
namespace {
using testing::FakeContext;
using testing::ToyFamily;

struct SweepWorker : ::testing::Test {
  FakeContext ctx;
  ToyFamily family;
  CandidateRunner runner{ctx};

  // heads=16 and the verification shape's ctx=7: a correct kernel writes 39.
  static RunRequest request(std::string code, int64_t heads = 16, double cutoff_us = 0) {
    RunRequest r;
    r.family = "toy";
    r.key = Params{{"heads", heads}, {"kv_dtype", 0}};
    r.config = Params{{"rows", 16}, {"stages", 1}};
    r.shape = Params{{"ctx", 1000}, {"batch", 4}};
    r.code.assign(code.begin(), code.end());
    r.symbols = {"lowered toy"};
    r.seed = seed_of(r.key);  // as the sweep and `ktune bench` set it: it differs with every key field
    r.screen.min_samples = 6;
    r.full.min_samples = 10;
    r.screen.max_samples = 6;
    r.full.max_samples = 30;
    r.full_cutoff_us = cutoff_us;
    return r;
  }
};

TEST_F(SweepWorker, CorrectKernelIsVerifiedThenTimed) {
  auto r = runner.run(family, request("value=39 us=10"));
  ASSERT_EQ(r.status, RunStatus::ok) << r.detail;
  EXPECT_NEAR(r.stats.median_us, 10, 1e-3);
  EXPECT_TRUE(r.fully_timed);
  EXPECT_GT(r.stats.n, 6) << "a full measurement takes more than the screening samples";
  EXPECT_EQ(r.traffic.bytes, 1e6);
  EXPECT_EQ(r.max_abs_err, 0);
}

TEST_F(SweepWorker, WrongOutputFailsVerificationWithoutTiming) {
  auto r = runner.run(family, request("value=40 us=10"));
  EXPECT_EQ(r.status, RunStatus::verify_failed);
  EXPECT_NE(r.detail.find("ctx=7"), std::string::npos) << "the failing shape is named: " << r.detail;
  EXPECT_NE(r.detail.find("got 40, want 39"), std::string::npos) << r.detail;
  EXPECT_EQ(r.max_abs_err, 1);
  EXPECT_EQ(r.stats.n, 0);
  EXPECT_EQ(family.instances, 1) << "no timing instance for a candidate that failed verification";
}

TEST_F(SweepWorker, UnwrittenOutputIsCaughtByThePoison) {
  ASSERT_EQ(runner.run(family, request("value=39 us=10")).status, RunStatus::ok);
  // The output still holds the previous candidate's correct 39: only the poison exposes this one.
  auto r = runner.run(family, request("skip us=10"));
  EXPECT_EQ(r.status, RunStatus::verify_failed) << r.detail;
}

TEST_F(SweepWorker, KeysDifferingOnlyInFieldsVerificationIgnoresShareItsVerdicts) {
  auto at = [](std::string code, int64_t heads, int64_t kv_dtype) {
    RunRequest r = request(std::move(code), heads);
    r.key.set("kv_dtype", kv_dtype);
    r.seed = seed_of(r.key);  // differs between the keys that share verification below
    return r;
  };
  // A wrong program fails verification without being timed: each verification is one launch.
  const auto first = runner.run(family, at("value=40 us=10", 16, 0));
  ASSERT_EQ(first.status, RunStatus::verify_failed);
  ASSERT_EQ(ctx.launches, 1);
  ASSERT_EQ(family.instances, 1);

  // Without the field listed, the other key is verified again on instances of its own.
  const auto unshared = runner.run(family, at("value=40 us=10", 16, 1));
  EXPECT_EQ(unshared.status, RunStatus::verify_failed);
  EXPECT_EQ(ctx.launches, 2);
  EXPECT_EQ(family.instances, 2);

  // Listed, the same program's verdict holds for the other value: no launch, no instance.
  family.verification_ignores = {"kv_dtype"};
  ASSERT_EQ(runner.run(family, at("value=40 us=10", 16, 0)).status, RunStatus::verify_failed);
  EXPECT_EQ(ctx.launches, 3);
  const auto shared = runner.run(family, at("value=40 us=10", 16, 1));
  EXPECT_EQ(shared.status, RunStatus::verify_failed);
  EXPECT_EQ(shared.detail, first.detail);
  EXPECT_EQ(shared.max_abs_err, first.max_abs_err);
  EXPECT_EQ(ctx.launches, 3) << "the verdict was reused";
  EXPECT_EQ(family.instances, 3);

  // Another program on the shared instances is verified (the code differs: another launch).
  EXPECT_EQ(runner.run(family, at("skip us=10", 16, 1)).status, RunStatus::verify_failed);
  EXPECT_EQ(ctx.launches, 4);
  EXPECT_EQ(family.instances, 3);

  // A field verification keeps (heads: the expected value is 2 heads + 7) gets new instances and
  // its own verdict: the program that fails at 16 heads passes at 17, and is timed.
  const auto other_heads = runner.run(family, at("value=41 us=10", 17, 1));
  EXPECT_EQ(other_heads.status, RunStatus::ok) << other_heads.detail;
  EXPECT_EQ(family.instances, 5) << "verification and timing instances of the new key";
  const auto back = runner.run(family, at("value=41 us=10", 16, 0));
  EXPECT_EQ(back.status, RunStatus::verify_failed) << "a verdict of 17 heads must not serve 16";
}

TEST_F(SweepWorker, ScreeningDecidesTheFullMeasurement) {
  auto slow = runner.run(family, request("value=39 us=10", 16, 5.0));
  ASSERT_EQ(slow.status, RunStatus::ok);
  EXPECT_FALSE(slow.fully_timed);
  EXPECT_EQ(slow.stats.n, 6) << "screening samples only";
  auto close = runner.run(family, request("value=39 us=10", 16, 12.5));
  EXPECT_TRUE(close.fully_timed);
}

TEST_F(SweepWorker, WithoutCutoffOnlyTheFullMeasurementRuns) {
  auto r = runner.run(family, request("value=39 us=10"));
  ASSERT_EQ(r.status, RunStatus::ok) << r.detail;
  auto screened = request("value=39 us=10", 16, 100.0);
  screened.full.max_samples = 10;
  screened.full.min_samples = 10;
  const int before = ctx.launches;
  runner.run(family, screened);
  const int with_screen = ctx.launches - before;
  auto direct = screened;
  direct.full_cutoff_us = 0;
  const int before_direct = ctx.launches;
  runner.run(family, direct);
  EXPECT_LT(ctx.launches - before_direct, with_screen) << "no screening measurement without a cutoff";
}

TEST_F(SweepWorker, NoVerifyTimesWithoutChecking) {
  auto wrong = request("value=40 us=10");
  wrong.verify = false;
  auto r = runner.run(family, wrong);
  ASSERT_EQ(r.status, RunStatus::ok) << "not checked, so not rejected: " << r.detail;
  EXPECT_NEAR(r.stats.median_us, 10, 1e-3);
  EXPECT_EQ(family.instances, 1) << "only the timing instance";
  auto checked = request("value=40 us=10");
  EXPECT_EQ(runner.run(family, checked).status, RunStatus::verify_failed)
      << "a key first prepared without verification is verified when asked";
}

TEST_F(SweepWorker, InstancesAreKeptWhileTheKeyStays) {
  runner.run(family, request("value=39 us=10"));
  runner.run(family, request("value=39 us=12"));
  EXPECT_EQ(family.instances, 2) << "one verification and one timing instance for the key";
  auto other = runner.run(family, request("value=23 us=10", 8));
  EXPECT_EQ(other.status, RunStatus::ok) << other.detail;
  EXPECT_EQ(family.instances, 4);
}

TEST_F(SweepWorker, TimingInstancesOfEveryKeyAreOfferedTheWorkersOneInputCache) {
  ASSERT_EQ(runner.run(family, request("value=39 us=10")).status, RunStatus::ok);
  ASSERT_EQ(runner.run(family, request("value=23 us=10", 8)).status, RunStatus::ok);
  ASSERT_EQ(family.timing_inputs.size(), 2u) << "one timing instance per key, each through instantiate_for_timing";
  EXPECT_EQ(family.timing_inputs[0], family.timing_inputs[1]) << "the same cache for both keys";
}

TEST_F(SweepWorker, CodeObjectsAreLoadedOncePerWorker) {
  runner.run(family, request("value=39 us=10"));
  runner.run(family, request("value=39 us=12"));
  EXPECT_EQ(ctx.loads, 2);
  auto same = runner.run(family, request("value=39 us=10", 8 /* another key */));
  EXPECT_EQ(same.status, RunStatus::verify_failed) << "heads=8 wants 23: the cached module runs, and is checked";
  EXPECT_EQ(ctx.loads, 2) << "a code object seen before is not loaded again";
}

TEST_F(SweepWorker, FailuresAreReportedByKind) {
  auto refused = runner.run(family, request("error"));
  EXPECT_EQ(refused.status, RunStatus::verify_failed);
  EXPECT_NE(refused.detail.find("launch failed: too many resources"), std::string::npos) << refused.detail;
  auto broken = runner.run(family, request("broken"));
  EXPECT_EQ(broken.status, RunStatus::load_failed);
  EXPECT_NE(broken.detail.find("not a code object"), std::string::npos) << broken.detail;
  auto wrong_symbol = request("value=39");
  wrong_symbol.symbols = {"other"};
  EXPECT_EQ(runner.run(family, wrong_symbol).status, RunStatus::verify_failed);
  EXPECT_THROW(runner.run(family, request("fault")), DeviceFault) << "a device fault ends the worker";
}

// A config that verified and then could not be timed did not compute wrong results: a fault.
TEST_F(SweepWorker, ACandidateThatCannotBeTimedIsAFaultNotAWrongResult) {
  family.timing_inputs_fail = true;
  const auto r = runner.run(family, request("value=39"));
  EXPECT_EQ(r.status, RunStatus::fault);
  EXPECT_NE(r.detail.find("timing shape"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("out of device memory"), std::string::npos) << r.detail;
}

TEST_F(SweepWorker, TimeIsAccountedByPhase) {
  // 200 us launches are sampled one at a time (no batches, no graphs), so the fake device's clock
  // says exactly which launches were timed: all but the verification launch and the warm-ups.
  auto first = request("value=39 us=200", 16, 250.0);
  first.full.min_samples = first.full.max_samples = 10;
  const int before = ctx.launches;
  auto r = runner.run(family, first);
  ASSERT_EQ(r.status, RunStatus::ok) << r.detail;
  ASSERT_TRUE(r.fully_timed);
  EXPECT_GT(r.time.setup_ms, 0) << "the key's instances were made for this request";
  EXPECT_GT(r.time.load_ms, 0);
  EXPECT_GT(r.time.verify_ms, 0);
  EXPECT_GT(r.time.screen_ms, 0);
  EXPECT_GT(r.time.full_ms, 0);
  const int timed_launches = ctx.launches - before - 1 - first.screen.warmup - first.full.warmup;
  EXPECT_EQ(timed_launches, (1 + 6) + (1 + 10)) << "per measurement, one launch alone, then the samples";
  EXPECT_NEAR(r.time.timed_ms, timed_launches * 0.2, 1e-4);

  auto again = runner.run(family, request("value=39 us=200", 16, 100.0));
  ASSERT_FALSE(again.fully_timed);
  EXPECT_EQ(again.time.setup_ms, 0) << "the key's instances were kept";
  EXPECT_GT(again.time.screen_ms, 0);
  EXPECT_EQ(again.time.full_ms, 0) << "screened out";
  EXPECT_NEAR(again.time.timed_ms, (1 + 6) * 0.2, 1e-4) << "the screening's timed launches only";

  auto unchecked = request("value=39 us=200", 16);
  unchecked.verify = false;
  auto direct = runner.run(family, unchecked);
  EXPECT_GT(direct.time.setup_ms, 0) << "a key without verification is a new key";
  EXPECT_EQ(direct.time.verify_ms, 0);
  EXPECT_EQ(direct.time.screen_ms, 0) << "no cutoff, no screening";
}

TEST(SweepProtocol, MessagesRoundTrip) {
  auto req = SweepWorker::request(std::string("\0\x01\xff binary", 10), 16, 12.5);
  auto back = run_request_from(nlohmann::json::parse(to_json(req).dump()));
  EXPECT_EQ(back.code, req.code);
  EXPECT_EQ(back.key, req.key);
  EXPECT_EQ(back.symbols, req.symbols);
  EXPECT_EQ(back.full.max_samples, 30);
  EXPECT_EQ(back.full_cutoff_us, 12.5);
  EXPECT_TRUE(back.verify);
  req.verify = false;
  EXPECT_FALSE(run_request_from(nlohmann::json::parse(to_json(req).dump())).verify);

  RunResult r;
  r.status = RunStatus::verify_failed;
  r.detail = "x";
  r.max_abs_err = std::numeric_limits<double>::infinity();
  r.time = {1, 2, 3, 4, 5, 6, 7};
  auto rb = run_result_from(nlohmann::json::parse(to_json(r).dump()));
  EXPECT_EQ(rb.status, RunStatus::verify_failed);
  EXPECT_EQ(rb.time.setup_ms, 1);
  EXPECT_EQ(rb.time.full_ms, 5);
  EXPECT_EQ(rb.time.timed_ms, 6);
  EXPECT_EQ(rb.time.total_ms, 7);
  auto no_time = to_json(r);
  no_time.erase("time");
  EXPECT_EQ(run_result_from(no_time).time.total_ms, 0) << "a worker that does not time itself";
  auto part_time = to_json(r);
  part_time["time"].erase("load_ms");
  EXPECT_THROW(run_result_from(part_time), Error) << "an account with a phase missing is malformed";
  EXPECT_TRUE(std::isinf(rb.max_abs_err)) << "an infinite error must survive JSON";
  EXPECT_TRUE(std::isinf(rb.stats.rel_ci));
  EXPECT_EQ(rb.stats.stop, bench::Stop::none);
  r.stats.stop = bench::Stop::budget;
  EXPECT_EQ(run_result_from(nlohmann::json::parse(to_json(r).dump())).stats.stop, bench::Stop::budget);
  auto no_stop = to_json(r);
  no_stop.erase("stop");
  EXPECT_EQ(run_result_from(no_stop).stats.stop, bench::Stop::none) << "a worker that does not say";
  no_stop["stop"] = nullptr;
  EXPECT_EQ(run_result_from(no_stop).stats.stop, bench::Stop::none) << "nor one that says null";
  auto bad_stop = to_json(r);
  bad_stop["stop"] = "bored";
  EXPECT_THROW(run_result_from(bad_stop), Error);
  EXPECT_THROW(run_result_from(nlohmann::json{{"status", "ok"}}), Error);
  EXPECT_THROW(run_result_from(nlohmann::json::parse(R"({"status":"great"})")), Error);

  backend::CompileResult c{{'a', '\0', 'b'}, {"_Z1kv"}, "warn"};
  auto cb = compile_result_from(nlohmann::json::parse(compile_reply(c).dump()));
  EXPECT_EQ(cb.code, c.code);
  EXPECT_EQ(cb.lowered_names, c.lowered_names);
  try {
    compile_result_from(compile_error_reply("failed", "line 3: error"));
    FAIL() << "an error reply must throw";
  } catch (const CompileError& e) {
    EXPECT_EQ(e.log(), "line 3: error");
  }
}

// The wire format a worker of this version reads: field names exactly, every field required.
TEST(SweepProtocol, CompileRequestsAndTimingPoliciesKeepTheirWireFormat) {
  const backend::CompileRequest c{"src \"q\"\n", "toy.hip", {"k<1>", "k<2>"}, "sm_90a", {"-O3"}};
  const auto j = to_json(c);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"op":"compile","source":"src \"q\"\n","source_name":"toy.hip",
      "name_expressions":["k<1>","k<2>"],"arch":"sm_90a","options":["-O3"]})"));
  const auto back = compile_request_from(nlohmann::json::parse(j.dump()));
  EXPECT_EQ(back.source, c.source);
  EXPECT_EQ(back.source_name, c.source_name);
  EXPECT_EQ(back.name_expressions, c.name_expressions);
  EXPECT_EQ(back.arch, c.arch);
  EXPECT_EQ(back.options, c.options);
  auto missing = j;
  missing.erase("options");
  EXPECT_THROW(compile_request_from(missing), Error);

  RunRequest req;
  req.full.max_samples = 77;
  req.screen.rel_ci = 0.125;
  req.screen.abandon_us = 40;
  const auto r = to_json(req);
  EXPECT_EQ(r.at("full"), nlohmann::json::parse(R"({"warmup":3,"min_samples":10,"max_samples":77,"rel_ci":0.02,
      "budget_ms":2000.0,"min_sample_us":100.0,"max_batch":64,"abandon_us":0.0})"));
  EXPECT_EQ(run_request_from(r).screen.rel_ci, 0.125);
  EXPECT_EQ(run_request_from(r).screen.abandon_us, 40);
  auto no_batch = r;
  no_batch["full"].erase("max_batch");
  EXPECT_THROW(run_request_from(no_batch), Error) << "a policy without one of its fields is malformed";
}

TEST(SweepProtocol, Base64) {
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    auto enc = base64_encode(std::span<const char>(s.data(), s.size()));
    EXPECT_EQ(enc.size() % 4, 0u);
    auto dec = base64_decode(enc);
    EXPECT_EQ(std::string(dec.begin(), dec.end()), s);
  }
  EXPECT_EQ(base64_encode(std::span<const char>("Man", 3)), "TWFu");
  EXPECT_EQ(base64_encode(std::span<const char>("Ma", 2)), "TWE=");
  for (const char* bad : {"TWF", "TW=u", "T===", "TW!u", "TWE=TWFu"}) EXPECT_THROW(base64_decode(bad), Error) << bad;
}

}  // namespace
}  // namespace ktune::sweep
