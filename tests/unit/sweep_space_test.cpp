#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "sweep/filter.hpp"
#include "sweep/space.hpp"
#include "sweep_test_support.hpp"

namespace ktune::sweep {
namespace {
using testing::TempDir;
using testing::ToyFamily;

const char* kGood = R"(family = "toy"
description = "two keys per dtype"
[keys]
heads = [8, 16]
kv_dtype = ["bf16", "fp8"]
[configs]
rows = [16, 32, 64]
stages = 2
[shape]
ctx = 4096
batch = 32
)";

// The error text for `text`, or "" when it parsed.
std::string error_of(const std::string& text) {
  ToyFamily family;
  try {
    parse_space(text, "spaces/bad.toml", family);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// Each kind of mistake: the message names the file, the field (or entry) and the value.
struct BadCase {
  const char* name;
  std::string text;
  std::vector<std::string> must_mention;
};

// Every case is refused with a message that mentions what it must; `good`, which each case
// breaks, is accepted.
void expect_each_named(const std::vector<BadCase>& cases, const std::string& good) {
  for (const auto& c : cases) {
    auto err = error_of(c.text);
    ASSERT_FALSE(err.empty()) << c.name << ": accepted";
    for (const auto& m : c.must_mention)
      EXPECT_NE(err.find(m), std::string::npos) << c.name << ": '" << m << "' not in: " << err;
  }
  EXPECT_EQ(error_of(good), "") << "the good text must be accepted";
}

TEST(SweepSpace, ParsesEveryField) {
  ToyFamily family;
  auto s = parse_space(kGood, "good.toml", family);
  EXPECT_EQ(s.family, &family);
  EXPECT_EQ(s.origin, "good.toml");
  EXPECT_EQ(s.key_values, (std::vector<std::vector<int64_t>>{{8, 16}, {0, 1}}));
  using Grids = std::vector<std::vector<std::vector<int64_t>>>;
  EXPECT_EQ(s.config_grids, (Grids{{{16, 32, 64}, {2}}})) << "one [configs] table is one grid";
  EXPECT_EQ(s.shape, (Params{{"ctx", 4096}, {"batch", 32}}));
}

TEST(SweepSpace, EnumTakesIntegersAndBooleansTakeZeroOne) {
  ToyFamily family;
  auto s = parse_space(replace(kGood, R"(["bf16", "fp8"])", "[1, false]"), "x.toml", family);
  EXPECT_EQ(s.key_values[1], (std::vector<int64_t>{1, 0}));
}

TEST(SweepSpace, CombinationsVaryTheLastFieldFastest) {
  ToyFamily family;
  auto s = parse_space(kGood, "good.toml", family);
  auto keys = combinations(family.key_fields(), s.key_values);
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0], (Params{{"heads", 8}, {"kv_dtype", 0}}));
  EXPECT_EQ(keys[1], (Params{{"heads", 8}, {"kv_dtype", 1}}));
  EXPECT_EQ(keys[3], (Params{{"heads", 16}, {"kv_dtype", 1}}));
  EXPECT_EQ(space_configs(s).size(), 3u);
}

// Two grids: rows 16/32 at stages 2 and 4, then rows 32/64 at stage 2 (rows=32 stages=2 again).
const char* kGrids = R"(family = "toy"
[keys]
heads = 8
kv_dtype = "bf16"
[[configs]]
rows = [16, 32]
stages = [2, 4]
[[configs]]
rows = [32, 64]
stages = 2
[shape]
ctx = 4096
batch = 32
)";

TEST(SweepSpace, ConfigGridsAreUnitedInOrderEachConfigOnce) {
  ToyFamily family;
  auto s = parse_space(kGrids, "grids.toml", family);
  ASSERT_EQ(s.config_grids.size(), 2u);
  const std::vector<Params> expected = {{{"rows", 16}, {"stages", 2}},
                                        {{"rows", 16}, {"stages", 4}},
                                        {{"rows", 32}, {"stages", 2}},
                                        {{"rows", 32}, {"stages", 4}},
                                        {{"rows", 64}, {"stages", 2}}};
  EXPECT_EQ(space_configs(s), expected);
}

TEST(SweepSpace, EveryMistakeInAGridIsNamed) {
  const std::string first = "[[configs]]\nrows = [16, 32]\nstages = [2, 4]\n";
  const std::string second = "[[configs]]\nrows = [32, 64]\nstages = 2\n";
  std::vector<BadCase> cases = {
      {"grid lacks a field", replace(kGrids, "rows = [32, 64]\n", ""), {"bad.toml:8", "[configs #2]", "rows"}},
      {"grid with a stranger",
       replace(kGrids, "stages = 2\n", "stages = 2\nwarps = 4\n"),
       {"bad.toml:11", "[configs #2]", "warps"}},
      {"bad value in a grid", replace(kGrids, "[32, 64]", "[32, 999]"), {"bad.toml:9", "configs #2", "rows", "999"}},
      {"no grid",
       replace(replace(replace(kGrids, first, ""), second, ""), "[keys]", "configs = []\n[keys]"),
       {"bad.toml:2", "no grid"}},
      {"grid not a table",
       replace(replace(replace(kGrids, first, ""), second, ""), "[keys]", "configs = [3]\n[keys]"),
       {"bad.toml:2", "[configs #1]", "must be a table"}},
  };
  expect_each_named(cases, kGrids);
}

