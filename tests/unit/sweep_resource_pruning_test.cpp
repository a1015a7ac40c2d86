// The sweep prunes a compiled config whose code object says a kernel spills or fits not one wave
// per SIMD: recorded infeasible with the reason, never sent to a worker; a key left with only such
// configs is a no_config gap. On a toy gfx942 device whose compiler writes AMDGPU metadata notes.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "amdgpu_elf.hpp"
#include "db/database.hpp"
#include "sweep/runner.hpp"
#include "sweep_toy.hpp"

namespace ktune::testing {
namespace {

using ::testing::HasSubstr;

// Answers hello as a gfx942 device, and times rows=16 only: anything else reaching it is a fault.
const char* kWorker = R"(#!/bin/sh
while IFS= read -r line; do
  case "$line" in
    *'"op":"hello"'*) echo '{"ready":true,"device":{"name":"Toy MI300","arch":"gfx942"},"copy_gbps":1000.0,"matrix_tflops":0}' ;;
    *'"op":"exit"'*) exit 0 ;;
    *'"config":"rows=16,'*) echo '{"status":"ok","detail":"","max_abs_err":0.001,"rel_l2_err":0.0001,"median_us":10,"p10_us":10,"p90_us":10,"samples":20,"rel_ci":null,"stop":"converged","fully_timed":true,"bytes":5000000,"flops":1000000,"fatal":false,"rss_bytes":1048576,"device_used_bytes":0,"time":{"setup_ms":1,"load_ms":1,"verify_ms":1,"screen_ms":1,"full_ms":1,"timed_ms":1,"total_ms":6}}' ;;
    *) echo "a pruned candidate reached the worker" >&2; exit 9 ;;
  esac
done
)";

// Code objects with a metadata note: toy<64, ...> spills 32 bytes per lane, toy<96, ...> declares
// more LDS than a CU has; the rest use a little of everything.
class AmdCompiler : public jit::Compiler {
 public:
  std::string version() const override { return "fake amd 1.0"; }
  backend::CompileResult compile(const backend::CompileRequest& req) const override {
    backend::CompileResult r;
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& n : req.name_expressions) {
      r.lowered_names.push_back("lowered " + n);
      auto k = test_support::sample_kernel(r.lowered_names.back().c_str());
      if (n.starts_with("toy<64")) k[".private_segment_fixed_size"] = 32;
      if (n.starts_with("toy<96")) k[".group_segment_fixed_size"] = 65 * 1024;
      kernels.push_back(k);
    }
    r.code = test_support::elf_with_note(test_support::msgpack({{"amdhsa.kernels", kernels}}));
    return r;
  }
};

struct SweepResourcePruning : ::testing::Test, ToySweep {
  std::unique_ptr<db::Database> db = db::Database::open(tmp.path() + "/t.db", true);
  AmdCompiler amd;
  SweepResourcePruning() : ToySweep(kWorker) {}

  sweep::SweepSummary sweep(std::vector<int64_t> rows) {
    auto p = provenance();
    p.backend = "hip";
    p.device_name = "Toy MI300";
    p.arch = "gfx942";
    jit::CompileSettings cs;
    cs.arch = "gfx942";
    return sweep::run_sweep(space({32}, std::move(rows), {1}), *db, p, amd, cs, options);
  }
};

TEST_F(SweepResourcePruning, ASpillingConfigIsRecordedInfeasibleAndNeverRun) {
  const auto s = sweep({16, 64, 96});
  EXPECT_EQ(s.ok, 1u);
  EXPECT_EQ(s.pruned, 2u);
  EXPECT_EQ(s.fault, 0u) << "no pruned candidate may reach the worker";
  std::map<int64_t, db::Measurement> by_rows;
  for (auto& m : db->measurements()) by_rows[m.config.at("rows")] = m;
  ASSERT_EQ(by_rows.size(), 3u);
  EXPECT_EQ(by_rows[16].status, db::Status::ok);
  EXPECT_EQ(by_rows[64].status, db::Status::infeasible);
  EXPECT_THAT(by_rows[64].detail, HasSubstr("spills: toy<64, 1> uses 32 bytes of scratch per lane"));
  EXPECT_EQ(by_rows[96].status, db::Status::infeasible);
  EXPECT_THAT(by_rows[96].detail, HasSubstr("fits not one wave per SIMD"));
  EXPECT_TRUE(db->gaps().empty());
}

TEST_F(SweepResourcePruning, AKeyWithOnlyPrunedConfigsIsANoConfigGap) {
  const auto s = sweep({64, 96});
  EXPECT_EQ(s.pruned, 2u);
  const auto gaps = db->gaps();
  ASSERT_EQ(gaps.size(), 1u);
  EXPECT_EQ(gaps[0].reason, db::GapReason::no_config);
  EXPECT_THAT(gaps[0].detail, HasSubstr("2 infeasible"));
  EXPECT_THAT(gaps[0].detail, HasSubstr("spills"));
}

}  // namespace
}  // namespace ktune::testing
