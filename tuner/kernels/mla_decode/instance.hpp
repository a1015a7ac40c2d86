#pragma once
// One mla_decode problem on a device: inputs (rotated copies for cold-L2 timing), outputs, the
// split-KV workspace, the launch of a candidate (main kernel, plus combine when split) and its
// verification against the CPU reference.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/backend.hpp"
#include "kernels/family.hpp"
#include "kernels/input_cache.hpp"
#include "kernels/mla_decode/problem.hpp"
#include "kernels/mla_decode/reference.hpp"
#include "verify/compare.hpp"

namespace ktune::mla {

// What verify() accepts. bf16 output: the kernel accumulates in fp32 and rounds once (relative
// error <= 2^-8: 8 significant bits), so rtol leaves 2.5 times that; atol covers outputs near zero, and is what rules
// out softmax weights of one bf16 term (tests/unit/mla_softmax_weights_test.cpp). lse is fp32 throughout.
inline constexpr verify::Tolerance kOutputTolerance{5e-4, 1e-2, 4e-3};
inline constexpr verify::Tolerance kLseTolerance{1e-4, 1e-5, 1e-5};

// At most this many input copies for cold-L2 timing (bench::rotations_for): a tiny problem
// would otherwise need thousands, and cannot be timed cold in any case.
inline constexpr int kMaxRotations = 64;

// The most splits the split policy can choose for `problem` on a device with `compute_units`,
// over every config within the family's field ranges: the workspace size that serves them all.
int policy_split_bound(const HostProblem& problem, int compute_units);

// `copies` device copies of `bytes` bytes at `host`: the first uploaded, the others copied from it
// on the device.
SharedBuffers upload_copies(backend::Context& ctx, const void* host, size_t bytes, int copies);

class DeviceInstance final : public Instance {
 public:
  // Uploads `problem` (in `rotations` copies of q and the cache) and allocates o, lse and a split
  // workspace for up to `split_capacity` splits.
  DeviceInstance(backend::Context& ctx, HostProblem problem, bool with_reference, int rotations, int split_capacity);
  // For timing only (no reference): the cache is `kv`, at least `rotations` copies of a cache of
  // cache_bytes(problem) (problem.kv_cache may be empty), shared with other instances, which
  // keeps it alive.
  DeviceInstance(backend::Context& ctx, HostProblem problem, int rotations, int split_capacity,
                 std::shared_ptr<const SharedBuffers> kv);

  // Launches with the split count of the split policy for `c`'s config on this device.
  void launch(const Candidate& c, int rotation) override;
  // Launches with an explicit split count (tests force splitting on and off). Throws Error when
  // num_splits is outside [1, the workspace's capacity].
  void launch_with_splits(const Candidate& c, int rotation, int num_splits);
  // What launch() uses for this config.
  int splits_for(const Config& config) const noexcept;

  int rotations() const noexcept override { return rotations_; }
  void poison() override;
  Verdict verify() override;
  Traffic traffic() const noexcept override;

  const HostProblem& problem() const noexcept { return problem_; }
  const SharedBuffers& kv_copies() const noexcept { return *kv_; }

 private:
  // Everything but the cache: q's copies, block table, lengths, outputs, split workspace.
  void upload_rest();

  backend::Context& ctx_;
  HostProblem problem_;
  std::optional<Reference> reference_;
  int rotations_ = 1;
  int split_capacity_ = 1;                   // splits the workspace holds
  SharedBuffers q_;                          // one per rotation
  std::shared_ptr<const SharedBuffers> kv_;  // one per rotation (or more, when shared)
  std::unique_ptr<backend::Buffer> block_table_, kv_lens_, o_, lse_, part_o_, part_lse_;
};

}  // namespace ktune::mla
