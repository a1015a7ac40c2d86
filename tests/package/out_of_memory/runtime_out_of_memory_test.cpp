// The runtime when memory has run out: while an OutOfMemory lives, every operator new of the
// thread throws std::bad_alloc. The entry points are noexcept and promise a status, never an
// abort (an exception leaving them terminates the serving process): bad arguments are reported
// with their status and message, a launch whose device and code objects are known allocates
// nothing (from the compiled-in table or KTUNE_DB's), and the C++ API keeps the status when it cannot copy the message.
// Replacing operator new is process-wide, so these tests are an executable of their own; nothing here may touch the
// process-wide engine or ktune_runtime_info before the test that is about them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>

#include "ktune/runtime.hpp"
#include "package/runtime_support.hpp"

namespace {
thread_local bool g_allocations_fail = false;
}  // namespace

// (GCC sees free() of what operator new returned; both are replaced here, over malloc.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t bytes) {
  if (g_allocations_fail) throw std::bad_alloc();
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace ktune::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using test::fake_engine;
using test::FakeApi;
using test::launch_args;
using test::rope_args;

// Allocations fail while one lives. Assertions go after its scope: gtest allocates to report.
class OutOfMemory {
 public:
  OutOfMemory() { g_allocations_fail = true; }
  ~OutOfMemory() { g_allocations_fail = false; }
  OutOfMemory(const OutOfMemory&) = delete;
  OutOfMemory& operator=(const OutOfMemory&) = delete;
};

constexpr ktune_mla_decode_key kSplitting{16, 1, 1, 0, 32};   // tuned; splits its 4096 keys on 132 units
constexpr ktune_qk_rope_cache_key kRope{16, 1, 0, 1, 1, 64};  // tuned, identity rope

TEST(RuntimeOutOfMemory, TheAllocatorReallyFails) {  // what every other test here relies on
  bool threw = false;
  {
    OutOfMemory oom;
    try {
      std::string s(100, 'x');
    } catch (const std::bad_alloc&) {
      threw = true;
    }
  }
  EXPECT_TRUE(threw);
}

TEST(RuntimeOutOfMemory, InfoNamesTheVersionWhenItCannotListThePackages) {
  std::string_view info;
  {
    OutOfMemory oom;
    info = ktune_runtime_info();  // its first call in this process
  }
  EXPECT_THAT(std::string(info), AllOf(StartsWith("ktune "), HasSubstr("out of memory")));
  EXPECT_THAT(std::string(ktune_runtime_info()), HasSubstr("package for"));  // the list, once memory is back
}

