// The matrix-core probe's arithmetic, without a device: which instruction each target issues, the
// launch that fills a device, the exact FLOP count and the rate from it, and the host check of the
// verifying launch (which must catch a probe that skipped work). Then the whole measurement on a
// simulated device that runs the probe's contract on the host: the rate is the device's, and a
// device that skips instructions is caught before any rate is reported.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "bench/matrix_probe.hpp"
#include "bench/roofline.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"
#include "verify/numeric.hpp"

namespace ktune::bench {
namespace {

backend::DeviceInfo device(int compute_units, int warp_size) {
  backend::DeviceInfo d;
  d.name = "test device";
  d.compute_units = compute_units;
  d.warp_size = warp_size;
  return d;
}

TEST(MatrixProbe, EachTargetIssuesTheKernelsFastestInstruction) {
  // Hopper with its arch-specific features: the warpgroup product, counted per warp (a quarter).
  const auto hopper = matrix_instruction("sm_90a");
  EXPECT_EQ(hopper.name, "wgmma m64n256k16 bf16");
  EXPECT_EQ(4 * hopper.flops(), 2.0 * 64 * 256 * 16);
  EXPECT_EQ(hopper.source, "probe/wgmma_probe.hip");
  // sm_90 (no "a") has no wgmma, and neither has any other NVIDIA target, known or not.
  for (const char* arch : {"sm_90", "sm_80", "sm_120"}) {
    const auto nvidia = matrix_instruction(arch);
    EXPECT_EQ(nvidia.name, "mma.sync m16n8k16 bf16") << arch;
    EXPECT_EQ(nvidia.flops(), 2.0 * 16 * 8 * 16) << arch;
    EXPECT_EQ(nvidia.source, "probe/mma_probe.hip") << arch;
  }
  EXPECT_EQ(mma_sync_instruction().name, matrix_instruction("sm_80").name);
  const auto amd = matrix_instruction("gfx90a");
  EXPECT_EQ(amd.name, "mfma 16x16x16 bf16");
  EXPECT_EQ(amd.flops(), 2.0 * 16 * 16 * 16);
  EXPECT_EQ(amd.source, "probe/mma_probe.hip");
  EXPECT_THROW(matrix_instruction("x86_64"), Error);
}

TEST(MatrixProbe, LaunchFillsEveryComputeUnit) {
  for (const char* arch : {"sm_90a", "sm_80"}) {
    const auto i = matrix_instruction(arch);
    const auto l = matrix_probe_launch(device(132, 32), i, 4096);
    EXPECT_EQ(l.ctas, int64_t{132} * i.ctas_per_unit) << arch << ": the same number of CTAs on every SM: no tail";
    EXPECT_EQ(l.threads, i.threads) << arch;
    EXPECT_EQ(l.chains, i.chains) << arch;
    EXPECT_EQ(l.warps(), l.ctas * l.threads / 32) << arch;
    EXPECT_EQ(l.iterations, 4096) << arch;
  }
  // wgmma's accumulator takes 128 registers a thread: one CTA of two warpgroups per SM, not two.
  EXPECT_EQ(matrix_probe_launch(device(132, 32), matrix_instruction("sm_90a"), 1).ctas, 132);
  const auto mi = matrix_probe_launch(device(104, 64), matrix_instruction("gfx942"), 16);
  EXPECT_EQ(mi.warps(), mi.ctas * mi.threads / 64);
  EXPECT_THROW(matrix_probe_launch(device(0, 32), matrix_instruction("sm_90a"), 16), Error);
  EXPECT_THROW(matrix_probe_launch(device(132, 32), matrix_instruction("sm_90a"), 0), Error);
}

TEST(MatrixProbe, FlopsAreTwoMnkPerInstructionIssued) {
  const MatrixProbeLaunch l{/*ctas=*/264, /*threads=*/256, /*warp_size=*/32, /*chains=*/8, /*iterations=*/4096};
  EXPECT_EQ(l.instructions(), int64_t{264} * 8 * 8 * 4096);
  const double flops = matrix_probe_flops(l, matrix_instruction("sm_80"));
  EXPECT_EQ(flops, 264.0 * 8 * 8 * 4096 * 4096);
  // Half the iterations, half the work; a wavefront of 64 issues the same instructions per CTA
  // with half the warps.
  EXPECT_EQ(matrix_probe_flops({264, 256, 32, 8, 2048}, matrix_instruction("sm_80")), flops / 2);
  EXPECT_EQ(matrix_probe_flops({264, 256, 64, 8, 4096}, matrix_instruction("gfx90a")), flops);
  // The rate the sweep and `ktune bench` divide by: that much work in 1 ms, in units of 1e12 FLOP/s.
  EXPECT_DOUBLE_EQ(rates_of(0, flops, /*median_us=*/1000, 0, 0).tflops, flops / 1e-3 / 1e12);
  EXPECT_NEAR(rates_of(0, flops, 1000, 0, 0).tflops, 283.47, 0.01);
  // wgmma: 132 CTAs of 2 warpgroups, each 4096 products of 64 x 256 x 16.
  EXPECT_EQ(matrix_probe_flops({132, 256, 32, 1, 4096}, matrix_instruction("sm_90a")),
            132.0 * 2 * 4096 * 2 * 64 * 256 * 16);
}

TEST(MatrixProbe, ExpectedSumCountsEveryInstruction) {
  // NVIDIA: 4 elements per lane and chain, starting at the chain's index, + 16 per instruction.
  const MatrixProbeLaunch l{1, 32, 32, 2, 3};
  EXPECT_EQ(matrix_probe_expected_sum(l, matrix_instruction("sm_80")), 4 * (0 + 1) + 4 * 2 * 16 * 3);
  // AMD: 16 x 16 over 64 lanes is 4 elements too.
  EXPECT_EQ(matrix_probe_expected_sum({1, 64, 64, 2, 3}, matrix_instruction("gfx90a")), 4 * (0 + 1) + 4 * 2 * 16 * 3);
  // wgmma: 64 x 256 over a warpgroup's 128 threads, 128 elements each, one chain from 0.
  EXPECT_EQ(matrix_probe_expected_sum({1, 128, 32, 1, 3}, matrix_instruction("sm_90a")), 128 * 16 * 3);
  // One instruction fewer on one chain is a different sum: a skipped instruction cannot pass.
  EXPECT_NE(matrix_probe_expected_sum(l, matrix_instruction("sm_80")),
            matrix_probe_expected_sum({1, 32, 32, 2, 2}, matrix_instruction("sm_80")) + 4 * 16);
  EXPECT_NE(matrix_probe_expected_sum({1, 128, 32, 1, 3}, matrix_instruction("sm_90a")),
            matrix_probe_expected_sum({1, 128, 32, 1, 2}, matrix_instruction("sm_90a")) + 127 * 16)
      << "one product fewer on all but one of a thread's accumulators";
}

TEST(MatrixProbe, OutputCheckCatchesAPlantedWrongSum) {
  std::vector<float> out(1000, 8304.0f);
  EXPECT_EQ(check_matrix_probe_output(out, 8304.0), "");
  out[17] = 8304.0f - 16;  // one instruction skipped on one element
  const auto wrong = check_matrix_probe_output(out, 8304.0);
  EXPECT_NE(wrong.find("1 of 1000 threads"), std::string::npos) << wrong;
  EXPECT_NE(wrong.find("thread 17 wrote 8288"), std::string::npos) << wrong;
  out[17] = std::numeric_limits<float>::quiet_NaN();  // a thread that wrote nothing (NaN fill)
  EXPECT_NE(check_matrix_probe_output(out, 8304.0), "");
  std::vector<float> none(1000, 0.0f);  // the work optimised away
  EXPECT_NE(check_matrix_probe_output(none, 8304.0).find("1000 of 1000"), std::string::npos);
}

// A device that runs the probes' contract (templates/probe/*_probe.hip) on the host: every thread
// writes the sum of its chains after `iterations` instructions of k x (a * b), a and b the first
// bf16 pair of the operands; a launch takes its instructions' FLOPs at `tflops`. `skipped`
// instructions per chain go missing, as in a probe that the compiler shortened.
class ProbeDevice final : public backend::Context {
 public:
  double tflops = 400;
  int skipped = 0;
  int chains = 0;                 // from the name expression compiled
  MatrixInstruction instruction;  // the instruction of the probe compiled

