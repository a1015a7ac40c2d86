#include "kernels/mla_decode/instance.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "common/error.hpp"
#include "kernels/mla_decode/geometry.hpp"
#include "kernels/mla_decode/inputs.hpp"
#include "kernels/mla_decode/launch.hpp"
#include "kernels/mla_decode/split_policy.hpp"
#include "verify/compare.hpp"

namespace ktune::mla {
namespace {

struct RowLayout {
  int heads, block_len, dims;
};

// "b=1 l=0 h=3 d=17" for element i of an output laid out [B, L, H, dims].
std::string row_element_name(size_t i, const void* ctx) {
  const auto& c = *static_cast<const RowLayout*>(ctx);
  const size_t row = i / c.dims;
  const size_t h = row % c.heads, l = row / c.heads % c.block_len, b = row / c.heads / c.block_len;
  if (c.dims == 1) return fmt::format("b={} l={} h={}", b, l, h);
  return fmt::format("b={} l={} h={} d={}", b, l, h, i % c.dims);
}

size_t rows_of(const HostProblem& p) { return static_cast<size_t>(p.batch) * p.block_len * p.heads; }

const FieldSpec& config_field(std::string_view name) {
  for (const auto& f : config_fields())
    if (f.name == name) return f;
  throw Error(fmt::format("mla_decode has no config field '{}'", name));
}

}  // namespace

int policy_split_bound(const HostProblem& p, int compute_units) {
  // The policy grows with the knob and shrinks with the row tile and the key tile.
  const int max_len = *std::max_element(p.kv_lens.begin(), p.kv_lens.end());
  const int rows_per_request = p.block_len * p.heads;
  return num_splits({p.batch, mla_tile::ceil_div(rows_per_request, static_cast<int>(config_field("rows").max)), max_len,
                     compute_units, static_cast<int>(config_field("split").max),
                     static_cast<int>(config_field("keys").min)});
}

SharedBuffers upload_copies(backend::Context& ctx, const void* host, size_t bytes, int copies) {
  SharedBuffers out;
  for (int r = 0; r < copies; ++r) {
    out.push_back(ctx.alloc(bytes));
    if (r == 0)
      ctx.upload(*out[0], host, bytes);
    else
      ctx.copy(*out[r], *out[0], bytes);
  }
  return out;
}

DeviceInstance::DeviceInstance(backend::Context& ctx, HostProblem problem, bool with_reference, int rotations,
                               int split_capacity)
    : ctx_(ctx),
      problem_(std::move(problem)),
      rotations_(std::max(1, rotations)),
      split_capacity_(std::max(1, split_capacity)) {
  if (with_reference) reference_ = reference(problem_);
  kv_ = std::make_shared<const SharedBuffers>(
      upload_copies(ctx_, problem_.kv_cache.data(), problem_.kv_cache.size(), rotations_));
  upload_rest();
}

DeviceInstance::DeviceInstance(backend::Context& ctx, HostProblem problem, int rotations, int split_capacity,
                               std::shared_ptr<const SharedBuffers> kv)
    : ctx_(ctx),
      problem_(std::move(problem)),
      rotations_(std::max(1, rotations)),
      split_capacity_(std::max(1, split_capacity)),
      kv_(std::move(kv)) {
  const size_t bytes = cache_bytes(problem_);
  if (!kv_ || kv_->size() < static_cast<size_t>(rotations_) ||
      std::any_of(kv_->begin(), kv_->end(), [&](const auto& b) { return b->size() < bytes; }))
    throw Error(fmt::format("mla_decode: a shared cache needs {} copies of {} bytes, got {}", rotations_, bytes,
                            kv_ ? kv_->size() : 0));
  upload_rest();
}

void DeviceInstance::upload_rest() {
  const HostProblem& p = problem_;
  q_ = upload_copies(ctx_, p.q.data(), p.q.size() * sizeof(uint16_t), rotations_);
  block_table_ = ctx_.alloc(p.block_table.size() * sizeof(int32_t));
  ctx_.upload(*block_table_, p.block_table.data(), p.block_table.size() * sizeof(int32_t));
  kv_lens_ = ctx_.alloc(p.kv_lens.size() * sizeof(int32_t));
  ctx_.upload(*kv_lens_, p.kv_lens.data(), p.kv_lens.size() * sizeof(int32_t));
  o_ = ctx_.alloc(rows_of(p) * kValueDim * sizeof(uint16_t));
  lse_ = ctx_.alloc(rows_of(p) * sizeof(float));

  if (split_capacity_ > 1) {
    part_o_ = ctx_.alloc(static_cast<size_t>(split_capacity_) * rows_of(p) * kValueDim * sizeof(float));
    part_lse_ = ctx_.alloc(static_cast<size_t>(split_capacity_) * rows_of(p) * sizeof(float));
  }
  ctx_.synchronize();
}

int DeviceInstance::splits_for(const Config& config) const noexcept {
  const int max_len = *std::max_element(problem_.kv_lens.begin(), problem_.kv_lens.end());
  const int row_tiles = mla_tile::ceil_div(problem_.block_len * problem_.heads, config.rows);
  return num_splits({problem_.batch, row_tiles, max_len, ctx_.info().compute_units, config.split, config.keys});
}

void DeviceInstance::launch(const Candidate& c, int rotation) {
  launch_with_splits(c, rotation, splits_for(config_of(c.config)));
}

void DeviceInstance::launch_with_splits(const Candidate& c, int rotation, int num_splits) {
  const HostProblem& p = problem_;
  const Config config = config_of(c.config);
  if (!tiles(config, p.kv_dtype, ctx_.info().warp_size))
    throw Error(fmt::format("mla_decode: config {{{}}} does not tile (rows, keys, threads, stages) with a warp of {}",
                            c.config.canonical(), ctx_.info().warp_size));
  const int shared = shared_bytes(config, p.kv_dtype);
  if (c.module == nullptr || c.symbols.size() != 2)
    throw Error(
        fmt::format("mla_decode: a candidate needs a module and 2 symbols (main, combine), got {}", c.symbols.size()));
  if (rotation < 0 || rotation >= rotations_)
    throw Error(fmt::format("mla_decode: rotation {} is outside [0, {})", rotation, rotations_));
  if (num_splits < 1 || num_splits > split_capacity_)
    throw Error(fmt::format("mla_decode: {} splits requested, the workspace holds {}", num_splits, split_capacity_));

  LaunchProblem problem{q_[rotation]->as<const uint16_t>(),
                        (*kv_)[rotation]->as<const uint8_t>(),
                        block_table_->as<const int32_t>(),
                        kv_lens_->as<const int32_t>(),
                        o_->as<uint16_t>(),
                        lse_->as<float>(),
                        part_o_ ? part_o_->as<float>() : nullptr,
                        part_lse_ ? part_lse_->as<float>() : nullptr,
                        p.softmax_scale,
                        p.kv_scale,
                        p.heads,
                        p.block_len,
                        p.batch,
                        p.max_pages,
                        p.page_size};
  auto plan = launch_plan(problem, config, static_cast<size_t>(shared), num_splits);
  void* main = c.module->function(c.symbols[0]);
  ctx_.set_shared_limit(main, plan.main.shape.shared_bytes);
  ktune::launch(ctx_, main, plan.main.shape, plan.main.arguments.pointers().data());
  if (plan.combine)
    ktune::launch(ctx_, c.module->function(c.symbols[1]), plan.combine->shape,
                  plan.combine->arguments.pointers().data());
}

void DeviceInstance::poison() {
  ctx_.fill(*o_, 0xFF);  // bf16 0xFFFF and fp32 0xFFFFFFFF are NaN: unwritten elements fail
  ctx_.fill(*lse_, 0xFF);
}

Verdict DeviceInstance::verify() {
  if (!reference_) throw Error("mla_decode: verify() needs an instance made with_reference");
  const HostProblem& p = problem_;
  std::vector<uint16_t> o_bits(rows_of(p) * kValueDim);
  std::vector<float> lse(rows_of(p));
  ctx_.download(o_bits.data(), *o_, o_bits.size() * sizeof(uint16_t));
  ctx_.download(lse.data(), *lse_, lse.size() * sizeof(float));
  std::vector<float> o(o_bits.size());
  std::transform(o_bits.begin(), o_bits.end(), o.begin(), num::bf16_to_f32);
  const RowLayout o_layout{p.heads, p.block_len, kValueDim}, lse_layout{p.heads, p.block_len, 1};
  return verify::merge(verify::compare("o", o, reference_->o, kOutputTolerance, row_element_name, &o_layout),
                       verify::compare("lse", lse, reference_->lse, kLseTolerance, row_element_name, &lse_layout));
}

Traffic DeviceInstance::traffic() const noexcept {
  // FlashMLA's accounting: every cached token read once, q read and o written once.
  const HostProblem& p = problem_;
  const double total_kv = std::accumulate(p.kv_lens.begin(), p.kv_lens.end(), 0.0);
  const double rows = static_cast<double>(rows_of(p));
  const double mean_kv = total_kv / p.batch;
  return {total_kv * kHeadDim * num::bytes_of(p.kv_dtype) + rows * (kHeadDim + kValueDim) * 2.0,
          2.0 * rows * mean_kv * (kHeadDim + kValueDim)};
}

}  // namespace ktune::mla
