#include "kernels/qk_rope_cache/instance.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"
#include "kernels/qk_rope_cache/launch.hpp"

namespace ktune::rope {
namespace {

template <class T>
std::unique_ptr<backend::Buffer> upload(backend::Context& ctx, const std::vector<T>& host) {
  auto buffer = ctx.alloc(host.size() * sizeof(T));
  ctx.upload(*buffer, host.data(), host.size() * sizeof(T));
  return buffer;
}

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
  const TokenInputs& in = inputs_[static_cast<size_t>(rotation)];
  const HostProblem& p = problem_;
  LaunchProblem problem;
  problem.q_nope = in.q_nope->as<const uint16_t>();
  problem.q_pe = in.q_pe->as<const uint16_t>();
  problem.kv_c = in.kv_c->as<const uint16_t>();
  problem.k_pe = in.k_pe->as<const uint16_t>();
  problem.positions = in.positions->as<const i64>();
  problem.slot_mapping = in.slots->as<const i64>();
  problem.cos = cos_->as<const float>();
  problem.sin = sin_->as<const float>();
  problem.kv_cache = kv_cache_->as<uint8_t>();
  problem.q_out = q_out_->as<uint8_t>();
  problem.k_scale = p.k_scale;
  problem.q_scale = p.q_scale;
  problem.tokens = p.tokens;
  problem.heads = p.heads;
  problem.table_rows = p.table_rows;
  problem.is_neox = p.is_neox;
  problem.q_dtype = p.q_dtype;
  problem.q_pe_rot = q_pe_rot_->as<uint16_t>();
  problem.k_pe_rot = k_pe_rot_->as<uint16_t>();
  problem.q_cat = q_cat_ ? q_cat_->as<uint16_t>() : nullptr;
  auto function = [&](size_t i) { return c.module->function(c.symbols[i]); };
  if (config.fused) {
    auto l = fused_launch(problem, config);
    ktune::launch(ctx_, function(0), l.shape, l.arguments.pointers().data());
    return;
  }
  auto u = unfused_launches(problem, config);
  ktune::launch(ctx_, function(0), u.rope.shape, u.rope.arguments.pointers().data());
  ktune::launch(ctx_, function(1), u.cache.shape, u.cache.arguments.pointers().data());
  ktune::launch(ctx_, function(2), u.concat.shape, u.concat.arguments.pointers().data());
  if (u.quantise) ktune::launch(ctx_, function(3), u.quantise->shape, u.quantise->arguments.pointers().data());
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
