// Achieved rates of a launch and their fractions of the roofline measured in the same run.
#include <gtest/gtest.h>

#include "bench/roofline.hpp"

namespace ktune::bench {
namespace {

TEST(RooflineRates, RatesAreTrafficOverMedianAndFractionsOfTheMeasuredRoofs) {
  const Rates r = rates_of(/*bytes=*/2e6, /*flops=*/3e9, /*median_us=*/10, /*copy_gbps=*/400, /*matrix_tflops=*/600);
  EXPECT_DOUBLE_EQ(r.gbps, 200);
  EXPECT_DOUBLE_EQ(r.tflops, 300);
  EXPECT_DOUBLE_EQ(r.frac_copy_bw, 0.5);
  EXPECT_DOUBLE_EQ(r.frac_matrix, 0.5);
}

TEST(RooflineRates, UnmeasuredRoofsAndUntimedLaunchesGiveZeros) {
  const Rates no_matrix = rates_of(2e6, 3e9, 10, 400, 0);
  EXPECT_DOUBLE_EQ(no_matrix.tflops, 300);
  EXPECT_EQ(no_matrix.frac_matrix, 0) << "a roof that was not measured yields no fraction";
  const Rates untimed = rates_of(2e6, 3e9, 0, 400, 600);
  EXPECT_EQ(untimed.gbps, 0);
  EXPECT_EQ(untimed.frac_copy_bw, 0);
}

}  // namespace
}  // namespace ktune::bench
