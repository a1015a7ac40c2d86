// scripts/bench_table.py: the target tables under results/<device>/ (mla_decode_targets.md). Its
// verdicts on hand-made bench objects, each on both sides of its threshold; its run mode over a
// stand-in ktune; and the committed tables, which must be what it renders of their JSON lines.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "cli/cli_run.hpp"
#include "unit/db_test_support.hpp"

namespace ktune::testing {
namespace {

// One `ktune bench --json` object with the fields the table reads.
std::string bench_object(double median_us, double frac_copy_bw, double tflops) {
  std::ostringstream s;
  s << R"({"config": {"rows": 16, "math": "mma"}, "device": {"name": "Test GPU"}, "copy_gbps": 4000.0, )"
    << R"("matrix_probe": "test mma", "matrix_tflops": 600.0, "median_us": )" << median_us
    << R"(, "p10_us": 1.0, "p90_us": 2.0, "gbps": 3000.0, "frac_copy_bw": )" << frac_copy_bw << R"(, "tflops": )"
    << tflops << R"(, "frac_matrix": 0.5})";
  return s.str();
}

// The same as bench_table --json-out writes it: label, target and command first.
std::string bench_row(const std::string& label, const std::string& target, double median_us, double frac_copy_bw,
                      double tflops) {
  return R"({"label": ")" + label + R"(", "target": ")" + target + R"(", "command": "ktune bench )" + label + R"(", )" +
         bench_object(median_us, frac_copy_bw, tflops).substr(1);
}

// The table without the "+ command" lines the run mode traces on stderr.
std::string table_of(const std::string& output) {
  std::istringstream in(output);
  std::string line, table;
  while (std::getline(in, line))
    if (line.rfind("+ ", 0) != 0) table += line + "\n";
  return table;
}

class BenchTable : public ScriptTest {
 protected:
  static std::string bench_table() { return python_script("bench_table.py"); }
  CliResult render(const std::string& jsonl) {
    return run_command(bench_table() + " --from-jsonl '" + dir.write("rows.jsonl", jsonl) + "'");
  }
};

TEST_F(BenchTable, TargetsAreJudgedOnEachSideOfTheirThreshold) {
  const auto r = render(
      bench_row("base", ">= 90% copy bandwidth", 100, 0.90, 100) + "\n" +
      bench_row("short", ">= 90% copy bandwidth", 100, 0.899, 100) + "\n" +
      bench_row("same", "<= 1.15 x base", 115, 0.5, 100) + "\n" + bench_row("slower", "<= 1.15 x base", 116, 0.5, 100) +
      "\n" + bench_row("barely", "<= 1.15 x base", 115.1, 0.5, 100) + "\n" +
      bench_row("fast", ">= 450 TFLOP/s", 100, 0.5, 450) + "\n" + bench_row("slow", ">= 450 TFLOP/s", 100, 0.5, 449.9) +
      "\n" + bench_row("orphan", "<= 1 x nobody", 100, 0.5, 100) + "\n");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Device: Test GPU; copy bandwidth measured in each run (first: 4000 GB/s)."))
      << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 90% copy bandwidth | 90.0% | yes |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 90% copy bandwidth | 89.9% | **no** |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| <= 1.15 x base | 1.150 x | yes |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| <= 1.15 x base | 1.160 x | **no** |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 450 TFLOP/s | 450.0 TFLOP/s | yes |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 450 TFLOP/s | 449.9 TFLOP/s | **no** |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| <= 1 x nobody | no row nobody | n/a |")) << r.output;
  // A ratio just past its bound shows the digit that fails it.
  EXPECT_TRUE(contains(r.output, "| <= 1.15 x base | 1.151 x | **no** |")) << r.output;
  EXPECT_TRUE(contains(r.output, "ktune bench orphan\n```")) << "the commands close the table:\n" << r.output;
}

// A target "on DEVICE" is judged on that device only: elsewhere the figure stands, with no verdict.
TEST_F(BenchTable, AnotherDevicesTargetIsShownButNotJudged) {
  const auto r = render(bench_row("here", ">= 90% copy bandwidth on Test GPU", 100, 0.95, 100) + "\n" +
                        bench_row("there", ">= 90% copy bandwidth on Other GPU", 100, 0.95, 100) + "\n" +
                        bench_row("short", ">= 90% copy bandwidth on Test GPU", 100, 0.5, 100) + "\n" +
                        bench_row("ratio", "<= 0.5 x here on Other GPU", 100, 0.5, 100) + "\n");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 90% copy bandwidth on Test GPU | 95.0% | yes |")) << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 90% copy bandwidth on Test GPU | 50.0% | **no** |")) << r.output;
  EXPECT_TRUE(
      contains(r.output, "| >= 90% copy bandwidth on Other GPU | 95.0% (the target is the Other GPU's) | n/a |"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "| <= 0.5 x here on Other GPU | 1.000 x (the target is the Other GPU's) | n/a |"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "Targets set for Other GPU are not judged on this device.\n")) << r.output;
  const auto own = render(bench_row("here", ">= 90% copy bandwidth on Test GPU", 100, 0.95, 100) + "\n");
  EXPECT_FALSE(contains(own.output, "not judged")) << own.output;
}

