// scripts/ncu_opcode_mix.py: the instruction mix behind experiments/*/*_opcodes.md,
// on a hand-made export in the shape Nsight Compute prints (program output, then the SASS table).
#include <gtest/gtest.h>

#include <string>

#include "cli/cli_run.hpp"

namespace ktune::testing {
namespace {

// 4 opcodes, 100 executed warp instructions, 10 stall samples; one guarded instruction.
constexpr const char* kExport =
    "==PROF== Connected to process 1 (ktune)\n"
    "bench: mla_decode on NVIDIA H200\n"
    "\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\"\n"
    "\"0x0\",\"      IMAD.MOV.U32 R1, RZ, RZ, R2\",\"4\",\"40\"\n"
    "\"0x10\",\"      HMMA.16816.F32.BF16 R4, R8, R12, R4\",\"3\",\"30\"\n"
    "\"0x20\",\"@!P0  IMAD.U32 R1, R2, 0x10000, RZ\",\"1\",\"20\"\n"
    "\"0x30\",\"      EXIT\",\"2\",\"10\"\n";

// The script on an export written to `dir`, with `flags` before its path.
CliResult run_script(const CliTempDir& dir, const std::string& export_csv, const std::string& flags = "") {
  const std::string path = dir.write("export.csv", export_csv);
  return run_command(python_script("ncu_opcode_mix.py") + " " + flags + " '" + path + "'");
}

using NcuOpcodeMix = ScriptTest;

TEST_F(NcuOpcodeMix, SharesOfInstructionsAndStallsPerOpcodeLargestFirst) {
  const auto r = run_script(dir, kExport);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0.0 M warp instructions executed, 4 SASS instructions, 10 stall samples"))
      << r.output;
  // The guard predicate is not the opcode: IMAD.MOV.U32 and @!P0 IMAD.U32 are both IMAD.
  EXPECT_TRUE(contains(r.output, "| IMAD | 60.0 | 50.0 |\n| HMMA | 30.0 | 30.0 |\n| EXIT | 10.0 | 20.0 |")) << r.output;
}

TEST_F(NcuOpcodeMix, VariantsKeepTheModifiersAndTopCuts) {
  const auto r = run_script(dir, kExport, "--variants --top 2");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| IMAD.MOV.U32 | 40.0 | 40.0 |\n| HMMA.16816.F32.BF16 | 30.0 | 30.0 |\n"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "IMAD.U32")) << "--top 2 shows two rows:\n" << r.output;
}

TEST_F(NcuOpcodeMix, AnExportWithoutTheSassTableIsRefused) {
  const auto r = run_script(dir, "==PROF== No kernels were profiled.\n");
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "has no SASS table")) << r.output;
}

TEST_F(NcuOpcodeMix, AnExportWithNothingExecutedIsRefused) {
  const std::string export_csv =
      "\"Address\",\"Source\",\"Warp Stall Sampling (All Samples)\",\"Instructions Executed\"\n"
      "\"0x0\",\"EXIT\",\"0\",\"0\"\n";
  const auto r = run_script(dir, export_csv);
  EXPECT_NE(r.status, 0);
  EXPECT_TRUE(contains(r.output, "counts no executed instructions")) << r.output;
}

}  // namespace
}  // namespace ktune::testing
