// Comparison of device outputs with the double reference: element-wise bounds, the rel-L2 bound,
// NaN handling, the failure detail, and merging verdicts of several outputs.
#include "verify/compare.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ktune::verify {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const Tolerance kTol{1e-3, 1e-2, 1e-2};

std::vector<double> ramp(size_t n) {
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = 0.25 + 0.5 * static_cast<double>(i);
  return r;
}

std::vector<float> as_float(const std::vector<double>& r) { return {r.begin(), r.end()}; }

TEST(Compare, EqualOutputPassesWithZeroError) {
  const auto ref = ramp(100);
  const auto out = as_float(ref);
  const Verdict v = compare("o", out, ref, kTol);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_EQ(v.max_abs_err, 0.0);
  EXPECT_EQ(v.rel_l2_err, 0.0);
  EXPECT_EQ(v.detail, "");
}

TEST(Compare, ErrorWithinAtolPlusRtolPassesAndJustBeyondFails) {
  const std::vector<double> ref{2.0};
  const double bound = kTol.atol + kTol.rtol * 2.0;
  const std::vector<float> inside{static_cast<float>(2.0 + 0.9 * bound)};
  const std::vector<float> outside{static_cast<float>(2.0 + 1.1 * bound)};
  const Tolerance loose_l2{kTol.atol, kTol.rtol, 1.0};
  EXPECT_TRUE(compare("o", inside, ref, loose_l2).ok);
  EXPECT_FALSE(compare("o", outside, ref, loose_l2).ok);
}

TEST(Compare, OneElementOffFailsAndTheDetailNamesIt) {
  const auto ref = ramp(100);
  auto out = as_float(ref);
  out[37] += 0.5f;
  const Verdict v = compare("o", out, ref, kTol);
  EXPECT_FALSE(v.ok);
  EXPECT_NEAR(v.max_abs_err, 0.5, 1e-6);
  EXPECT_GT(v.rel_l2_err, 0.0);
  EXPECT_THAT(v.detail, HasSubstr("o: 1 of 100 elements"));
  EXPECT_THAT(v.detail, HasSubstr("[37]"));
  EXPECT_THAT(v.detail, HasSubstr("out=19"));
  EXPECT_THAT(v.detail, HasSubstr("ref=18.75"));
  EXPECT_THAT(v.detail, HasSubstr("err=0.5"));
}

std::string bhd_name(size_t i, const void* ctx) {
  const int d = *static_cast<const int*>(ctx);
  return "row=" + std::to_string(i / d) + " d=" + std::to_string(i % d);
}

TEST(Compare, IndexNameFormatsTheFirstFailure) {
  const auto ref = ramp(40);
  auto out = as_float(ref);
  out[23] = -1.0f;
  out[31] = -1.0f;
  const int dim = 8;
  const Verdict v = compare("lse", out, ref, kTol, bhd_name, &dim);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.detail, HasSubstr("lse: 2 of 40"));
  EXPECT_THAT(v.detail, HasSubstr("first at row=2 d=7 ([23])"));
  EXPECT_THAT(v.detail, Not(HasSubstr("row=3")));
}

TEST(Compare, NanOrInfInTheOutputNeverPasses) {
  const auto ref = ramp(10);
  const Tolerance anything{1e30, 1e30, 1e30};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    auto out = as_float(ref);
    EXPECT_TRUE(compare("o", out, ref, anything).ok);
    out[4] = bad;
    const Verdict v = compare("o", out, ref, anything);
    EXPECT_FALSE(v.ok) << bad;
    EXPECT_EQ(v.max_abs_err, std::numeric_limits<double>::infinity());
    EXPECT_EQ(v.rel_l2_err, std::numeric_limits<double>::infinity());
    EXPECT_THAT(v.detail, HasSubstr("(1 NaN/Inf)"));
    EXPECT_THAT(v.detail, HasSubstr("[4]"));
  }
}

TEST(Compare, InfFailsEvenUnderAnInfiniteTolerance) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> ref{1.0, 2.0};
  const std::vector<float> out{1.0f, std::numeric_limits<float>::infinity()};
  const Verdict v = compare("o", out, ref, Tolerance{inf, inf, inf});
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.detail, HasSubstr("(1 NaN/Inf)"));
  EXPECT_TRUE(compare("o", std::vector<float>{1.0f, 7.0f}, ref, Tolerance{inf, inf, inf}).ok);
}

TEST(Compare, NanInTheReferenceFails) {
  auto ref = ramp(10);
  const auto out = as_float(ref);
  ref[2] = std::numeric_limits<double>::quiet_NaN();
  const Verdict v = compare("o", out, ref, Tolerance{1e30, 1e30, 1e30});
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.detail, HasSubstr("ref=nan"));
}

