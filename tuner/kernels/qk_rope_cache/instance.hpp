#pragma once
// One qk_rope_cache problem on a device: inputs (rotated copies for cold-L2 timing), the cos / sin
// tables, the canary-filled cache, q_out, the unfused baseline's intermediates, the launch of a
// candidate (the fused kernel, or the unfused sequence in order) and its verification.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/backend.hpp"
#include "kernels/family.hpp"
#include "kernels/qk_rope_cache/problem.hpp"
#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune::rope {

// At most this many input copies for cold-L2 timing (bench::rotations_for).
inline constexpr int kMaxRotations = 64;

class DeviceInstance final : public Instance {
 public:
  // Uploads `problem` (its token inputs in `rotations` copies). Throws Error for a problem the
  // reference rejects (a bf16 table among others), with or without the reference.
  DeviceInstance(backend::Context& ctx, HostProblem problem, bool with_reference, int rotations);

  void launch(const Candidate& c, int rotation) override;
  int rotations() const noexcept override { return rotations_; }
  // q_out becomes NaN codes; the cache gets its canary bytes back (the problem's kv_cache).
  void poison() override;
  Verdict verify() override;
  Traffic traffic() const noexcept override;

  const HostProblem& problem() const noexcept { return problem_; }

 private:
  struct TokenInputs {
    std::unique_ptr<backend::Buffer> q_nope, q_pe, kv_c, k_pe, positions, slots;
  };
  backend::Context& ctx_;
  HostProblem problem_;
  std::optional<Reference> reference_;
  int rotations_ = 1;
  std::vector<TokenInputs> inputs_;  // one per rotation
  std::unique_ptr<backend::Buffer> cos_, sin_, kv_cache_, q_out_;
  std::unique_ptr<backend::Buffer> q_pe_rot_, k_pe_rot_, q_cat_;  // the unfused sequence's intermediates
};

}  // namespace ktune::rope
