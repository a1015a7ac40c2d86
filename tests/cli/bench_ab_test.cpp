// scripts/bench_ab.py: the A/B tables of experiments/ (experiments/2026-12-02-mla-decode-two-ctas/). Over a
// stand-in ktune whose time changes with every call: the rounds alternate the cases, each case's
// figure is the median of its rounds, a failing or unverified bench is marked and fails the run,
// and malformed cases files are refused with their place. With --probe, a second ktune's cases
// follow main's in every round and each is set against main's case of its label or first word.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/cli_run.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::testing {
namespace {

class BenchAb : public ScriptTest {
 protected:
  static std::string bench_ab() { return python_script("bench_ab.py"); }
  // A ktune whose n-th bench (counted in a file) takes 100 + n us; --heads 99 fails.
  std::string counting_ktune() {
    const std::string calls = dir.path() + "/calls";
    const std::string fake =
        dir.write("ktune", "#!/bin/sh\n"
                           "case \"$*\" in *--heads\\ 99*) echo 'ktune: error: no such key' >&2; exit 1;; esac\n"
                           "n=$(cat '" +
                               calls + "' 2>/dev/null || echo 0); echo $((n + 1)) > '" + calls +
                               "'\n"
                               "echo \"{\\\"median_us\\\": $((100 + n))}\"\n");
    EXPECT_EQ(std::system(("chmod +x '" + fake + "'").c_str()), 0);
    return fake;
  }
  CliResult run(const std::string& cases_text, int rounds, const std::string& ktune, const std::string& more = "") {
    const std::string cases = dir.write("cases.txt", cases_text);
    return run_command(bench_ab() + " '" + cases + "' --rounds " + std::to_string(rounds) + " --ktune '" + ktune +
                       "' --json-out '" + dir.path() + "/ab.jsonl'" + more);
  }
  // The probe's side: the cases of `probe_text`, timed by the same counting ktune.
  CliResult run_ab(const std::string& main_text, const std::string& probe_text, int rounds) {
    const std::string ktune = counting_ktune();
    const std::string probe = dir.write("probe.txt", probe_text);
    return run(main_text, rounds, ktune, " --probe '" + ktune + "' --probe-cases '" + probe + "'");
  }
};

TEST_F(BenchAb, RoundsAlternateTheCasesAndTheMedianOfRoundsIsReported) {
  const auto r = run("# label | flags\none | --heads 16 --config 'a b'\ntwo | --heads 16\n", 3, counting_ktune());
  ASSERT_EQ(r.status, 0) << r.output;
  // Calls 0..5 alternate one, two, one, ...: one takes 100, 102, 104 us, two 101, 103, 105.
  EXPECT_TRUE(contains(r.output, "| one | 102.0 | 100.0, 102.0, 104.0 | `--heads 16 --config 'a b'` |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| two | 103.0 | 101.0, 103.0, 105.0 | `--heads 16` |")) << r.output;
  const std::string jsonl = db::test::read_file(dir.path() + "/ab.jsonl");
  EXPECT_TRUE(contains(jsonl, R"({"round": 2, "label": "two", "flags": "--heads 16", "result": {"median_us": 105}})"))
      << jsonl;
}

TEST_F(BenchAb, AFailingBenchIsMarkedAndFailsTheRun) {
  const auto r = run("good | --heads 16\nbad | --heads 99\n", 2, counting_ktune());
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| good | 100.5 | 100.0, 101.0 |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| bad | failed | failed, failed |")) << r.output;
  EXPECT_TRUE(contains(r.output, "ktune: error: no such key")) << r.output;
}

TEST_F(BenchAb, AnUnverifiedTimeFailsItsCase) {
  const std::string fake = dir.write("ktune", "#!/bin/sh\necho '{\"median_us\": 5, \"verified\": false}'\n");
  ASSERT_EQ(std::system(("chmod +x '" + fake + "'").c_str()), 0);
  const auto r = run("fast | --heads 16 --no-verify\n", 1, fake);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| fast | failed | failed |")) << r.output;
  EXPECT_TRUE(contains(r.output, "not verified")) << r.output;
}

TEST_F(BenchAb, AProbeSideFollowsMainsInEveryRoundAndMeetsItsCaseByLabel) {
  const auto r =
      run_ab("h12 | --heads 12\nh16 | --heads 16\n", "h16 | --heads 16\nh12 keys=32 | --heads 12 --keys 32\n", 2);
  ASSERT_EQ(r.status, 0) << r.output;
  // Calls 0..7: round 0 main h12 100, h16 101, probe h16 102, h12 keys=32 103; round 1 104..107.
  EXPECT_TRUE(contains(r.output, "| h16 | 103.0 | 104.0 | 1.010 | 101.0, 105.0 | 102.0, 106.0 | `--heads 16` |"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "| h12 keys=32 | 102.0 | 105.0 | 1.029 | 100.0, 104.0 | 103.0, 107.0 |")) << r.output;
  const std::string jsonl = db::test::read_file(dir.path() + "/ab.jsonl");
  EXPECT_TRUE(contains(jsonl, R"({"round": 1, "side": "probe", "label": "h16", "flags": "--heads 16", )"
                              R"("result": {"median_us": 106}})"))
      << jsonl;
}

TEST_F(BenchAb, AFailingProbeCaseFailsItsRowAndTheRun) {
  const auto r = run_ab("h16 | --heads 16\n", "h16 | --heads 99\n", 1);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| h16 | failed | | | 100.0 | failed |")) << r.output;
}

TEST_F(BenchAb, AProbeCaseWithoutACaseOfMainsIsRefusedBeforeAnyBench) {
  const auto r = run_ab("h16 | --heads 16\n", "h12 keys=32 | --heads 12\n", 1);
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "probe.txt: the probe's case 'h12 keys=32' has no case of main's")) << r.output;
  EXPECT_FALSE(std::ifstream(dir.path() + "/calls").good()) << "a bench ran";
  const auto lone = run("h16 | --heads 16\n", 1, counting_ktune(), " --probe-cases '" + dir.path() + "/probe.txt'");
  EXPECT_NE(lone.status, 0);
  EXPECT_TRUE(contains(lone.output, "--probe-cases needs --probe")) << lone.output;
}

TEST_F(BenchAb, MalformedCasesAreRefusedWithTheirPlace) {
  const std::string ktune = counting_ktune();
  const auto extra = run("one | --heads 16\ntwo | --heads 16 | >= 90% copy bandwidth\n", 1, ktune);
  EXPECT_NE(extra.status, 0);
  EXPECT_TRUE(contains(extra.output, "cases.txt:2: expected 'label | flags'")) << extra.output;
  const auto empty_flags = run("one |\n", 1, ktune);
  EXPECT_NE(empty_flags.status, 0);
  EXPECT_TRUE(contains(empty_flags.output, "cases.txt:1: expected 'label | flags'")) << empty_flags.output;
  const auto none = run("# only a comment\n", 1, ktune);
  EXPECT_NE(none.status, 0);
  EXPECT_TRUE(contains(none.output, "cases.txt: no cases")) << none.output;
}

}  // namespace
}  // namespace ktune::testing
