// A launch that overlaps the tail of the one ahead on the stream (Context::launch_dependent,
// templates/common/launch_order.hpp): where a backend has no such launches it makes an ordinary
// one, and the split-KV combine, which mla_decode launches that way, waits for the main kernel
// before it reads a partial result.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "jit/templates.hpp"
#include "sweep_test_support.hpp"

namespace ktune {
namespace {

TEST(LaunchDependent, IsAnOrdinaryLaunchWhereTheBackendHasNoOverlappingOnes) {
  testing::FakeContext ctx;  // overrides launch() only, as the HIP backend does
  testing::FakeKernel kernel;
  kernel.value = 7;
  int64_t out = 0;
  int64_t* out_ptr = &out;
  void* args[] = {&out_ptr};
  ctx.launch_dependent(&kernel, {}, {}, 0, args);
  EXPECT_EQ(ctx.launches, 1);
  EXPECT_EQ(out, 7);
}

// The combine's body from its opening brace: the first read of what the main kernel wrote must
// come after the wait.
TEST(LaunchDependent, TheCombineWaitsForTheMainKernelBeforeItsFirstRead) {
  const std::string src = jit::render("mla_decode/mla_decode.hip");
  const size_t signature = src.find("mla_combine(const float*");
  ASSERT_NE(signature, std::string::npos);
  const size_t body = src.find('{', signature);
  const size_t wait = src.find("wait_for_previous_kernel();", body);
  const size_t first_read = std::min(src.find("part_lse[", body), src.find("load16(part_o", body));
  ASSERT_NE(first_read, std::string::npos) << "the combine reads no partial result any more: update this test";
  EXPECT_LT(wait, first_read) << "mla_combine reads the main kernel's partials before wait_for_previous_kernel()";
  // ... and the wait is the grid dependency's on NVIDIA (rendered with the kernel).
  const size_t defined = src.find("void wait_for_previous_kernel()");
  ASSERT_NE(defined, std::string::npos);
  EXPECT_NE(src.find("griddepcontrol.wait;", defined), std::string::npos);
}

}  // namespace
}  // namespace ktune
