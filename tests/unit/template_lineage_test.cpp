// The older template hashes `ktune migrate` adopts (kernels/template_lineage.hpp), and what
// adopting them does to the template hash validator that codegen, package and the runtime apply.
#include "kernels/template_lineage.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dispatch_support.hpp"

namespace ktune {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kToday = dispatch::test::kHash;
constexpr std::string_view kSource = "5555555555555555";  // today's whole-source hash
constexpr std::string_view kOlder = "aaaaaaaaaaaaaaaa";   // -> kMiddle -> kToday
constexpr std::string_view kMiddle = "bbbbbbbbbbbbbbbb";
constexpr std::string_view kInert = "dddddddddddddddd";  // -> a hash that is not today's
constexpr std::string_view kOther = "feedfacefeedface";  // no pair at all

// In an order that makes the chain take two rounds: kOlder's pair comes before kMiddle's.
constexpr EquivalentTemplates kPairs[] = {
    {kOlder, kMiddle, "experiments/split-older"},
    {kInert, "eeeeeeeeeeeeeeee", "experiments/split-inert"},
    {kMiddle, kToday, "experiments/split-middle"},
};

std::vector<std::string> described(const std::vector<AdoptableHash>& hashes) {
  std::vector<std::string> out;
  for (const auto& h : hashes) out.push_back(h.from + ": " + describe(h));
  return out;
}

TEST(TemplateLineage, AdoptsTheSourceHashAndEveryChainThatEndsAtToday) {
  EXPECT_THAT(described(adoptable_template_hashes(kToday, kSource, kPairs)),
              ElementsAre("5555555555555555: these very templates, under the whole-source hash of older ktune builds",
                          "bbbbbbbbbbbbbbbb: the same machine code as today's templates (experiments/split-middle)",
                          "aaaaaaaaaaaaaaaa: the same machine code as today's templates (experiments/split-older, "
                          "experiments/split-middle)"));
}

// After a template change that alters the machine code, today's hash is another: the pairs that
// led to the old one adopt nothing, without anyone removing them.
TEST(TemplateLineage, PairsToAHashThatIsNotTodaysAreInert) {
  EXPECT_THAT(described(adoptable_template_hashes("9999999999999999", "9999999999999999", kPairs)), ElementsAre());
  EXPECT_THAT(described(adoptable_template_hashes(kMiddle, kMiddle, kPairs)),
              ElementsAre("aaaaaaaaaaaaaaaa: the same machine code as today's templates (experiments/split-older)"));
}

namespace dt = dispatch::test;

dispatch::Request request_with(const std::vector<AdoptableHash>& adoptable) {
  auto req = dt::request();
  req.adoptable = adoptable;
  return req;
}

std::string build_error(db::Database& db, const dispatch::Request& req) {
  try {
    dispatch::build_table(db, dt::toy(), req);
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

// What `ktune migrate` does with the hashes (cli/migrate.cpp).
std::vector<int> adopt(db::Database& db, const std::vector<AdoptableHash>& adoptable) {
  std::vector<db::HashAdoption> steps;
  for (const auto& h : adoptable) steps.push_back({dt::kFamily, h.from, std::string(kToday)});
  return db.adopt_template_hashes(steps);
}

// Runs under the hashes of a chain to today's templates: the refusal names `ktune migrate` for
// them, with the evidence; adopted, the table builds from them.
TEST(TemplateLineage, RunsOfEquivalentTemplatesAreRefusedWithMigrateThenAdoptedAndAccepted) {
  dt::ToyDb t;
  t.ok(t.run("sm_90a", "NVIDIA H200", std::string(kOlder)), dt::key(16, 2, 0, 1, 32), dt::config(32), 9.0);
  t.ok(t.run("sm_90a", "NVIDIA H200", std::string(kMiddle)), dt::key(32, 2, 0, 1, 32), dt::config(32), 9.0);
  const auto adoptable = adoptable_template_hashes(kToday, kToday, kPairs);
  const auto req = request_with(adoptable);
  EXPECT_THAT(build_error(t.db(), req),
              AllOf(HasSubstr("template hash validator"),
                    HasSubstr("; run 2 measured the same machine code as today's templates (experiments/split-middle); "
                              "run 1 measured the same machine code as today's templates (experiments/split-older, "
                              "experiments/split-middle): `ktune migrate --db " +
                              t.path() + "` gives them today's hash")));
  EXPECT_THAT(adopt(t.db(), adoptable), ElementsAre(1, 1));
  EXPECT_EQ(build_error(t.db(), req), "");
  EXPECT_THAT(adopt(t.db(), adoptable), ElementsAre(0, 0));  // nothing left
}

// Runs under a hash with no pair, or with a pair that does not lead to today's hash, measured
// other kernels: stale through the adoption, and the refusal does not name migrate.
TEST(TemplateLineage, RunsOfOtherTemplatesStayStale) {
  dt::ToyDb t;
  t.ok(t.run("sm_90a", "NVIDIA H200", std::string(kOther)), dt::key(16, 2, 0, 1, 32), dt::config(32), 9.0);
  t.ok(t.run("sm_90a", "NVIDIA H200", std::string(kInert)), dt::key(32, 2, 0, 1, 32), dt::config(32), 9.0);
  const auto adoptable = adoptable_template_hashes(kToday, kToday, kPairs);
  EXPECT_THAT(adopt(t.db(), adoptable), ElementsAre(0, 0));
  EXPECT_THAT(build_error(t.db(), request_with(adoptable)),
              AllOf(HasSubstr("template hash validator"), HasSubstr("2 key(s)"), HasSubstr(std::string(kOther)),
                    HasSubstr(std::string(kInert)), Not(HasSubstr("ktune migrate"))));
}

}  // namespace
}  // namespace ktune
