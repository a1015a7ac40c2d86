// measure() and the copy-bandwidth probe against a simulated device: a Context whose clock
// advances by a known time per launch or per copied byte, so that the results are exact and
// the rotation, batching and graph paths are visible.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "bench/roofline.hpp"
#include "bench/timing.hpp"
#include "common/error.hpp"

namespace ktune::bench {
namespace {

using backend::Buffer;
using backend::Dim3;

class FakeBuffer final : public Buffer {
 public:
  explicit FakeBuffer(size_t size) : size_(size) {}
  uint64_t address() const noexcept override { return 0; }
  size_t size() const noexcept override { return size_; }

 private:
  size_t size_;
};

struct FakeEvent final : backend::Event {
  double at_us = 0;
};

struct FakeGraph final : backend::Graph {
  std::vector<int> rotations;
};

// Launches take `launch_us` each; copies move `copy_gbps` (bytes read + written).
class FakeContext final : public backend::Context {
 public:
  double launch_us = 10;
  double copy_gbps = 1000;
  bool can_capture = true;
  int64_t free_bytes = int64_t{64} << 30;
  std::vector<int> executed;           // rotation of every launch that ran, in order
  std::map<size_t, double> stalls_us;  // extra time of the launch at this index of `executed`
  int replays = 0;
  size_t copied_bytes = 0;   // of the last copy
  bool copy_faults = false;  // a copy reports a device fault (a kernel's, surfacing late)

  // What enqueue() of a test calls: runs now, or joins the graph being captured.
  void launch_on(int rotation) {
    if (capturing_) {
      captured_.push_back(rotation);
    } else {
      executed.push_back(rotation);
      const auto stall = stalls_us.find(executed.size() - 1);
      now_us_ += launch_us + (stall == stalls_us.end() ? 0.0 : stall->second);
    }
  }

  const backend::DeviceInfo& info() const noexcept override { return info_; }
  int64_t free_memory_bytes() override { return free_bytes; }
  std::unique_ptr<Buffer> alloc(size_t bytes) override { return std::make_unique<FakeBuffer>(bytes); }
  void upload(Buffer&, const void*, size_t, size_t) override {}
  void download(void*, const Buffer&, size_t, size_t) override {}
  void fill(Buffer&, uint8_t) override {}
  void copy(Buffer&, const Buffer&, size_t bytes) override {
    if (copy_faults) throw DeviceFault("illegal address (found at a copy)");
    copied_bytes = bytes;
    now_us_ += 2.0 * static_cast<double>(bytes) / (copy_gbps * 1e3);
  }
  std::unique_ptr<backend::Module> load(std::span<const char>) override { throw Error("no modules here"); }
  void set_shared_limit(void*, size_t) override {}
  void launch(void*, Dim3, Dim3, size_t, void**) override { launch_on(0); }
  std::unique_ptr<backend::Event> event() override { return std::make_unique<FakeEvent>(); }
  void record(backend::Event& e) override { static_cast<FakeEvent&>(e).at_us = now_us_; }
  float elapsed_ms(const backend::Event& a, const backend::Event& b) override {
    return static_cast<float>((static_cast<const FakeEvent&>(b).at_us - static_cast<const FakeEvent&>(a).at_us) / 1000);
  }
  void synchronize() override {}
  void begin_capture() override { capturing_ = can_capture; }
  std::unique_ptr<backend::Graph> end_capture() override {
    if (!capturing_) return nullptr;  // the launches already ran eagerly, as the contract says
    capturing_ = false;
    auto g = std::make_unique<FakeGraph>();
    g->rotations = std::exchange(captured_, {});
    return g;
  }
  void replay(backend::Graph& g) override {
    ++replays;
    for (int r : static_cast<FakeGraph&>(g).rotations) launch_on(r);
  }

  backend::DeviceInfo info_{.name = "fake",
                            .arch = "sm_00",
                            .compute_units = 1,
                            .warp_size = 32,
                            .l2_bytes = 60'000'000,
                            .memory_bytes = int64_t{80} << 30,
                            .shared_per_block = 48 << 10,
                            .shared_per_block_optin = 48 << 10,
                            .clock_khz = 1000};