  explicit ProbeDevice(backend::DeviceInfo info) : info_(std::move(info)) {}
  const backend::DeviceInfo& info() const noexcept override { return info_; }
  int64_t free_memory_bytes() override { return int64_t{1} << 30; }
  std::unique_ptr<backend::Buffer> alloc(size_t bytes) override { return std::make_unique<HostBuffer>(bytes); }
  void upload(backend::Buffer& dst, const void* src, size_t bytes, size_t off) override {
    std::memcpy(dst.as<char>() + off, src, bytes);
  }
  void download(void* dst, const backend::Buffer& src, size_t bytes, size_t off) override {
    std::memcpy(dst, src.as<char>() + off, bytes);
  }
  void fill(backend::Buffer& dst, uint8_t byte) override { std::memset(dst.as<char>(), byte, dst.size()); }
  void copy(backend::Buffer&, const backend::Buffer&, size_t) override {}
  std::unique_ptr<backend::Module> load(std::span<const char>) override { return std::make_unique<Module>(); }
  void set_shared_limit(void*, size_t) override {}
  void launch(void*, backend::Dim3 grid, backend::Dim3 block, size_t, void** args) override {
    const auto* operands = reinterpret_cast<const uint32_t*>(*static_cast<uint64_t*>(args[0]));
    auto* out = reinterpret_cast<float*>(*static_cast<uint64_t*>(args[1]));
    const int iterations = *static_cast<int*>(args[2]) - skipped;
    const double a = num::bf16_to_f32(static_cast<uint16_t>(operands[0] & 0xffff));
    const double b = num::bf16_to_f32(static_cast<uint16_t>(operands[0] >> 16));
    const double elems = static_cast<double>(instruction.m) * instruction.n / info_.warp_size;
    double sum = 0;
    for (int c = 0; c < chains; ++c) sum += elems * (c + instruction.k * a * b * iterations);
    const size_t threads = size_t{grid.x} * block.x;
    for (size_t t = 0; t < threads; ++t) out[t] = static_cast<float>(sum);
    const double warps = static_cast<double>(threads) / info_.warp_size;
    const double flops = warps * chains * (*static_cast<int*>(args[2])) * instruction.flops();
    now_us_ += flops / (tflops * 1e6);
  }
  std::unique_ptr<backend::Event> event() override { return std::make_unique<Event>(); }
  void record(backend::Event& e) override { static_cast<Event&>(e).at_us = now_us_; }
  float elapsed_ms(const backend::Event& a, const backend::Event& b) override {
    return static_cast<float>((static_cast<const Event&>(b).at_us - static_cast<const Event&>(a).at_us) / 1000);
  }
  void synchronize() override {}
  void begin_capture() override {}
  std::unique_ptr<backend::Graph> end_capture() override { return nullptr; }
  void replay(backend::Graph&) override {}

