#include "kernels/qk_rope_cache/instance.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace ktune::rope {
namespace {

template <class T>
std::unique_ptr<backend::Buffer> upload(backend::Context& ctx, const std::vector<T>& host) {
  auto buffer = ctx.alloc(host.size() * sizeof(T));
  ctx.upload(*buffer, host.data(), host.size() * sizeof(T));
  return buffer;
}

unsigned blocks(int64_t items, int threads) { return static_cast<unsigned>((items + threads - 1) / threads); }

}  // namespace

DeviceInstance::DeviceInstance(backend::Context& ctx, HostProblem problem, bool with_reference, int rotations)
    : ctx_(ctx), problem_(std::move(problem)), rotations_(std::max(1, rotations)) {
  validate(problem_);  // the bf16-table refusal included, also for timing instances
  if (with_reference) reference_ = reference(problem_);
  const HostProblem& p = problem_;
  for (int r = 0; r < rotations_; ++r) {
    TokenInputs in;
    if (r == 0) {
      in = {upload(ctx_, p.q_nope), upload(ctx_, p.q_pe),      upload(ctx_, p.kv_c),
            upload(ctx_, p.k_pe),   upload(ctx_, p.positions), upload(ctx_, p.slot_mapping)};
    } else {  // device-side copies of copy 0
      const TokenInputs& first = inputs_[0];
      auto copy = [&](const backend::Buffer& src) {
        auto b = ctx_.alloc(src.size());
        ctx_.copy(*b, src, src.size());
        return b;
      };
      in = {copy(*first.q_nope), copy(*first.q_pe),      copy(*first.kv_c),
            copy(*first.k_pe),   copy(*first.positions), copy(*first.slots)};
    }
    inputs_.push_back(std::move(in));
  }
  cos_ = upload(ctx_, p.cos);
  sin_ = upload(ctx_, p.sin);
  kv_cache_ = upload(ctx_, p.kv_cache);
  const size_t q_rows = static_cast<size_t>(p.tokens) * p.heads;
  q_out_ = ctx_.alloc(q_rows * kRowDim * num::bytes_of(p.q_dtype));
  q_pe_rot_ = ctx_.alloc(q_rows * kRopeDim * sizeof(uint16_t));
  k_pe_rot_ = ctx_.alloc(static_cast<size_t>(p.tokens) * kRopeDim * sizeof(uint16_t));
  if (p.q_dtype != num::KvDtype::bf16) q_cat_ = ctx_.alloc(q_rows * kRowDim * sizeof(uint16_t));
  ctx_.synchronize();
}

void DeviceInstance::launch(const Candidate& c, int rotation) {
  const Config config = config_of(c.config);
  const auto names = kernel_names(config, problem_.kv_dtype, problem_.q_dtype);
  if (c.module == nullptr || c.symbols.size() != names.size())
    throw Error(fmt::format("qk_rope_cache: config {{{}}} launches {} kernel(s), the candidate has {} symbol(s)",
                            c.config.canonical(), names.size(), c.symbols.size()));
  if (rotation < 0 || rotation >= rotations_)
    throw Error(fmt::format("qk_rope_cache: rotation {} is outside [0, {})", rotation, rotations_));
  if (config.fused)
    launch_fused(c, config, inputs_[static_cast<size_t>(rotation)]);
  else
    launch_unfused(c, config, inputs_[static_cast<size_t>(rotation)]);
}

void DeviceInstance::launch_fused(const Candidate& c, const Config& config, const TokenInputs& in) {
  const HostProblem& p = problem_;
  // Kernel arguments, in the order of the kernel's parameter list.
  uint64_t q_nope = in.q_nope->address(), q_pe = in.q_pe->address(), kv_c = in.kv_c->address();
  uint64_t k_pe = in.k_pe->address(), positions = in.positions->address(), slots = in.slots->address();
  uint64_t cos = cos_->address(), sin = sin_->address(), kv_cache = kv_cache_->address(), q_out = q_out_->address();
  float k_inv_scale = 1.f / p.k_scale, q_inv_scale = 1.f / p.q_scale;
  int tokens = p.tokens, heads = p.heads, is_neox = p.is_neox ? 1 : 0;
  int64_t table_rows = p.table_rows;
  void* args[] = {&q_nope, &q_pe, &kv_c, &k_pe, &positions, &slots, &cos, &sin, &kv_cache, &q_out,
                  &k_inv_scale, &q_inv_scale, &tokens, &heads, &table_rows, &is_neox};
  const unsigned ctas = blocks(p.tokens, config.tokens_per_cta);
  const backend::Dim3 grid{ctas, config.layout == Layout::token ? 1u : static_cast<unsigned>(p.heads + 1), 1};
  ctx_.launch(c.module->function(c.symbols[0]), grid, {static_cast<unsigned>(config.threads), 1, 1}, 0, args);
}

