#include "kernels/mla_decode/reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/parallel.hpp"

namespace ktune::mla {
namespace {

// Rows (l, h) of one request handled together, so that each decoded key row is loaded once
// for several dot products; the row loop is innermost and contiguous, which vectorises without
// reordering any row's sums (every row adds its terms in index order, whatever the grouping).
constexpr int kRowsPerTask = 8;

size_t page_count(const HostProblem& p) {
  const auto page_bytes = static_cast<size_t>(p.page_size) * kHeadDim * num::bytes_of(p.kv_dtype);
  if (p.kv_cache.size() % page_bytes != 0)
    throw Error(fmt::format("mla reference: kv_cache has {} bytes, not a whole number of pages of {} bytes "
                            "(page_size {} x {} x {} bytes)",
                            p.kv_cache.size(), page_bytes, p.page_size, kHeadDim, num::bytes_of(p.kv_dtype)));
  return p.kv_cache.size() / page_bytes;
}

void validate(const HostProblem& p) {
  if (p.batch < 1 || p.block_len < 1 || p.heads < 1 || p.page_size < 1 || p.max_pages < 1)
    throw Error(fmt::format("mla reference: batch={} block_len={} heads={} page_size={} max_pages={} must all be >= 1",
                            p.batch, p.block_len, p.heads, p.page_size, p.max_pages));
  const size_t B = p.batch;
  const size_t q_elems = B * p.block_len * p.heads * kHeadDim;
  if (p.q.size() != q_elems)
    throw Error(fmt::format("mla reference: q has {} elements, expected B*L*H*{} = {}", p.q.size(), kHeadDim, q_elems));
  if (p.block_table.size() != B * p.max_pages)
    throw Error(fmt::format("mla reference: block_table has {} entries, expected B*max_pages = {}",
                            p.block_table.size(), B * p.max_pages));
  if (p.kv_lens.size() != B)
    throw Error(fmt::format("mla reference: kv_lens has {} entries, expected B = {}", p.kv_lens.size(), B));
  if (!std::isfinite(p.softmax_scale) || !std::isfinite(p.kv_scale))
    throw Error(
        fmt::format("mla reference: softmax_scale {} and kv_scale {} must be finite", p.softmax_scale, p.kv_scale));
  if (p.kv_dtype == num::KvDtype::bf16 && p.kv_scale != 1.0f)
    throw Error(fmt::format("mla reference: kv_scale is {} but a bf16 cache takes no scale (must be 1)", p.kv_scale));
  const size_t pages = page_count(p);
  for (size_t b = 0; b < B; ++b) {
    const int kv_len = p.kv_lens[b];
    if (kv_len < p.block_len)
      throw Error(fmt::format("mla reference: request b={} has kv_len {} < block_len {} (kv_len includes the block)", b,
                              kv_len, p.block_len));
    const int64_t used_pages = (static_cast<int64_t>(kv_len) + p.page_size - 1) / p.page_size;
    if (used_pages > p.max_pages)
      throw Error(
          fmt::format("mla reference: request b={} has kv_len {} = {} pages of {}, block_table has max_pages {}", b,
                      kv_len, used_pages, p.page_size, p.max_pages));
    for (int64_t i = 0; i < used_pages; ++i) {
      const int32_t page = p.block_table[b * p.max_pages + i];
      if (page < 0 || static_cast<size_t>(page) >= pages)
        throw Error(fmt::format("mla reference: block_table[b={}][{}] = {} is outside the cache's {} pages", b, i, page,
                                pages));
    }
  }
}

// Value of each raw cache element before kv_scale; every one is exact in float.
struct Decoder {
  num::KvDtype dtype;
  std::array<float, 256> fp8{};

