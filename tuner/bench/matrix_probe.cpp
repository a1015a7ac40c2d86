#include "bench/matrix_probe.hpp"

#include <fmt/format.h>

#include <random>
#include <vector>

#include "bench/roofline.hpp"
#include "bench/timing.hpp"
#include "common/error.hpp"
#include "jit/templates.hpp"
#include "kernels/family.hpp"
#include "verify/numeric.hpp"

namespace ktune::bench {
namespace {

// Operand words per lane (templates/probe/mma_probe.hip: kLaneWords; wgmma_probe.hip reads the 256
// of a 32-lane warp into its tiles).
constexpr int kLaneWords = 8;
// Instructions per chain of the verifying launch: few, so that it is quick, and its sums exact in
// fp32 whatever the launch.
constexpr int kVerifyIterations = 16;

constexpr uint32_t bf16_pair(uint16_t lo, uint16_t hi) { return uint32_t{lo} | uint32_t{hi} << 16; }

std::vector<uint32_t> operand_words(int warp_size, bool ones) {
  std::vector<uint32_t> words(static_cast<size_t>(warp_size) * kLaneWords);
  const uint16_t one = num::f32_to_bf16(1.0f);
  std::mt19937 rng(0x6d6d61);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (auto& w : words)
    w = ones ? bf16_pair(one, one) : bf16_pair(num::f32_to_bf16(value(rng)), num::f32_to_bf16(value(rng)));
  return words;
}

}  // namespace

// mma_probe.hip's CTA and chains: two CTAs of 256 threads per SM / CU are resident at once on
// every target (8 chains hold 32 accumulator registers a thread), and with 8 chains per warp each
// SM sub-partition / SIMD has 16 or more independent instructions in flight, several times the
// instruction's latency over its issue interval.
MatrixInstruction mma_sync_instruction() noexcept {
  return {"mma.sync m16n8k16 bf16", 16, 8, 16, "probe/mma_probe.hip", "ktune::mma_probe", 256, 8, 2};
}

MatrixInstruction matrix_instruction(std::string_view arch) {
  // wgmma_probe.hip: one CTA of two warpgroups per SM (154 registers a thread, ptxas 13.0), each
  // with one accumulator, which the tensor cores chain without a wait.
  if (is_known_target(arch) && target_limits(arch).warpgroup_mma)
    return {"wgmma m64n256k16 bf16", 64 / 4, 256, 16, "probe/wgmma_probe.hip", "ktune::wgmma_probe", 256, 1, 1};
  if (arch.starts_with("sm_")) return mma_sync_instruction();
  if (arch.starts_with("gfx"))
    return {"mfma 16x16x16 bf16", 16, 16, 16, "probe/mma_probe.hip", "ktune::mma_probe", 256, 8, 2};
  throw Error(fmt::format("matrix-core probe: no matrix instruction known for '{}' (sm_* or gfx*)", arch));
}

MatrixProbeLaunch matrix_probe_launch(const backend::DeviceInfo& device, const MatrixInstruction& instruction,
                                      int iterations) {
  if (device.compute_units < 1 || device.warp_size < 1 || instruction.threads % device.warp_size != 0)
    throw Error(fmt::format("matrix-core probe: {} reports {} compute units and warps of {}", device.name,
                            device.compute_units, device.warp_size));
  if (iterations < 1) throw Error(fmt::format("matrix-core probe: {} iterations", iterations));
  return {int64_t{instruction.ctas_per_unit} * device.compute_units, instruction.threads, device.warp_size,
          instruction.chains, iterations};
}

double matrix_probe_flops(const MatrixProbeLaunch& launch, const MatrixInstruction& instruction) noexcept {
  return static_cast<double>(launch.instructions()) * instruction.flops();
}

double matrix_probe_expected_sum(const MatrixProbeLaunch& launch, const MatrixInstruction& instruction) noexcept {
  // Accumulator elements per lane and chain: one m x n block over the warp.
  const double elems = static_cast<double>(instruction.m) * instruction.n / launch.warp_size;
  const double start = elems * launch.chains * (launch.chains - 1) / 2.0;  // chain c starts at c
  return start + elems * launch.chains * static_cast<double>(instruction.k) * launch.iterations;
}

std::string check_matrix_probe_output(std::span<const float> out, double expected) {
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (!(static_cast<double>(out[i]) == expected) && wrong++ == 0) first = i;
  if (wrong == 0) return {};
  return fmt::format("{} of {} threads wrote a wrong sum; thread {} wrote {}, expected {}", wrong, out.size(), first,
                     out[first], expected);
}

MatrixProbe::MatrixProbe(const backend::Backend& compiler, backend::Context& ctx)
    : MatrixProbe(compiler, ctx, matrix_instruction(ctx.info().arch)) {}

MatrixProbe::MatrixProbe(const backend::Backend& compiler, backend::Context& ctx, const MatrixInstruction& instruction)
    : ctx_(ctx), instruction_(instruction) {
  const std::string name = fmt::format("{}<{}, {}>", instruction.kernel, instruction.threads, instruction.chains);
  const std::string file(instruction.source.substr(instruction.source.rfind('/') + 1));
  const auto code = compiler.compile({jit::render_embedded(instruction.source), file, {name}, ctx.info().arch, {}});
  module_ = ctx_.load(code.code);
  function_ = module_->function(code.lowered_names.at(0));
}

MatrixProbe::~MatrixProbe() = default;

MatrixProbeLaunch MatrixProbe::launch_of(int iterations) const {
  return matrix_probe_launch(ctx_.info(), instruction_, iterations);
}

void MatrixProbe::launch(const MatrixProbeLaunch& l, const backend::Buffer& operands, backend::Buffer& out) {
  uint64_t ops = operands.address(), dst = out.address();
  int iterations = l.iterations;
  void* args[] = {&ops, &dst, &iterations};
  ctx_.launch(function_, {static_cast<unsigned>(l.ctas), 1, 1}, {static_cast<unsigned>(l.threads), 1, 1}, 0, args);
}

void MatrixProbe::verify() {
  const MatrixProbeLaunch l = launch_of(kVerifyIterations);
  const auto words = operand_words(l.warp_size, /*ones=*/true);
  auto operands = ctx_.alloc(words.size() * sizeof(uint32_t));
  ctx_.upload(*operands, words.data(), words.size() * sizeof(uint32_t));
  std::vector<float> out(static_cast<size_t>(l.ctas * l.threads));
  auto dst = ctx_.alloc(out.size() * sizeof(float));
  ctx_.fill(*dst, 0xff);  // NaN: a thread that writes nothing is caught
  launch(l, *operands, *dst);
  ctx_.download(out.data(), *dst, out.size() * sizeof(float));
  const auto wrong = check_matrix_probe_output(out, matrix_probe_expected_sum(l, instruction_));
  if (!wrong.empty())
    throw Error(fmt::format("matrix-core probe ({}) on {}: all-ones operands, {} instructions per chain: {}",
                            instruction_.name, ctx_.info().name, l.iterations, wrong));
}

Stats MatrixProbe::time(int iterations, const TimingPolicy& policy) {
  const MatrixProbeLaunch l = launch_of(iterations);
  const auto words = operand_words(l.warp_size, /*ones=*/false);
  auto operands = ctx_.alloc(words.size() * sizeof(uint32_t));
  ctx_.upload(*operands, words.data(), words.size() * sizeof(uint32_t));
  auto dst = ctx_.alloc(static_cast<size_t>(l.ctas * l.threads) * sizeof(float));
  return measure(
      ctx_, [&](int) { launch(l, *operands, *dst); }, 1, policy);
}

namespace {
MatrixRoof measure_roof(const backend::Backend& compiler, backend::Context& ctx, const TimingPolicy& policy) {
  MatrixProbe probe(compiler, ctx);
  probe.verify();
  const Stats stats = probe.time(kMatrixProbeIterations, policy);
  if (!(stats.median_us > 0)) throw Error("matrix-core probe: the device timed the probe at zero microseconds");
  const double tflops = rates_of(0, matrix_probe_flops(probe.launch_of(kMatrixProbeIterations), probe.instruction()),
                                 stats.median_us, 0, 0)
                            .tflops;
  return {tflops, std::string(probe.instruction().name), {}};
}
}  // namespace

double measure_matrix_tflops(const backend::Backend& compiler, backend::Context& ctx, const TimingPolicy& policy) {
  return measure_roof(compiler, ctx, policy).tflops;
}

MatrixRoof try_measure_matrix_tflops(const backend::Backend& compiler, backend::Context& ctx,
                                     const TimingPolicy& policy) {
  try {
    return measure_roof(compiler, ctx, policy);
  } catch (const DeviceFault&) {
    throw;
  } catch (const CompileError& e) {
    return {0, {}, fmt::format("the probe does not compile for {}: {}\n{}", ctx.info().arch, e.what(), e.log())};
  } catch (const Error& e) {
    return {0, {}, e.what()};
  }
}

}  // namespace ktune::bench