 private:
  struct HostBuffer final : backend::Buffer {
    explicit HostBuffer(size_t n) : bytes(n) {}
    uint64_t address() const noexcept override { return reinterpret_cast<uint64_t>(bytes.data()); }
    size_t size() const noexcept override { return bytes.size(); }
    std::vector<char> bytes;
  };
  struct Module final : backend::Module {
    void* function(std::string_view) override { return this; }
  };
  struct Event final : backend::Event {
    double at_us = 0;
  };
  backend::DeviceInfo info_;
  double now_us_ = 0;
};

// Compiles nothing; hands the chains of the name expression ("ktune::mma_probe<256, 8>") and the
// instruction of its kernel to the device.
class ProbeCompiler final : public backend::Backend {
 public:
  explicit ProbeCompiler(ProbeDevice& device) : device_(device) {}
  std::string_view name() const noexcept override { return "probe-test"; }
  bool handles_arch(std::string_view) const noexcept override { return true; }
  bool compiler_available(std::string_view) const noexcept override { return true; }
  std::string compiler_unavailable_reason(std::string_view) const override { return {}; }
  std::string compiler_version(std::string_view) const override { return "probe-test 1"; }
  std::string compiler_identity(std::string_view arch) const override { return compiler_version(arch); }
  bool compiles_in_threads(std::string_view) const override { return true; }
  std::vector<backend::CompilerStatus> compilers(std::string_view) const override { return {}; }
  backend::CompileResult compile(const backend::CompileRequest& req) const override {
    const std::string& name = req.name_expressions.at(0);
    const bool wgmma = name.starts_with("ktune::wgmma_probe<");
    EXPECT_TRUE(wgmma || name.starts_with("ktune::mma_probe<")) << name;
    const std::string kernel = wgmma ? "wgmma_probe(" : "mma_probe(";
    EXPECT_NE(req.source.find(kernel), std::string::npos) << "the template of " << name << " is compiled";
    // The kernels' own counts, not the host's: 64 x 256 x 16 per warpgroup, 16 x 8 x 16 per warp.
    device_.instruction.name = wgmma ? "wgmma" : "mma.sync";
    device_.instruction.m = 16;
    device_.instruction.n = wgmma ? 256 : 8;
    device_.instruction.k = 16;
    device_.chains = std::stoi(name.substr(name.find(',') + 1));
    return {{'c'}, {name}, {}};
  }
  bool available() const noexcept override { return true; }
  std::string unavailable_reason() const override { return {}; }
  std::string driver_version() const override { return {}; }
  int device_count() const override { return 1; }
  backend::DeviceInfo device_info(int) const override { return device_.info(); }
  std::unique_ptr<backend::Context> open(int) const override { return nullptr; }

