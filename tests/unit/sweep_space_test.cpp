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

TEST(SweepSpace, ParsesEveryField) {
  ToyFamily family;
  auto s = parse_space(kGood, "good.toml", family);
  EXPECT_EQ(s.family, &family);
  EXPECT_EQ(s.origin, "good.toml");
  EXPECT_EQ(s.key_values, (std::vector<std::vector<int64_t>>{{8, 16}, {0, 1}}));
  EXPECT_EQ(s.config_values, (std::vector<std::vector<int64_t>>{{16, 32, 64}, {2}}));
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
  EXPECT_EQ(combinations(family.config_fields(), s.config_values).size(), 3u);
}

// Each kind of mistake: the message names the file, the field (or entry) and the value.
struct BadCase {
  const char* name;
  std::string text;
  std::vector<std::string> must_mention;
};

TEST(SweepSpace, EveryMistakeIsNamed) {
  std::vector<BadCase> cases = {
      {"not toml", replace(kGood, "heads = [8, 16]", "heads = [8, 16"), {"bad.toml:", "not valid TOML"}},
      {"other family", replace(kGood, R"(family = "toy")", R"(family = "mla_decode")"), {"bad.toml:1", "mla_decode", "toy"}},
      {"no family", replace(kGood, "family = \"toy\"\n", ""), {"bad.toml", "family"}},
      {"unknown entry", replace(kGood, "description", "descripton"), {"bad.toml:2", "descripton"}},
      {"unknown field", replace(kGood, "heads = [8, 16]", "heads = [8, 16]\nwarps = [4]"), {"bad.toml:5", "[keys]", "warps", "heads, kv_dtype"}},
      {"missing field", replace(kGood, "stages = 2\n", ""), {"bad.toml", "[configs]", "stages", "pipeline stages"}},
      {"missing table", replace(kGood, "[shape]\nctx = 4096\nbatch = 32\n", ""), {"bad.toml", "[shape]", "ctx"}},
      {"bad label", replace(kGood, R"("fp8"])", R"("fp16"])"), {"bad.toml:5", "[keys]", "kv_dtype", "fp16", "bf16, fp8"}},
      {"out of range", replace(kGood, "[8, 16]", "[8, 129]"), {"bad.toml:4", "[keys]", "heads", "129", "[1, 128]"}},
      {"float", replace(kGood, "ctx = 4096", "ctx = 4096.5"), {"bad.toml:10", "[shape]", "ctx", "floating-point"}},
      {"nested list", replace(kGood, "[16, 32, 64]", "[16, [32]]"), {"bad.toml:7", "[configs]", "rows", "a list"}},
      {"duplicate", replace(kGood, "[16, 32, 64]", "[16, 32, 16]"), {"bad.toml:7", "rows", "16", "twice"}},
      {"empty list", replace(kGood, "[16, 32, 64]", "[]"), {"bad.toml:7", "rows", "empty"}},
      {"shape list", replace(kGood, "batch = 32", "batch = [32, 64]"), {"bad.toml:11", "[shape]", "batch", "one value"}},
      {"not a table", replace(kGood, "[keys]\nheads = [8, 16]\nkv_dtype = [\"bf16\", \"fp8\"]\n", "keys = 3\n"), {"bad.toml:3", "keys", "must be a table"}},
  };
  for (const auto& c : cases) {
    auto err = error_of(c.text);
    ASSERT_FALSE(err.empty()) << c.name << ": accepted";
    for (const auto& m : c.must_mention) EXPECT_NE(err.find(m), std::string::npos) << c.name << ": '" << m << "' not in: " << err;
  }
  EXPECT_EQ(error_of(kGood), "") << "the good text must be accepted";
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
  EXPECT_EQ(s.config_values[0], (std::vector<int64_t>{16, 64})) << "the space's order is kept";
}

TEST(SweepFilter, RefusesWhatItCannotApply) {
  ToyFamily family;
  auto expect_error = [&](FieldFilter f, std::vector<std::string> mentions) {
    auto s = parse_space(kGood, "good.toml", family);
    try {
      apply_filters(s, {f});
      ADD_FAILURE() << f.field << ": accepted";
    } catch (const Error& e) {
      for (const auto& m : mentions) EXPECT_NE(std::string(e.what()).find(m), std::string::npos) << m << " not in: " << e.what();
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