void DeviceInstance::launch_unfused(const Candidate& c, const Config& config, const TokenInputs& in) {
  const HostProblem& p = problem_;
  const unsigned threads = static_cast<unsigned>(config.threads);
  const int64_t q_rows = static_cast<int64_t>(p.tokens) * p.heads;
  uint64_t q_nope = in.q_nope->address(), q_pe = in.q_pe->address(), kv_c = in.kv_c->address();
  uint64_t k_pe = in.k_pe->address(), positions = in.positions->address(), slots = in.slots->address();
  uint64_t cos = cos_->address(), sin = sin_->address(), kv_cache = kv_cache_->address(), q_out = q_out_->address();
  uint64_t q_pe_rot = q_pe_rot_->address(), k_pe_rot = k_pe_rot_->address();
  uint64_t q_cat = q_cat_ ? q_cat_->address() : q_out;  // a bf16 q_out is the concatenation itself
  float k_inv_scale = 1.f / p.k_scale, q_inv_scale = 1.f / p.q_scale;
  int tokens = p.tokens, heads = p.heads, is_neox = p.is_neox ? 1 : 0;
  int64_t table_rows = p.table_rows, elements = q_rows * kRowDim;

  void* rope_args[] = {&q_pe, &k_pe, &positions, &cos, &sin, &q_pe_rot, &k_pe_rot, &tokens, &heads, &table_rows,
                       &is_neox};
  ctx_.launch(c.module->function(c.symbols[0]), {blocks((q_rows + p.tokens) * (kRopeDim / config.vec), config.threads)},
              {threads}, 0, rope_args);
  void* cache_args[] = {&kv_c, &k_pe_rot, &slots, &kv_cache, &k_inv_scale, &tokens};
  ctx_.launch(c.module->function(c.symbols[1]), {blocks(int64_t{p.tokens} * (kRowDim / config.vec), config.threads)},
              {threads}, 0, cache_args);
  void* concat_args[] = {&q_nope, &q_pe_rot, &q_cat, &tokens, &heads};
  ctx_.launch(c.module->function(c.symbols[2]), {blocks(q_rows * (kRowDim / config.vec), config.threads)}, {threads},
              0, concat_args);
  if (q_cat_) {
    void* quantise_args[] = {&q_cat, &q_out, &q_inv_scale, &elements};
    ctx_.launch(c.module->function(c.symbols[3]), {blocks(elements / config.vec, config.threads)}, {threads}, 0,
                quantise_args);
  }
}

void DeviceInstance::poison() {
  // 0x80 is fp8_e4m3fnuz's only NaN; 0xff is NaN in bf16 (0xffff) and fp8_e4m3fn.
  ctx_.fill(*q_out_, problem_.q_dtype == num::KvDtype::fp8_e4m3fnuz ? 0x80 : 0xff);
  ctx_.upload(*kv_cache_, problem_.kv_cache.data(), problem_.kv_cache.size());
}

Verdict DeviceInstance::verify() {
  if (!reference_) throw Error("qk_rope_cache: verify() needs an instance made with_reference");
  std::vector<uint8_t> q_out(q_out_->size()), kv_cache(problem_.kv_cache.size());
  ctx_.download(q_out.data(), *q_out_, q_out.size());
  ctx_.download(kv_cache.data(), *kv_cache_, kv_cache.size());
  return check(problem_, *reference_, q_out, kv_cache);
}

Traffic DeviceInstance::traffic() const noexcept {
  // Every input read once, every output written once: q_nope, q_pe, kv_c, k_pe (bf16), positions
  // and slots (int64), the distinct table rows the positions use (at most one per token), q_out,
  // and the cache rows of the tokens that are not padded. The unfused baseline is charged the same
  // bytes: its intermediates are the price of not fusing.
  const HostProblem& p = problem_;
  const double T = p.tokens, H = p.heads;
  const double written = static_cast<double>(
      std::count_if(p.slot_mapping.begin(), p.slot_mapping.end(), [](int64_t s) { return s >= 0; }));
  const double table = std::min<double>(T, static_cast<double>(p.table_rows)) * kTableDim * 2 * sizeof(float);
  const double bytes = (T * H + T) * kRowDim * 2.0 + T * 2 * sizeof(int64_t) + table +
                       T * H * kRowDim * num::bytes_of(p.q_dtype) + written * kRowDim * num::bytes_of(p.kv_dtype);
  // Rotation: 2 multiplies and an add per rope output; fp8 outputs: a multiply per element.
  double flops = (T * H + T) * kRopeDim * 3.0;
  if (p.q_dtype != num::KvDtype::bf16) flops += T * H * kRowDim;
  if (p.kv_dtype != num::KvDtype::bf16) flops += written * kRowDim;
  return {bytes, flops};
}

}  // namespace ktune::rope
