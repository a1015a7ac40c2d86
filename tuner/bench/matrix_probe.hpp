#pragma once
// The matrix-core roof: dense bf16 matrix math at the fastest rate ktune's kernels can reach on a
// target, measured on the device in the same run as the kernels (like the copy bandwidth,
// bench/roofline.hpp), so that a kernel's TFLOP/s is also a fraction of what the matrix cores
// achieved.
//
// The probe issues the fastest matrix instruction the kernels issue on the target, back to back,
// from enough warps to fill every SM / CU: on Hopper (sm_90a) wgmma m64n256k16 with its operands
// in shared memory (templates/probe/wgmma_probe.hip); elsewhere mma.sync m16n8k16 (NVIDIA) or
// MFMA 16x16x16 (AMD) on independent accumulator chains (templates/probe/mma_probe.hip). Older
// databases hold runs whose sm_90a roof was mma.sync's, well below wgmma's, which the wgmma
// kernels could pass: each run keeps the roof it measured (runs.matrix_probe names its
// instruction), and its rows are fractions of it.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "backend/backend.hpp"
#include "bench/stats.hpp"
#include "bench/stopping.hpp"

namespace ktune::bench {

// One matrix-core instruction and the probe kernel that issues it: an m x n x k product-accumulate
// per warp (a warpgroup's instruction counted as its 4 warps' shares: m = 64 / 4), 2 m n k FLOPs.
struct MatrixInstruction {
  std::string_view name;  // "mma.sync m16n8k16 bf16"
  int m = 0, n = 0, k = 0;
  std::string_view source;  // the probe's template, "probe/mma_probe.hip"
  std::string_view kernel;  // its kernel template, instantiated as kernel<threads, chains>
  // The launch: CTAs of `threads` threads, ctas_per_unit of them resident at once on every SM / CU
  // (no tail), each warp (warpgroup) with `chains` independent accumulators.
  int threads = 0, chains = 0, ctas_per_unit = 0;
  double flops() const noexcept { return 2.0 * m * n * k; }
};

// The fastest instruction the kernels issue on `arch`: wgmma m64n256k16 bf16 -> fp32 where the
// target has warpgroup products (sm_90a), else mma.sync m16n8k16 bf16 -> fp32 on NVIDIA (sm_*),
// v_mfma_f32_16x16x16bf16_1k on AMD (gfx*). Throws Error for another arch.
MatrixInstruction matrix_instruction(std::string_view arch);
// mma.sync m16n8k16 bf16 (the roof of NVIDIA targets without wgmma), for comparisons on sm_90a.
MatrixInstruction mma_sync_instruction() noexcept;

// One launch of the probe: `ctas` CTAs of `threads` threads; every warp issues `iterations`
// instructions on each of its `chains` chains.
struct MatrixProbeLaunch {
  int64_t ctas = 0;
  int threads = 0, warp_size = 0, chains = 0, iterations = 0;
  int64_t warps() const noexcept { return warp_size > 0 ? ctas * (threads / warp_size) : 0; }
  int64_t instructions() const noexcept { return warps() * chains * int64_t{iterations}; }
};

// The launch of `instruction`'s probe that keeps every SM / CU of `device` busy.
MatrixProbeLaunch matrix_probe_launch(const backend::DeviceInfo& device, const MatrixInstruction& instruction,
                                      int iterations);

// FLOPs of one launch, counted exactly: 2 m n k per instruction.
double matrix_probe_flops(const MatrixProbeLaunch& launch, const MatrixInstruction& instruction) noexcept;

// What every thread of the probe writes when every operand is 1.0: each of its chains' elements
// starts at the chain's index and gains k per instruction.
double matrix_probe_expected_sum(const MatrixProbeLaunch& launch, const MatrixInstruction& instruction) noexcept;

// Empty when every thread wrote `expected` exactly; else what is wrong (how many threads differ,
// the first of them, its value).
std::string check_matrix_probe_output(std::span<const float> out, double expected);

// The probe compiled for a context's device and loaded into it.
class MatrixProbe {
 public:
  // Compiles the probe of `instruction` (default: matrix_instruction of ctx's arch) with `compiler`
  // (the backend of `ctx`) for ctx's arch. Throws CompileError or Error.
  MatrixProbe(const backend::Backend& compiler, backend::Context& ctx);
  MatrixProbe(const backend::Backend& compiler, backend::Context& ctx, const MatrixInstruction& instruction);
  MatrixProbe(const MatrixProbe&) = delete;
  MatrixProbe& operator=(const MatrixProbe&) = delete;
  ~MatrixProbe();

  const MatrixInstruction& instruction() const noexcept { return instruction_; }

  // A short launch with every operand 1.0, checked thread by thread on the host against
  // matrix_probe_expected_sum: a probe that skipped work (or was optimised away) fails here rather
  // than report a rate it never reached. Throws Error on a mismatch.
  void verify();

  // Times launches of `iterations` instructions per chain on operands of ordinary magnitude.
  Stats time(int iterations, const TimingPolicy& policy = {});
  // The launch of `iterations` instructions per chain on this device (matrix_probe_launch).
  MatrixProbeLaunch launch_of(int iterations) const;

 private:
  void launch(const MatrixProbeLaunch& l, const backend::Buffer& operands, backend::Buffer& out);

  backend::Context& ctx_;
  MatrixInstruction instruction_;
  std::unique_ptr<backend::Module> module_;
  void* function_ = nullptr;
};

// Instructions per chain of a timed launch: enough that a launch's fixed overhead is a small part
// of its time, few enough that `ktune devices` stays quick.
constexpr int kMatrixProbeIterations = 4096;

// The probe's rate in TFLOP/s (1e12 FLOP/s): compiled, verified once, then timed. Throws
// CompileError / Error when any step fails, DeviceFault after a device fault.
double measure_matrix_tflops(const backend::Backend& compiler, backend::Context& ctx, const TimingPolicy& policy = {});

// measure_matrix_tflops with a failure returned, not thrown (a DeviceFault is still thrown: the
// context is unusable): the roof is a reference for the kernels' figures, and a run goes on
// without it, its fractions not measured.
struct MatrixRoof {
  double tflops = 0;        // 0 when not measured
  std::string instruction;  // the probe's instruction ("wgmma m64n256k16 bf16"); empty when not measured
  std::string error;        // why not
};
MatrixRoof try_measure_matrix_tflops(const backend::Backend& compiler, backend::Context& ctx,
                                     const TimingPolicy& policy = {});

}  // namespace ktune::bench
