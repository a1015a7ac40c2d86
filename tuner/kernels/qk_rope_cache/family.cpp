#include "kernels/qk_rope_cache/family.hpp"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>

#include "bench/rotations.hpp"
#include "kernels/qk_rope_cache/inputs.hpp"
#include "kernels/qk_rope_cache/instance.hpp"
#include "kernels/qk_rope_cache/problem.hpp"

namespace ktune::rope {
namespace {

bool one_of(int v, std::initializer_list<int> allowed) {
  return std::find(allowed.begin(), allowed.end(), v) != allowed.end();
}

// Cos / sin rows of the verification shapes of a full rope: positions reach the last one.
constexpr int kVerifyTableRows = 4096;

class QkRopeCacheFamily final : public Family {
 public:
  std::string_view name() const noexcept override { return "qk_rope_cache"; }
  std::string_view summary() const noexcept override {
    return "fused MLA decode preparation: rope of q_pe and k_pe, [kv_c | rope(k_pe)] into the paged KV cache "
           "(bf16 or fp8), decode query [q_nope | rope(q_pe)] in bf16 or fp8; fused = 0 is the unfused baseline";
  }
  const std::vector<FieldSpec>& key_fields() const noexcept override { return rope::key_fields(); }
  const std::vector<FieldSpec>& config_fields() const noexcept override { return rope::config_fields(); }
  const std::vector<FieldSpec>& shape_fields() const noexcept override { return rope::shape_fields(); }
  std::string_view template_file() const noexcept override { return "qk_rope_cache/qk_rope_cache.hip"; }
  std::string_view bucket_field() const noexcept override { return "tokens"; }
  // An identity rope reads a 1-row table whatever the shape's table_rows (make_problem).
  Params effective_shape(const Params& key, const Params& shape) const override {
    Params s = Family::effective_shape(key, shape);
    if (key.find("rope") == static_cast<int64_t>(rope::RopeMode::identity) && s.find("table_rows"))
      s.set("table_rows", 1);
    return s;
  }
  // Tokens per launch set the grid, so which config wins; then the types, which set the bytes
  // moved per token; the rope variant and style change a few instructions. (scripts/run_order.py
  // measures over a swept database how close this ranking brings a key's first candidate to its
  // best, against the previous key of the plan.)
  std::vector<std::string> ranking_fields() const override {
    return {"tokens", "kv_dtype", "q_dtype", "heads", "rope", "is_neox"};
  }

  std::vector<std::string> name_expressions(const Params& key, const Params& config) const override {
    const Key k = key_of(key);
    return kernel_names(config_of(config), k.kv_dtype, k.q_dtype);
  }

  std::optional<std::string> infeasible(const Params& key, const Params& config,
                                        const TargetLimits& target) const override {
    if (auto violated = precondition_violated(key, config)) return violated;
    const Key k = key_of(key);
    const Config c = config_of(config);
    if (!one_of(c.vec, {2, 4, 8})) return fmt::format("vec={} is not 2, 4 or 8", c.vec);
    if (!one_of(c.tokens_per_cta, {1, 2, 4}))
      return fmt::format("tokens_per_cta={} is not 1, 2 or 4", c.tokens_per_cta);
    if (!one_of(c.threads, {64, 128, 256, 512})) return fmt::format("threads={} is not 64, 128, 256 or 512", c.threads);
    if (c.threads % target.warp_size != 0)
      return fmt::format("threads={} is not a multiple of {}'s warp of {}", c.threads, target.arch, target.warp_size);
    if (c.threads > target.max_threads_per_block)
      return fmt::format("threads={} exceeds {}'s {} per block", c.threads, target.arch, target.max_threads_per_block);
    if (!c.fused) {
      if (c.layout != Layout::token || c.tokens_per_cta != 1)
        return "the unfused baseline launches flat elementwise kernels: it has no layout or tokens_per_cta "
               "(only layout=token tokens_per_cta=1 is swept)";
      return std::nullopt;
    }
    const int items = items_per_cta(c, k.heads);
    if (2 * items <= c.threads)
      return fmt::format("threads={} for {} work items per CTA (layout {}, vec={}, tokens_per_cta={}, H={}): more "
                         "than half of every CTA would idle",
                         c.threads, items, config_fields()[0].format(static_cast<int>(c.layout)), c.vec,
                         c.tokens_per_cta, k.heads);
    return std::nullopt;
  }

  // The precondition the dispatch table must never lose (docs/kernels/qk_rope_cache.md): a variant that trusts the
  // positions reads row `position` of a table that has one.
  std::optional<std::string> precondition_violated(const Params& key, const Params& config) const override {
    if (key_of(key).rope == RopeMode::identity && !config_of(config).clamp)
      return "identity rope reads a 1-row table: only clamping variants serve it";
    return std::nullopt;
  }

  LaunchInfo launch_info(const Params& key, const Params& config) const override {
    return {config_of(config).threads, 0};
  }

  // H is a run-time argument of every kernel: a winner tuned for more heads serves fewer.
  bool covers_larger(std::string_view field) const noexcept override { return field == "heads"; }

  std::vector<Params> verify_shapes(const Params& key) const override {
    key_of(key);  // validates
    // One token in a page of one; tokens that are no multiple of tokens_per_cta, with padded
    // tokens, in pages of 16 and 64.
    return {to_params(Shape{1, 1, kVerifyTableRows, 0}), to_params(Shape{37, 16, kVerifyTableRows, 3}),
            to_params(Shape{130, 64, kVerifyTableRows, 7})};
  }
  // Each verify shape names its tokens.
  std::vector<std::string> fields_verification_ignores() const override { return {"tokens"}; }

  std::unique_ptr<Instance> instantiate(backend::Context& ctx, const Params& key, const Params& shape, uint64_t seed,
                                        bool with_reference) const override {
    HostProblem problem = make_problem(key_of(key), shape_of(shape), seed);
    const int64_t copy_bytes = static_cast<int64_t>(
        (problem.q_nope.size() + problem.q_pe.size() + problem.kv_c.size() + problem.k_pe.size()) * sizeof(uint16_t) +
        (problem.positions.size() + problem.slot_mapping.size()) * sizeof(int64_t));
    const int rotations =
        std::min(kMaxRotations, bench::rotations_for(copy_bytes, ctx.info().last_level_cache_bytes()));
    return std::make_unique<DeviceInstance>(ctx, std::move(problem), with_reference, rotations);
  }
};

}  // namespace

const Family& qk_rope_cache_family() {
  static const QkRopeCacheFamily family;
  return family;
}

}  // namespace ktune::rope