 private:
  ProbeDevice& device_;
};

backend::DeviceInfo h200_like() {
  backend::DeviceInfo d = device(132, 32);
  d.arch = "sm_90a";
  return d;
}

TEST(MatrixProbeMeasure, RateIsTheDevicesOwn) {
  ProbeDevice dev(h200_like());
  ProbeCompiler compiler(dev);
  dev.tflops = 912;
  EXPECT_NEAR(measure_matrix_tflops(compiler, dev), 912, 912 * 1e-4);
  EXPECT_EQ(dev.instruction.name, "wgmma");
  dev.tflops = 80;
  EXPECT_NEAR(measure_matrix_tflops(compiler, dev), 80, 80 * 1e-4);
  EXPECT_EQ(dev.chains, 1);
  // The same device through mma.sync's probe: its own count of the work, the same rate.
  MatrixProbe probe(compiler, dev, mma_sync_instruction());
  EXPECT_NO_THROW(probe.verify());
  EXPECT_EQ(dev.chains, 8);
  const auto stats = probe.time(kMatrixProbeIterations);
  const double flops = matrix_probe_flops(probe.launch_of(kMatrixProbeIterations), probe.instruction());
  EXPECT_NEAR(rates_of(0, flops, stats.median_us, 0, 0).tflops, 80, 80 * 1e-4);
}

// `ktune --templates DIR` swaps the kernels' templates, not the instruments: a tree without the
// probes (an older one, in an A/B) still measures the roof, from the templates built in.
TEST(MatrixProbeMeasure, ATemplateTreeWithoutTheProbesStillHasTheRoof) {
  struct Root {
    Root() { jit::set_template_root("/nonexistent/ktune-templates"); }
    ~Root() { jit::set_template_root(""); }
  } root;
  ProbeDevice dev(h200_like());
  ProbeCompiler compiler(dev);
  dev.tflops = 912;
  const MatrixRoof r = try_measure_matrix_tflops(compiler, dev);
  EXPECT_EQ(r.error, "");
  EXPECT_NEAR(r.tflops, 912, 912 * 1e-4);
  EXPECT_EQ(r.instruction, "wgmma m64n256k16 bf16") << "the probe that ran, which a sweep's run records";
}

TEST(MatrixProbeMeasure, ADeviceThatSkipsInstructionsReportsNoRate) {
  ProbeDevice dev(h200_like());
  ProbeCompiler compiler(dev);
  dev.skipped = 1;  // one instruction per chain missing: the fast probe a shortened loop would be
  try {
    measure_matrix_tflops(compiler, dev);
    ADD_FAILURE() << "a probe that skipped work reported a rate";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("wrote a wrong sum"), std::string::npos) << e.what();
  }
  const MatrixRoof roof = try_measure_matrix_tflops(compiler, dev);
  EXPECT_EQ(roof.tflops, 0) << "not measured, not invented";
  EXPECT_EQ(roof.instruction, "") << "and no probe named for it";
  EXPECT_NE(roof.error.find("wgmma m64n256k16 bf16"), std::string::npos) << roof.error;
}

}  // namespace
}  // namespace ktune::bench