// A run whose matrix-core probe failed has no roof to print, and its table still renders.
TEST_F(BenchTable, AMissingMatrixRoofIsSaid) {
  std::string row = bench_row("x", ">= 90% copy bandwidth", 100, 0.95, 100);
  const std::string roof = R"("matrix_tflops": 600.0, )";
  row.replace(row.find(roof), roof.size(), "");
  const auto r = render(row + "\n");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Matrix-core roof: the test mma peak, not measured.")) << r.output;
}

// `ktune bench` names the probe by its instruction, as runs.matrix_probe does; builds before
// 2026-12-06 wrote "<instruction> peak", and the committed JSON lines of those runs still render.
TEST_F(BenchTable, TheRoofIsNamedByItsInstructionInOldRecordsToo) {
  const std::string row = bench_row("x", ">= 90% copy bandwidth", 100, 0.95, 100);
  const std::string probe = R"("matrix_probe": "test mma")";
  std::string old = row;
  old.replace(old.find(probe), probe.size(), R"("matrix_probe": "test mma peak")");
  for (const auto& r : {render(row + "\n"), render(old + "\n")}) {
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "Matrix-core roof: the test mma peak, measured in each run (first: 600 TFLOP/s).\n"))
        << r.output;
  }
}

TEST_F(BenchTable, AnUnknownTargetIsRefused) {
  const auto r = render(bench_row("x", "fast enough", 100, 0.5, 100) + "\n");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "unknown target 'fast enough'")) << r.output;
}

// Run mode: every case through `--ktune`, a failing bench as an error row, and --json-out's lines
// render the same table again.
TEST_F(BenchTable, RunsEachCaseAndKeepsWhatItMeasured) {
  const std::string fake =
      dir.write("ktune", "#!/bin/sh\n"
                         "case \"$*\" in *--heads\\ 99*) echo 'ktune: error: no such key' >&2; exit 1;; esac\n"
                         "echo '" +
                             bench_object(100, 0.95, 100) + "'\n");
  ASSERT_EQ(std::system(("chmod +x '" + fake + "'").c_str()), 0);
  const std::string cases = dir.write("cases.txt", "# label | flags | target\n"
                                                   "good | --heads 16 | >= 90% copy bandwidth\n"
                                                   "bad  | --heads 99 | >= 90% copy bandwidth\n"
                                                   "away | --heads 99 | >= 90% copy bandwidth on Other GPU\n");
  const std::string jsonl = dir.path() + "/out.jsonl";
  const auto r = run_command(bench_table() + " '" + cases + "' --kernel mla_decode --db x.db --ktune '" + fake +
                             "' --json-out '" + jsonl + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| good | rows=16 math=mma | 100.0 |")) << r.output;
  EXPECT_TRUE(
      contains(r.output, "| bad | | | | | | | | | >= 90% copy bandwidth | error: ktune: error: no such key | no |"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "| >= 90% copy bandwidth on Other GPU | error: ktune: error: no such key | n/a |"))
      << "another device's target fails no verdict here:\n"
      << r.output;
  EXPECT_TRUE(contains(r.output, fake + " bench --kernel mla_decode --heads 16 --db x.db --json")) << r.output;
  const auto again = run_command(bench_table() + " --from-jsonl '" + jsonl + "'");
  ASSERT_EQ(again.status, 0) << again.output;
  EXPECT_EQ(again.output, table_of(r.output));
}

TEST_F(BenchTable, AMalformedCaseLineIsRefusedWithItsPlace) {
  const std::string cases = dir.write("cases.txt", "good | --heads 16 | >= 90% copy bandwidth\nno bars here\n");
  const auto r = run_command(bench_table() + " '" + cases + "' --kernel mla_decode --db x.db --ktune /bin/false");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "cases.txt:2: expected 'label | flags | target'")) << r.output;
}

// Each committed target table is what the script renders of the JSON lines committed beside it.
TEST_F(BenchTable, CommittedTablesAreTheRenderOfTheirJsonLines) {
  int tables = 0;
  for (const auto& device : std::filesystem::directory_iterator(KTUNE_SOURCE_DIR "/results")) {
    const auto md = device.path() / "mla_decode_targets.md";
    if (!std::filesystem::exists(md)) continue;
    ++tables;
    const auto jsonl = device.path() / "mla_decode_targets.jsonl";
    const auto r = run_command(bench_table() + " --from-jsonl '" + jsonl.string() + "'");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(r.output, db::test::read_file(md.string())) << md;
  }
  EXPECT_GE(tables, 1) << "no results/<device>/mla_decode_targets.md";
}

}  // namespace
}  // namespace ktune::testing
