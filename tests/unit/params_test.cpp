// Params and FieldSpec: canonical text (the DB key form), labels of enumerations, validation.
#include "common/params.hpp"

#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"

namespace ktune {
namespace {

using ::testing::HasSubstr;

const FieldSpec kHeads{"heads", "query heads", 1, 128};
const FieldSpec kKvDtype{"kv_dtype", "cache type", 0, 2, {"bf16", "fp8_e4m3fn", "fp8_e4m3fnuz"}};
const std::vector<FieldSpec> kSpecs{kHeads, {"block_len", "", 1, 16}, {"causal", "", 0, 1}, kKvDtype};

template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(FieldSpec, FormatsIntegersAndLabels) {
  EXPECT_FALSE(kHeads.is_enum());
  EXPECT_TRUE(kKvDtype.is_enum());
  EXPECT_EQ(kHeads.format(16), "16");
  EXPECT_EQ(kKvDtype.format(0), "bf16");
  EXPECT_EQ(kKvDtype.format(2), "fp8_e4m3fnuz");
}

TEST(FieldSpec, FormatRejectsOutOfRange) {
  EXPECT_EQ(error_of([] { kKvDtype.format(3); }), "kv_dtype=3 is out of range [0, 2]");
  EXPECT_EQ(error_of([] { kKvDtype.format(-1); }), "kv_dtype=-1 is out of range [0, 2]");
  EXPECT_EQ(error_of([] { kHeads.format(0); }), "heads=0 is out of range [1, 128]");
  EXPECT_EQ(error_of([] { kHeads.format(128); }), "<no error>");
}

TEST(FieldSpec, ParsesLabelsAndIntegers) {
  EXPECT_EQ(kKvDtype.parse("fp8_e4m3fn"), 1);
  EXPECT_EQ(kKvDtype.parse("fp8_e4m3fnuz"), 2);
  EXPECT_EQ(kKvDtype.parse("2"), 2);  // the raw value is accepted too
  EXPECT_EQ(kHeads.parse("96"), 96);
  EXPECT_EQ(kHeads.parse("1"), 1);
}

TEST(FieldSpec, ParseErrorsNameTheFieldAndTheAcceptedValues) {
  const std::string labels = "is not one of bf16, fp8_e4m3fn, fp8_e4m3fnuz";
  EXPECT_EQ(error_of([] { kKvDtype.parse("fp16"); }), "kv_dtype: 'fp16' " + labels);
  EXPECT_EQ(error_of([] { kKvDtype.parse("3"); }), "kv_dtype: '3' " + labels);
  EXPECT_EQ(error_of([] { kKvDtype.parse("BF16"); }), "kv_dtype: 'BF16' " + labels);
  for (const std::string bad : {"0", "129", "", "12x", " 12", "+12", "1.5", "0x10", "99999999999999999999"})
    EXPECT_EQ(error_of([&] { kHeads.parse(bad); }), "heads: '" + bad + "' is not an integer in [1, 128]") << bad;
}

TEST(Params, SetUpdatesInPlaceAndKeepsInsertionOrder) {
  Params p;
  EXPECT_TRUE(p.empty());
  p.set("heads", 16);
  p.set("block_len", 2);
  p.set("heads", 32);
  EXPECT_EQ(p.canonical(), "heads=32,block_len=2");
  EXPECT_EQ(p.find("heads"), 32);
  EXPECT_EQ(p.find("causal"), std::nullopt);
  EXPECT_EQ(p.at("block_len"), 2);
  EXPECT_EQ(error_of([&] { p.at("causal"); }), "missing parameter 'causal' in {heads=32,block_len=2}");
}

TEST(Params, CanonicalTextRoundTrips) {
  const Params cases[] = {
      {},
      {{"heads", 16}, {"block_len", 2}, {"causal", 0}, {"kv_dtype", 1}},
      {{"x", -7}},
      {{"big", std::numeric_limits<int64_t>::max()}, {"small", std::numeric_limits<int64_t>::min()}},
  };
  EXPECT_EQ(cases[1].canonical(), "heads=16,block_len=2,causal=0,kv_dtype=1");
  for (const auto& p : cases) {
    const Params back = Params::parse_canonical(p.canonical());
    EXPECT_EQ(back, p) << p.canonical();
    EXPECT_EQ(back.canonical(), p.canonical());
  }
}

TEST(Params, OrderIsPartOfIdentity) {
  const Params ab{{"a", 1}, {"b", 2}}, ba{{"b", 2}, {"a", 1}};
  EXPECT_NE(ab, ba);
  EXPECT_NE(ab.canonical(), ba.canonical());
  EXPECT_LT((Params{{"a", 1}}), (Params{{"a", 2}}));
}

TEST(Params, MalformedCanonicalTextIsRejected) {
  const std::pair<std::string, std::string> cases[] = {
      {"heads", "malformed parameter 'heads' (want name=integer)"},
      {"=3", "malformed parameter '=3' (want name=integer)"},
      {"heads=", "malformed parameter 'heads=' (want name=integer)"},
      {"heads=x", "malformed parameter 'heads=x' (want name=integer)"},
      {"heads=1.5", "malformed parameter 'heads=1.5' (want name=integer)"},
      {"heads=1,,b=2", "malformed parameter '' (want name=integer)"},
      {"heads=1,", "malformed parameter '' (want name=integer)"},
      {",heads=1", "malformed parameter '' (want name=integer)"},
      {"heads=1,heads=2", "duplicate parameter 'heads'"},
      {"heads=016", "parameters 'heads=016' are not in canonical form (want 'heads=16')"},
      {"a=1,heads=-0", "parameters 'a=1,heads=-0' are not in canonical form (want 'a=1,heads=0')"},
  };
  for (const auto& [text, message] : cases)
    EXPECT_EQ(error_of([&] { Params::parse_canonical(text); }), message) << text;
  EXPECT_EQ(Params::parse_canonical("heads=1,b=2").canonical(), "heads=1,b=2");
}

TEST(Params, PrettyUsesLabelsWhereTheSpecHasThem) {
  const Params p{{"heads", 16}, {"block_len", 2}, {"causal", 0}, {"kv_dtype", 1}};
  EXPECT_EQ(p.pretty(kSpecs), "heads=16 block_len=2 causal=0 kv_dtype=fp8_e4m3fn");
  EXPECT_EQ(p.pretty({}), "heads=16 block_len=2 causal=0 kv_dtype=1");
  // An out-of-range enum value is shown raw rather than throwing: pretty() is for messages.
  EXPECT_EQ((Params{{"kv_dtype", 7}}).pretty(kSpecs), "kv_dtype=7");
}

TEST(ParamsValidate, AcceptsExactlyTheDeclaredFieldsInOrderAndRange) {
  const Params good{{"heads", 16}, {"block_len", 2}, {"causal", 0}, {"kv_dtype", 2}};
  EXPECT_EQ(error_of([&] { validate(good, kSpecs, "key"); }), "<no error>");

  EXPECT_EQ(error_of([] {
              validate(Params{{"heads", 16}}, kSpecs, "key");
            }),
            "key has 1 fields, expected 4 ({heads=16})");
  EXPECT_EQ(error_of([] {
              validate(Params{{"heads", 16}, {"causal", 0}, {"block_len", 2}, {"kv_dtype", 0}}, kSpecs, "key");
            }),
            "key: field 1 is 'causal', expected 'block_len'");
  EXPECT_EQ(error_of([] {
              validate(Params{{"heads", 16}, {"block_len", 17}, {"causal", 0}, {"kv_dtype", 0}}, kSpecs, "key");
            }),
            "key: block_len=17 is out of range [1, 16]");
  EXPECT_THAT(error_of([] {
                validate(Params{{"heads", 16}, {"block_len", 1}, {"causal", 0}, {"kv_dtype", 3}}, kSpecs, "config");
              }),
              HasSubstr("config: kv_dtype=3"));
}

}  // namespace
}  // namespace ktune
