#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep/plan.hpp"
#include "sweep_test_support.hpp"

namespace ktune::sweep {
namespace {
using testing::ToyFamily;

// heads {2, 16} x kv_dtype {bf16, fp8}; rows {16, 64} x stages {2, 4}. ToyFamily refuses
// rows > 4 * heads (so heads=2 cannot run rows 16 or 64 at all) and 4 stages with fp8.
Space space(const Family& f) {
  Space s;
  s.origin = "test";
  s.family = &f;
  s.key_values = {{2, 16}, {0, 1}};
  s.config_grids = {{{16, 64}, {2, 4}}};
  s.shape = Params{{"ctx", 100}, {"batch", 1}};
  return s;
}

const TargetLimits kTarget{"gfx90a", 64};

TEST(SweepPlan, PrunesInfeasibleConfigsAndCountsThem) {
  ToyFamily f;
  auto plan = build_plan(space(f), kTarget);
  ASSERT_EQ(plan.keys.size(), 4u);
  EXPECT_EQ(plan.infeasible, 4u + 4u + 2u) << "heads=2: all 8; heads=16 fp8: stages=4 twice";
  EXPECT_EQ(plan.candidates, 16u - plan.infeasible);
  EXPECT_TRUE(plan.keys[0].no_config());
  EXPECT_EQ(plan.keys[0].infeasible_reasons, (std::vector<std::pair<std::string, size_t>>{{"rows > 4 * heads", 4}}));
  const auto& fp8 = plan.keys[3];
  EXPECT_EQ(fp8.key, (Params{{"heads", 16}, {"kv_dtype", 1}}));
  EXPECT_FALSE(fp8.no_config());
  EXPECT_EQ(fp8.configs,
            (std::vector<Params>{Params{{"rows", 16}, {"stages", 2}}, Params{{"rows", 64}, {"stages", 2}}}));
  EXPECT_EQ(fp8.infeasible_reasons,
            (std::vector<std::pair<std::string, size_t>>{{"fp8 needs fewer than 4 stages", 2}}));
  EXPECT_EQ(plan.keys[2].configs.size(), 4u) << "heads=16 bf16 keeps every config";
}

TEST(SweepPlan, ResumeSkipsWhatIsDone) {
  ToyFamily f;
  Params k{{"heads", 16}, {"kv_dtype", 0}};
  DoneSet done = {{k, Params{{"rows", 16}, {"stages", 2}}},
                  {k, Params{{"rows", 64}, {"stages", 4}}},
                  // done but now infeasible: counted as infeasible, not as done
                  {Params{{"heads", 2}, {"kv_dtype", 0}}, Params{{"rows", 16}, {"stages", 2}}}};
  auto full = build_plan(space(f), kTarget);
  auto plan = build_plan(space(f), kTarget, done);
  EXPECT_EQ(plan.done, 2u);
  EXPECT_EQ(plan.candidates, full.candidates - 2);
  EXPECT_EQ(plan.keys[2].configs,
            (std::vector<Params>{Params{{"rows", 16}, {"stages", 4}}, Params{{"rows", 64}, {"stages", 2}}}));
  EXPECT_EQ(plan.keys[2].done, 2u);
}

TEST(SweepPlan, KeyWithEverythingDoneIsNoGap) {
  ToyFamily f;
  auto s = space(f);
  s.key_values = {{16}, {1}};
  DoneSet done = {{Params{{"heads", 16}, {"kv_dtype", 1}}, Params{{"rows", 16}, {"stages", 2}}},
                  {Params{{"heads", 16}, {"kv_dtype", 1}}, Params{{"rows", 64}, {"stages", 2}}}};
  auto plan = build_plan(s, kTarget, done);
  ASSERT_EQ(plan.keys.size(), 1u);
  EXPECT_TRUE(plan.keys[0].configs.empty());
  EXPECT_FALSE(plan.keys[0].no_config()) << "configs ran before: not a no_config gap";
}

TEST(SweepPlan, ShardsSplitTheKeys) {
  ToyFamily f;
  auto a = build_plan(space(f), kTarget, {}, parse_shard("0/2"));
  auto b = build_plan(space(f), kTarget, {}, parse_shard("1/2"));
  ASSERT_EQ(a.keys.size(), 2u);
  ASSERT_EQ(b.keys.size(), 2u);
  EXPECT_EQ(a.keys[0].key, (Params{{"heads", 2}, {"kv_dtype", 0}}));
  EXPECT_EQ(b.keys[0].key, (Params{{"heads", 2}, {"kv_dtype", 1}}));
  EXPECT_EQ(a.candidates + b.candidates, build_plan(space(f), kTarget).candidates);
  for (const char* bad : {"2/2", "-1/2", "1", "a/2", "0/0", "1/2x"}) EXPECT_THROW(parse_shard(bad), Error) << bad;
}

}  // namespace
}  // namespace ktune::sweep