TEST(Compare, UniformTinyErrorPassesElementwiseButTheRelL2BoundCatchesIt) {
  const auto ref = ramp(1000);
  std::vector<float> out(ref.size());
  for (size_t i = 0; i < ref.size(); ++i) out[i] = static_cast<float>(ref[i] * (1 + 5e-3));  // rtol is 1e-2
  const Verdict strict = compare("o", out, ref, Tolerance{0, 1e-2, 1e-3});
  EXPECT_FALSE(strict.ok);
  EXPECT_NEAR(strict.rel_l2_err, 5e-3, 1e-5);
  EXPECT_THAT(strict.detail, HasSubstr("every element within tolerance but rel_l2"));
  const Verdict loose = compare("o", out, ref, Tolerance{0, 1e-2, 1e-2});
  EXPECT_TRUE(loose.ok) << loose.detail;
}

TEST(Compare, AllZeroReference) {
  const std::vector<double> ref(5, 0.0);
  std::vector<float> out(5, 0.0f);
  EXPECT_TRUE(compare("o", out, ref, kTol).ok);
  out[1] = 1e-4f;  // inside atol, but any error is infinitely large relative to a zero norm
  const Verdict v = compare("o", out, ref, kTol);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.rel_l2_err, std::numeric_limits<double>::infinity());
}

TEST(Compare, SizeMismatchIsAFailingVerdictNotAnException) {
  const auto ref = ramp(10);
  const auto out = as_float(ramp(9));
  Verdict v;
  ASSERT_NO_THROW(v = compare("o", out, ref, Tolerance{1e30, 1e30, 1e30}));
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.max_abs_err, std::numeric_limits<double>::infinity());
  EXPECT_EQ(v.detail, "o: output has 9 elements but the reference has 10");
}

// Outputs of several chunks compare on several cores: the verdict is that of one pass in order.
TEST(Compare, ChunksAddUpToTheWholeOutput) {
  const size_t n = 3 * kCompareChunk + 5;  // three whole chunks and a short one
  const auto ref = ramp(n);
  auto out = as_float(ref);
  const Verdict clean = compare("o", out, ref, kTol);
  EXPECT_TRUE(clean.ok) << clean.detail;
  // Failures in the last two chunks (none in the first two): the first is the lowest index of
  // them, the counts are the sums over chunks, the largest error wherever it is.
  const size_t a = 2 * kCompareChunk + 7, b = 3 * kCompareChunk + 1, c = 3 * kCompareChunk + 3;
  out[a] *= 2;
  out[b] *= 3;
  out[c] = std::numeric_limits<float>::quiet_NaN();
  const Verdict v = compare("o", out, ref, kTol);
  EXPECT_FALSE(v.ok);
  EXPECT_THAT(v.detail,
              HasSubstr(fmt::format("o: 3 of {} elements out of tolerance (1 NaN/Inf); first at [{}]", n, a)));
  EXPECT_EQ(v.max_abs_err, std::numeric_limits<double>::infinity()) << "the NaN of the last chunk";
  out[c] = static_cast<float>(ref[c]);
  const Verdict finite = compare("o", out, ref, kTol);
  EXPECT_EQ(finite.max_abs_err, 2 * ref[b]) << "the largest error, of the short last chunk";
  double diff_sq = 0, ref_sq = 0;
  for (size_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(out[i]) - ref[i];
    diff_sq += e * e;
    ref_sq += ref[i] * ref[i];
  }
  EXPECT_NEAR(finite.rel_l2_err, std::sqrt(diff_sq / ref_sq), 1e-12) << "every chunk's sums";
}

TEST(Merge, OkOnlyIfBothAreAndErrorsAreTheMaxima) {
  const Verdict good{true, 0.1, 0.01, ""};
  const Verdict bad{false, 0.05, 0.2, "lse: broken"};
  const Verdict other_bad{false, 3.0, 0.0, "o: broken"};
  const Verdict gg = merge(good, good);
  EXPECT_TRUE(gg.ok);
  EXPECT_EQ(gg.detail, "");
  const Verdict gb = merge(good, bad);
  EXPECT_FALSE(gb.ok);
  EXPECT_EQ(gb.max_abs_err, 0.1);
  EXPECT_EQ(gb.rel_l2_err, 0.2);
  EXPECT_EQ(gb.detail, "lse: broken");
  EXPECT_FALSE(merge(bad, good).ok);
  const Verdict bb = merge(other_bad, bad);
  EXPECT_EQ(bb.detail, "o: broken; lse: broken");
  EXPECT_EQ(bb.max_abs_err, 3.0);
}

}  // namespace
}  // namespace ktune::verify