TEST(SweepFilter, AConfigFilterDropsTheGridsItEmptiesAndFailsOnlyWhenAllAre) {
  ToyFamily family;
  auto s = parse_space(kGrids, "grids.toml", family);
  apply_filters(s, {parse_where("rows=64")});
  using Grids = std::vector<std::vector<std::vector<int64_t>>>;
  EXPECT_EQ(s.config_grids, (Grids{{{64}, {2}}})) << "the first grid has no rows=64";
  auto t = parse_space(kGrids, "grids.toml", family);
  try {
    apply_filters(t, {parse_where("rows=48")});
    ADD_FAILURE() << "rows=48 is in no grid";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rows 16, 32, 64"), std::string::npos) << e.what();
  }
}

TEST(SweepSpace, EveryMistakeIsNamed) {
  std::vector<BadCase> cases = {
      {"not toml", replace(kGood, "heads = [8, 16]", "heads = [8, 16"), {"bad.toml:", "not valid TOML"}},
      {"other family",
       replace(kGood, R"(family = "toy")", R"(family = "mla_decode")"),
       {"bad.toml:1", "mla_decode", "toy"}},
      {"no family", replace(kGood, "family = \"toy\"\n", ""), {"bad.toml", "family"}},
      {"unknown entry", replace(kGood, "description", "descripton"), {"bad.toml:2", "descripton"}},
      {"unknown field",
       replace(kGood, "heads = [8, 16]", "heads = [8, 16]\nwarps = [4]"),
       {"bad.toml:5", "[keys]", "warps", "heads, kv_dtype"}},
      {"missing field", replace(kGood, "stages = 2\n", ""), {"bad.toml", "[configs]", "stages", "pipeline stages"}},
      {"missing table", replace(kGood, "[shape]\nctx = 4096\nbatch = 32\n", ""), {"bad.toml", "[shape]", "ctx"}},
      {"bad label",
       replace(kGood, R"("fp8"])", R"("fp16"])"),
       {"bad.toml:5", "[keys]", "kv_dtype", "fp16", "bf16, fp8"}},
      {"out of range", replace(kGood, "[8, 16]", "[8, 129]"), {"bad.toml:4", "[keys]", "heads", "129", "[1, 128]"}},
      {"float", replace(kGood, "ctx = 4096", "ctx = 4096.5"), {"bad.toml:10", "[shape]", "ctx", "floating-point"}},
      {"nested list", replace(kGood, "[16, 32, 64]", "[16, [32]]"), {"bad.toml:7", "[configs]", "rows", "a list"}},
      {"duplicate", replace(kGood, "[16, 32, 64]", "[16, 32, 16]"), {"bad.toml:7", "rows", "16", "twice"}},
      {"empty list", replace(kGood, "[16, 32, 64]", "[]"), {"bad.toml:7", "rows", "empty"}},
      {"shape list",
       replace(kGood, "batch = 32", "batch = [32, 64]"),
       {"bad.toml:11", "[shape]", "batch", "one value"}},
      {"not a table",
       replace(kGood, "[keys]\nheads = [8, 16]\nkv_dtype = [\"bf16\", \"fp8\"]\n", "keys = 3\n"),
       {"bad.toml:3", "keys", "must be a table"}},
  };
  expect_each_named(cases, kGood);
}

TEST(SweepSpace, LoadsFilesAndExplainsUnknownNames) {
  ToyFamily family;
  TempDir tmp;
  auto path = tmp.write("mine.toml", kGood);
  EXPECT_EQ(load_space(path, family).origin, path);
  try {
    load_space("nonexistent", family);
    FAIL() << "an unknown name must be refused";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("nonexistent"), std::string::npos) << msg;
    EXPECT_NE(msg.find("built-in space of toy"), std::string::npos) << msg;
  }
  EXPECT_THROW(load_space(tmp.path() + "/absent.toml", family), Error);
  EXPECT_TRUE(builtin_spaces("toy").empty());
}

TEST(SweepFilter, NarrowsKeysAndConfigs) {
  ToyFamily family;
  auto s = parse_space(kGood, "good.toml", family);
  apply_filters(s, {field_filter("kv_dtype", "fp8", "--kv-dtype"), parse_where("rows=64,16"), parse_where("heads=16")});
  EXPECT_EQ(s.key_values, (std::vector<std::vector<int64_t>>{{16}, {1}}));
  EXPECT_EQ(s.config_grids[0][0], (std::vector<int64_t>{16, 64})) << "the space's order is kept";
}

TEST(SweepFilter, RefusesWhatItCannotApply) {
  ToyFamily family;
  auto expect_error = [&](FieldFilter f, std::vector<std::string> mentions) {
    auto s = parse_space(kGood, "good.toml", family);
    try {
      apply_filters(s, {f});
      ADD_FAILURE() << f.field << ": accepted";
    } catch (const Error& e) {
      for (const auto& m : mentions)
        EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << m << " not in: " << e.what();
    }
  };
  expect_error(parse_where("warps=4"), {"--where", "warps", "heads, kv_dtype, rows, stages"});
  expect_error(field_filter("heads", "12", "--heads"), {"--heads", "heads=12", "good.toml", "8, 16"});
  expect_error(field_filter("kv_dtype", "fp16", "--kv-dtype"), {"--kv-dtype", "fp16"});
  EXPECT_THROW(parse_where("heads"), Error);
  EXPECT_THROW(parse_where("=4"), Error);
  EXPECT_THROW(parse_where("heads="), Error);
  EXPECT_THROW(parse_where("heads=8,,16"), Error);
  EXPECT_EQ(parse_where("heads=8,16").values, (std::vector<std::string>{"8", "16"}));
}

}  // namespace
}  // namespace ktune::sweep