TEST(RuntimeOutOfMemory, BadArgumentsAreReportedWithTheirStatusAndMessage) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  ktune_result r{};
  // Known device, selections and loaded code objects; the precondition refusal remembered.
  ASSERT_EQ(engine->mla_decode(launch_args(kSplitting), r), KTUNE_INVALID_ARGUMENT) << r.message;  // no workspace
  const auto breaking = test::non_clamping_full_key();
  ASSERT_EQ(engine->qk_rope_cache(rope_args(breaking, 1), r), KTUNE_INVALID_ARGUMENT) << r.message;

  ktune_result shape{}, workspace{}, rope_shape{}, precondition{};
  ktune_status statuses[4];
  {
    OutOfMemory oom;
    statuses[0] = engine->mla_decode(launch_args({16, 1, 1, 0, 0}), shape);  // batch 0
    statuses[1] = engine->mla_decode(launch_args(kSplitting), workspace);
    statuses[2] = engine->qk_rope_cache(rope_args({16, 1, 0, 1, 1, 0}), rope_shape);  // no tokens
    statuses[3] = engine->qk_rope_cache(rope_args(breaking, 1), precondition);
  }
  EXPECT_EQ(statuses[0], KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(shape.message, HasSubstr("batch=0"));
  EXPECT_EQ(statuses[1], KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(workspace.message, HasSubstr("bytes of workspace"));
  EXPECT_EQ(statuses[2], KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(rope_shape.message, HasSubstr("tokens=0"));
  EXPECT_EQ(statuses[3], KTUNE_INVALID_ARGUMENT);
  EXPECT_THAT(precondition.message, HasSubstr("cannot serve this call"));
}

TEST(RuntimeOutOfMemory, ALaunchOfKnownKernelsAllocatesNothing) {
  FakeApi* api = nullptr;
  auto engine = fake_engine(api);
  api->record_launches = false;
  ktune_result r{};
  size_t bytes = 0;
  auto split = launch_args(kSplitting);
  ASSERT_EQ(engine->mla_decode_workspace_size(split, bytes, r), KTUNE_OK) << r.message;
  ASSERT_GT(r.splits, 1);
  std::vector<char> memory(bytes);
  split.workspace = memory.data();
  split.workspace_bytes = bytes;
  const auto whole = launch_args(kSplitting, 64);  // a short context: no split
  for (int warm = 0; warm < 2; ++warm) {
    ASSERT_EQ(engine->mla_decode(split, r), KTUNE_OK) << r.message;
    ASSERT_EQ(engine->mla_decode(whole, r), KTUNE_OK) << r.message;
    ASSERT_EQ(engine->qk_rope_cache(rope_args(kRope), r), KTUNE_OK) << r.message;
  }
  ktune_status statuses[4];
  ktune_result results[4]{};
  {
    OutOfMemory oom;
    statuses[0] = engine->mla_decode_workspace_size(split, bytes, results[0]);
    statuses[1] = engine->mla_decode(split, results[1]);
    statuses[2] = engine->mla_decode(whole, results[2]);
    statuses[3] = engine->qk_rope_cache(rope_args(kRope), results[3]);
  }
  for (int i = 0; i < 4; ++i) EXPECT_EQ(statuses[i], KTUNE_OK) << i << ": " << results[i].message;
  EXPECT_GT(results[1].splits, 1);
  EXPECT_EQ(results[2].splits, 1);
}

TEST(RuntimeOutOfMemory, ALaunchThroughKtuneDbAllocatesNothing) {
  package_test::MlaDb m;
  const auto run = m.run("sm_90a", "NVIDIA H200", std::string(test::sm90_table(kMlaDecode).template_hash));
  m.ok(run, test::key_params(kSplitting), test::compiled_config(kSplitting, 0), 5.0);  // split=0: whole
  FakeApi* api = nullptr;
  auto engine = fake_engine(api, "sm_90a", 132, m.path());
  api->record_launches = false;
  ktune_result r{};
  const auto exact = launch_args(kSplitting);
  auto bucket = exact;
  bucket.key.batch = 7;  // the override's batch bucket
  ASSERT_EQ(engine->mla_decode(exact, r), KTUNE_OK) << r.message;
  ASSERT_EQ(r.from_override, 1);
  ASSERT_EQ(engine->mla_decode(bucket, r), KTUNE_OK) << r.message;
  ktune_status statuses[2];
  ktune_result results[2]{};
  {
    OutOfMemory oom;
    statuses[0] = engine->mla_decode(exact, results[0]);
    statuses[1] = engine->mla_decode(bucket, results[1]);
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(statuses[i], KTUNE_OK) << i << ": " << results[i].message;
    EXPECT_EQ(results[i].from_override, 1) << i;
  }
  EXPECT_THAT(results[1].message, HasSubstr("nearest tuned batch bucket (KTUNE_DB)"));
}

TEST(RuntimeOutOfMemory, TheCppApiKeepsTheStatusWithoutTheMessage) {
  // The process-wide engine, built at the first call: out of memory then, that call fails and a
  // later one builds it.
  auto args = launch_args(kSplitting);
  args.q = nullptr;
  ktune_result first{};
  ktune_status status = KTUNE_OK;
  {
    OutOfMemory oom;
    status = ktune_mla_decode(&args, &first);
  }
  EXPECT_EQ(status, KTUNE_LAUNCH_FAILED);
  EXPECT_THAT(first.message, HasSubstr("bad_alloc"));
  ASSERT_EQ(ktune::mla_decode(nullptr, args).status, ktune::Status::invalid_argument);

  ktune::Result result;
  {
    OutOfMemory oom;
    result = ktune::mla_decode(nullptr, args);
  }
  EXPECT_EQ(result.status, ktune::Status::invalid_argument);
  EXPECT_EQ(result.message, "");  // a 90-character message needs the heap
  EXPECT_THAT(ktune::mla_decode(nullptr, args).message, HasSubstr("must not be null"));
}

}  // namespace
}  // namespace ktune::runtime