  explicit Decoder(num::KvDtype d) : dtype(d) {
    for (int c = 0; c < 256; ++c)
      fp8[c] = d == num::KvDtype::fp8_e4m3fnuz ? num::fp8_e4m3fnuz_to_f32(static_cast<uint8_t>(c))
                                               : num::fp8_e4m3fn_to_f32(static_cast<uint8_t>(c));
  }
  void row(const uint8_t* src, float* dst) const {
    if (dtype == num::KvDtype::bf16) {
      for (int d = 0; d < kHeadDim; ++d) dst[d] = num::load_kv<num::KvDtype::bf16>(src, d);
    } else {
      for (int d = 0; d < kHeadDim; ++d) dst[d] = fp8[src[d]];
    }
  }
};

// Attention of rows [first_row, first_row + count) of request b (row = l * H + h).
void attend_rows(const HostProblem& p, int b, const std::vector<float>& keys, int first_row, int count,
                 Reference& out) {
  const double score_scale = static_cast<double>(p.softmax_scale) * p.kv_scale;  // exact product
  std::array<double, kHeadDim * kRowsPerTask> q{};  // [576][rows]: the row loop is innermost
  std::array<int, kRowsPerTask> visible{};
  int max_visible = 0;
  for (int r = 0; r < count; ++r) {
    const int row = first_row + r;
    visible[r] = visible_keys(p, b, row / p.heads);
    max_visible = std::max(max_visible, visible[r]);
    const size_t q_base = (static_cast<size_t>(b) * p.block_len * p.heads + row) * kHeadDim;
    for (int d = 0; d < kHeadDim; ++d) q[d * kRowsPerTask + r] = num::bf16_to_f32(p.q[q_base + d]);
  }

  std::vector<double> scores(static_cast<size_t>(max_visible) * kRowsPerTask);  // [key][rows]
  for (int j = 0; j < max_visible; ++j) {
    const float* k = keys.data() + static_cast<size_t>(j) * kHeadDim;
    std::array<double, kRowsPerTask> dot{};
    for (int d = 0; d < kHeadDim; ++d)
      for (int r = 0; r < kRowsPerTask; ++r) dot[r] += q[d * kRowsPerTask + r] * k[d];
    for (int r = 0; r < kRowsPerTask; ++r) scores[static_cast<size_t>(j) * kRowsPerTask + r] = score_scale * dot[r];
  }

  for (int r = 0; r < count; ++r) {
    auto score = [&](int j) -> double& { return scores[static_cast<size_t>(j) * kRowsPerTask + r]; };
    double max_score = -INFINITY;
    for (int j = 0; j < visible[r]; ++j) max_score = std::max(max_score, score(j));
    double sum = 0;
    for (int j = 0; j < visible[r]; ++j) {
      score(j) = std::exp(score(j) - max_score);  // now the unnormalised probability
      sum += score(j);
    }
    const size_t row_index = static_cast<size_t>(b) * p.block_len * p.heads + first_row + r;
    double* o = out.o.data() + row_index * kValueDim;
    for (int j = 0; j < visible[r]; ++j) {
      const float* v = keys.data() + static_cast<size_t>(j) * kHeadDim;
      const double w = score(j);
      for (int d = 0; d < kValueDim; ++d) o[d] += w * v[d];
    }
    const double o_scale = p.kv_scale / sum;
    for (int d = 0; d < kValueDim; ++d) o[d] *= o_scale;
    out.lse[row_index] = max_score + std::log(sum);
  }
}

}  // namespace

int visible_keys(const HostProblem& p, int b, int l) noexcept {
  const int kv_len = p.kv_lens[b];
  return p.causal ? kv_len - p.block_len + l + 1 : kv_len;
}

std::vector<float> request_keys(const HostProblem& p, int b) {
  const Decoder decoder(p.kv_dtype);
  const int kv_len = p.kv_lens[b];
  const size_t row_bytes = static_cast<size_t>(kHeadDim) * num::bytes_of(p.kv_dtype);
  std::vector<float> keys(static_cast<size_t>(kv_len) * kHeadDim);
  for (int j = 0; j < kv_len; ++j) {
    const size_t page = p.block_table[static_cast<size_t>(b) * p.max_pages + j / p.page_size];
    const size_t slot = page * p.page_size + j % p.page_size;
    decoder.row(p.kv_cache.data() + slot * row_bytes, keys.data() + static_cast<size_t>(j) * kHeadDim);
  }
  return keys;
}

Reference reference(const HostProblem& p) {
  validate(p);
  const size_t rows_per_request = static_cast<size_t>(p.block_len) * p.heads;
  Reference out;
  out.o.assign(p.batch * rows_per_request * kValueDim, 0.0);
  out.lse.assign(p.batch * rows_per_request, 0.0);
  const size_t tasks = (rows_per_request + kRowsPerTask - 1) / kRowsPerTask;
  for (int b = 0; b < p.batch; ++b) {
    // One request's keys at a time bounds memory by the longest sequence, not the whole batch.
    const std::vector<float> keys = request_keys(p, b);
    parallel_for(tasks, [&](size_t t) {
      const int first = static_cast<int>(t) * kRowsPerTask;
      attend_rows(p, b, keys, first, std::min<int>(kRowsPerTask, static_cast<int>(rows_per_request) - first), out);
    });
  }
  return out;
}

}  // namespace ktune::mla