 private:
  double now_us_ = 0;
  bool capturing_ = false;
  std::vector<int> captured_;
};

// measure() of launches that do nothing but advance ctx's clock.
Stats measure_launches(FakeContext& ctx, int rotations, const TimingPolicy& policy = {}) {
  return measure(
      ctx, [&](int r) { ctx.launch_on(r); }, rotations, policy);
}

TEST(TimingMeasure, LongLaunchesAreTimedOneByOneCyclingThroughTheCopies) {
  FakeContext ctx;
  ctx.launch_us = 250;
  const Stats s = measure_launches(ctx, 3);
  EXPECT_NEAR(s.median_us, 250, 0.01);
  EXPECT_EQ(s.n, TimingPolicy{}.min_samples) << "exact timings converge at once";
  EXPECT_EQ(ctx.replays, 0);
  for (size_t i = 0; i < ctx.executed.size(); ++i) ASSERT_EQ(ctx.executed[i], static_cast<int>(i % 3)) << i;
}

TEST(TimingMeasure, TwoLaunchesSlowerThanTheAbandonMarkAreTheOnlySamples) {
  FakeContext ctx;
  ctx.launch_us = 250;
  TimingPolicy policy;
  policy.warmup = 1;
  policy.abandon_us = 200;
  const Stats s = measure_launches(ctx, 3, policy);
  EXPECT_EQ(s.n, 2);
  EXPECT_NEAR(s.median_us, 250, 0.01);
  EXPECT_EQ(s.stop, Stop::abandoned);
  EXPECT_EQ(ctx.executed.size(), 3u) << "the warm-up and the two timed launches";

  // At or under the mark the measurement is the usual one.
  ctx.executed.clear();
  policy.abandon_us = 250;
  const Stats kept = measure_launches(ctx, 3, policy);
  EXPECT_EQ(kept.n, policy.min_samples);
  EXPECT_EQ(kept.stop, Stop::converged);

  // A launch shorter than a sample is batched, never abandoned on its own time.
  ctx.launch_us = 50;
  policy.abandon_us = 20;
  const Stats batched = measure_launches(ctx, 3, policy);
  EXPECT_EQ(batched.n, policy.min_samples);
  EXPECT_NEAR(batched.median_us, 50, 0.01);
}

TEST(TimingMeasure, OneStalledLaunchDoesNotAbandon) {
  // 25 us launches (batched 4 to a sample) and a first timed launch stalled to 281 us, past the
  // mark: the second launch is under it, so the measurement goes on, sized by the second.
  FakeContext ctx;
  ctx.launch_us = 25;
  TimingPolicy policy;
  policy.warmup = 2;
  policy.abandon_us = 60;
  ctx.stalls_us[2] = 256;
  const Stats s = measure_launches(ctx, 8, policy);
  EXPECT_EQ(s.n, policy.min_samples);
  EXPECT_NEAR(s.median_us, 25, 0.01);
  EXPECT_GT(ctx.replays, 0) << "batched in graphs of 4, as a 25 us launch is";

  // The same stall on the second timed launch too: abandoned, with both samples.
  ctx.executed.clear();
  ctx.stalls_us = {{2, 256}, {3, 256}};
  const Stats stalled = measure_launches(ctx, 8, policy);
  EXPECT_EQ(stalled.n, 2);
  EXPECT_NEAR(stalled.median_us, 281, 0.01);
}

TEST(TimingMeasure, ShortLaunchesAreBatchedInGraphsThatCoverEveryCopy) {
  FakeContext ctx;
  ctx.launch_us = 5.1;  // batches of 20 fill the 100 us minimum sample
  const int rotations = 50;
  const Stats s = measure_launches(ctx, rotations);
  EXPECT_NEAR(s.median_us, 5.1, 0.01) << "per launch, not per batch";
  EXPECT_EQ(ctx.replays, s.n + 5) << "one untimed replay of each graph first: 50 / gcd(50, 20) of them";
  std::map<int, int> uses;
  for (int r : ctx.executed) ++uses[r];
  EXPECT_EQ(uses.size(), static_cast<size_t>(rotations)) << "every copy is used";
}

// Whatever the batch and the number of copies, the launches go round the copies without a break
// (warm-up, the first timed launches, the graphs' first replays, the samples): each copy is used
// again exactly `rotations` launches later, never sooner, from an L2 it has left.
TEST(TimingMeasure, GraphsContinueTheCycleThroughTheCopies) {
  for (const int rotations : {1, 3, 7, 9, 50, 64}) {
    for (const int batch : {2, 3, 10, 20, 64}) {
      FakeContext ctx;
      ctx.launch_us = 100.0 / batch;  // fills the 100 us minimum sample in `batch` launches
      const Stats s = measure_launches(ctx, rotations);
      ASSERT_GT(ctx.replays, s.n) << "graphs were replayed";
      for (size_t i = 0; i < ctx.executed.size(); ++i)
        ASSERT_EQ(ctx.executed[i], static_cast<int>(i) % rotations)
            << "launch " << i << " of " << rotations << " copies in batches of " << batch;
    }
  }
}

TEST(TimingMeasure, WithoutCaptureShortLaunchesAreBatchedEagerly) {
  FakeContext ctx;
  ctx.launch_us = 5;
  ctx.can_capture = false;
  const Stats s = measure_launches(ctx, 7);
  EXPECT_NEAR(s.median_us, 5, 0.01);
  EXPECT_EQ(ctx.replays, 0);
  const size_t warm = ctx.executed.size() - static_cast<size_t>(s.n) * 20;
  for (size_t i = warm; i < ctx.executed.size(); ++i)
    ASSERT_EQ(ctx.executed[i], (ctx.executed[i - 1] + 1) % 7) << "consecutive launches use consecutive copies";
}

TEST(TimingMeasure, CaptureThatFailsFallsBackButFaultsPropagate) {
  FakeContext ctx;
  ctx.launch_us = 5;
  bool capturing_breaks = true;
  const Stats s = measure(
      ctx,
      [&](int r) {
        if (capturing_breaks && ctx.replays == 0 && ctx.executed.size() >= 4) {
          capturing_breaks = false;
          throw Error("operation not permitted when stream is capturing");
        }
        ctx.launch_on(r);
      },
      2);
  EXPECT_NEAR(s.median_us, 5, 0.01);
  EXPECT_EQ(ctx.replays, 0) << "fell back to eager launches";

  FakeContext faulty;
  faulty.launch_us = 5;
  EXPECT_THROW(measure(
                   faulty,
                   [&](int r) {
                     if (faulty.executed.size() >= 4) throw DeviceFault("illegal address");
                     faulty.launch_on(r);
                   },
                   2),
               DeviceFault);
}

TEST(TimingMeasure, RotationsMustBePositive) {
  FakeContext ctx;
  EXPECT_THROW(measure_launches(ctx, 0), Error);
}

TEST(CopyBandwidth, CountsBytesReadAndWritten) {
  FakeContext ctx;
  ctx.copy_gbps = 3000;
  EXPECT_NEAR(measure_copy_gbps(ctx), 3000, 3000 * 1e-4);
  EXPECT_EQ(ctx.copied_bytes, size_t{256} << 20) << "the floor: 4x the 60 MB L2 is less";
}

// Behind a 4 MB L2, a 256 MB Infinity Cache (MI300) would serve buffers of 256 MB: the probe's
// buffers are four times the last-level cache.
TEST(CopyBandwidth, BuffersExceedTheLastLevelCache) {
  FakeContext ctx;
  ctx.info_.arch = "gfx942";
  ctx.info_.l2_bytes = 4 << 20;
  measure_copy_gbps(ctx);
  EXPECT_EQ(ctx.copied_bytes, size_t{1} << 30);
}

TEST(CopyBandwidth, TooLittleFreeMemoryIsAnError) {
  FakeContext ctx;
  ctx.free_bytes = 4 * 50'000'000;  // buffers of 50 MB < twice the 60 MB L2
  EXPECT_THROW(measure_copy_gbps(ctx), Error);
  ctx.free_bytes = 4 * 130'000'000;  // 130 MB each: enough
  EXPECT_GT(measure_copy_gbps(ctx), 0);
}

// The device's copy speed changes during the measurement: the roof is the faster probe, on
// whichever side of the measurement it fell, and both probes are reported.
TEST(CopyBandwidth, AroundAMeasurementTheBetterProbeIsTheRoof) {
  for (const auto& [before, after] : {std::pair{3000.0, 2000.0}, std::pair{1000.0, 4000.0}}) {
    FakeContext ctx;
    ctx.copy_gbps = before;
    const CopyRoof roof = measure_copy_around(ctx, [&] { ctx.copy_gbps = after; });
    EXPECT_NEAR(roof.before_gbps, before, before * 1e-4);
    EXPECT_NEAR(roof.after_gbps, after, after * 1e-4);
    EXPECT_NEAR(roof.gbps(), std::max(before, after), std::max(before, after) * 1e-4) << before << " then " << after;
  }
}

TEST(CopyBandwidth, AFailedMeasurementPropagatesWithoutTheSecondProbe) {
  FakeContext ctx;
  // A second probe would throw Error (no memory left for its buffers) instead of the fault.
  EXPECT_THROW(measure_copy_around(ctx,
                                   [&] {
                                     ctx.free_bytes = 0;
                                     throw DeviceFault("illegal address");
                                   }),
               DeviceFault);
}

// The measurement between the probes is finished: a second probe that fails does not discard
// it, and says why it failed; the roof is the first probe's.
TEST(CopyBandwidth, AFailedSecondProbeKeepsTheMeasurement) {
  FakeContext ctx;
  ctx.copy_gbps = 3000;
  bool measured = false;
  const CopyRoof roof = measure_copy_around(ctx, [&] {
    measured = true;
    ctx.free_bytes = 0;
  });
  EXPECT_TRUE(measured);
  EXPECT_NEAR(roof.before_gbps, 3000, 3000 * 1e-4);
  EXPECT_EQ(roof.after_gbps, 0);
  EXPECT_NEAR(roof.gbps(), 3000, 3000 * 1e-4);
  EXPECT_TRUE(roof.after_error.find("too little free memory") != std::string::npos) << roof.after_error;
  FakeContext fine;
  EXPECT_EQ(measure_copy_around(fine, [] {}).after_error, "") << "the twin: a probe that works";
}

// A device fault at the second probe may be the kernel's, found late: the measurement is suspect
// and the fault propagates.
TEST(CopyBandwidth, AFaultAtTheSecondProbePropagates) {
  FakeContext ctx;
  EXPECT_THROW(measure_copy_around(ctx, [&] { ctx.copy_faults = true; }), DeviceFault);
}

}  // namespace
}  // namespace ktune::bench
