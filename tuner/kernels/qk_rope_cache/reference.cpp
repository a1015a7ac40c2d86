#include "kernels/qk_rope_cache/reference.hpp"

#include <array>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "common/error.hpp"
#include "verify/compare.hpp"

namespace ktune::rope {
namespace {

size_t row_bytes(num::KvDtype d) { return static_cast<size_t>(kRowDim) * num::bytes_of(d); }

void expect_size(const char* what, size_t have, size_t want, const char* shape) {
  if (have != want)
    throw Error(fmt::format("qk_rope_cache reference: {} has {} elements, expected {} = {}", what, have, shape, want));
}

}  // namespace

void validate(const HostProblem& p) {
  if (p.table_dtype != TableDtype::fp32)
    throw Error("qk_rope_cache: the cos / sin tables must be fp32; a bf16 table is rejected (8 significant bits "
                "turn the angles of large positions into noise): pass the fp32 cos_sin_cache");
  if (p.tokens < 1 || p.heads < 1 || p.page_size < 1 || p.num_slots < 1 || p.table_rows < 1)
    throw Error(fmt::format("qk_rope_cache reference: tokens={} heads={} page_size={} num_slots={} table_rows={} "
                            "must all be >= 1",
                            p.tokens, p.heads, p.page_size, p.num_slots, p.table_rows));
  if (p.num_slots % p.page_size != 0)
    throw Error(
        fmt::format("qk_rope_cache reference: {} cache slots are not whole pages of {}", p.num_slots, p.page_size));
  const size_t T = p.tokens, H = p.heads;
  expect_size("q_nope", p.q_nope.size(), T * H * kNopeDim, "T*H*512");
  expect_size("q_pe", p.q_pe.size(), T * H * kRopeDim, "T*H*64");
  expect_size("kv_c", p.kv_c.size(), T * kNopeDim, "T*512");
  expect_size("k_pe", p.k_pe.size(), T * kRopeDim, "T*64");
  expect_size("positions", p.positions.size(), T, "T");
  expect_size("slot_mapping", p.slot_mapping.size(), T, "T");
  expect_size("cos", p.cos.size(), static_cast<size_t>(p.table_rows) * kTableDim, "table_rows*32");
  expect_size("sin", p.sin.size(), static_cast<size_t>(p.table_rows) * kTableDim, "table_rows*32");
  expect_size("kv_cache (bytes)", p.kv_cache.size(), static_cast<size_t>(p.num_slots) * row_bytes(p.kv_dtype),
              "num_slots*576*element bytes");
  for (float scale : {p.k_scale, p.q_scale})
    if (!std::isfinite(scale) || scale <= 0)
      throw Error(fmt::format("qk_rope_cache reference: scales must be finite and positive, k_scale {} q_scale {}",
                              p.k_scale, p.q_scale));
  if (p.kv_dtype == num::KvDtype::bf16 && p.k_scale != 1.0f)
    throw Error(
        fmt::format("qk_rope_cache reference: k_scale is {} but a bf16 cache takes no scale (must be 1)", p.k_scale));
  if (p.q_dtype == num::KvDtype::bf16 && p.q_scale != 1.0f)
    throw Error(
        fmt::format("qk_rope_cache reference: q_scale is {} but a bf16 q_out takes no scale (must be 1)", p.q_scale));
  std::vector<bool> taken(static_cast<size_t>(p.num_slots), false);
  for (size_t t = 0; t < T; ++t) {
    const int64_t slot = p.slot_mapping[t], pos = p.positions[t];
    if (pos < 0 || (!p.identity && pos >= p.table_rows))
      throw Error(fmt::format("qk_rope_cache reference: token {} has position {}, outside the {}-row table of a "
                              "full rope",
                              t, pos, p.table_rows));
    if (slot < 0) continue;
    if (slot >= p.num_slots)
      throw Error(
          fmt::format("qk_rope_cache reference: token {} maps to slot {}, the cache has {}", t, slot, p.num_slots));
    if (taken[static_cast<size_t>(slot)])
      throw Error(fmt::format("qk_rope_cache reference: slot {} is written by two tokens (token {})", slot, t));
    taken[static_cast<size_t>(slot)] = true;
  }
}

namespace {

// rope(pe) of one 64-element vector with angle table row (c, s).
void rotate(const uint16_t* pe, const std::array<double, kTableDim>& c, const std::array<double, kTableDim>& s,
            bool is_neox, double* out) {
  std::array<double, kRopeDim> x;
  for (int j = 0; j < kRopeDim; ++j) x[j] = num::bf16_to_f32(pe[j]);
  for (int i = 0; i < kTableDim; ++i) {
    const int a = is_neox ? i : 2 * i;                  // first element of pair i
    const int b = is_neox ? i + kTableDim : 2 * i + 1;  // its partner
    out[a] = x[a] * c[i] - x[b] * s[i];
    out[b] = x[b] * c[i] + x[a] * s[i];
  }
}

// One row [nope | rope(pe)].
void make_row(const uint16_t* nope, const uint16_t* pe, const std::array<double, kTableDim>& c,
              const std::array<double, kTableDim>& s, bool is_neox, double* out) {
  for (int d = 0; d < kNopeDim; ++d) out[d] = num::bf16_to_f32(nope[d]);
  rotate(pe, c, s, is_neox, out + kNopeDim);
}

void encode_value(num::KvDtype d, double value, float scale, uint8_t* bytes, size_t i) {
  num::store_kv(d, bytes, i, static_cast<float>(value / scale));
}

// bf16: one rounding of an fp32 result (relative error <= 2^-9; the unfused sequence rounds
// once as well). fp8: half a unit in the last place (2^-4 relative) plus the bf16 rounding of
// the unfused sequence's intermediate, and below the normal range the smallest subnormal
// (2^-9 in code units) times the scale.
verify::Tolerance tolerance(num::KvDtype d, float scale) {
  if (d == num::KvDtype::bf16) return {1e-5, 4e-3, 2e-3};
  return {std::ldexp(1.0, -9) * scale, 0.07, 0.05};
}

struct QLayout {
  int heads;
};
std::string q_element_name(size_t i, const void* ctx) {
  const int heads = static_cast<const QLayout*>(ctx)->heads;
  const size_t row = i / kRowDim;
  return fmt::format("q_out t={} h={} d={}", row / heads, row % heads, i % kRowDim);
}

struct CacheLayout {
  const std::vector<int64_t>* tokens;  // token of each checked row
  const HostProblem* problem;
};
std::string cache_element_name(size_t i, const void* ctx) {
  const auto& c = *static_cast<const CacheLayout*>(ctx);
  const int64_t t = (*c.tokens)[i / kRowDim];
  const int64_t slot = c.problem->slot_mapping[static_cast<size_t>(t)];
  return fmt::format("cache row of token {} (slot {}: page {}, offset {}) d={}", t, slot, slot / c.problem->page_size,
                     slot % c.problem->page_size, i % kRowDim);
}

}  // namespace

Reference reference(const HostProblem& p) {
  validate(p);
  Reference r;
  r.q_out.resize(static_cast<size_t>(p.tokens) * p.heads * kRowDim);
  r.kv_rows.resize(static_cast<size_t>(p.tokens) * kRowDim);
  for (size_t t = 0; t < static_cast<size_t>(p.tokens); ++t) {
    std::array<double, kTableDim> c, s;
    for (int i = 0; i < kTableDim; ++i) {
      const size_t at = static_cast<size_t>(p.positions[t]) * kTableDim + i;
      c[i] = p.identity ? 1.0 : p.cos[at];
      s[i] = p.identity ? 0.0 : p.sin[at];
    }
    for (size_t h = 0; h < static_cast<size_t>(p.heads); ++h) {
      const size_t qrow = t * p.heads + h;
      make_row(&p.q_nope[qrow * kNopeDim], &p.q_pe[qrow * kRopeDim], c, s, p.is_neox, &r.q_out[qrow * kRowDim]);
    }
    make_row(&p.kv_c[t * kNopeDim], &p.k_pe[t * kRopeDim], c, s, p.is_neox, &r.kv_rows[t * kRowDim]);
  }
  return r;
}

Outputs encode(const HostProblem& p, const Reference& ref) {
  Outputs out;
  out.q_out.resize(ref.q_out.size() * num::bytes_of(p.q_dtype));
  for (size_t i = 0; i < ref.q_out.size(); ++i) encode_value(p.q_dtype, ref.q_out[i], p.q_scale, out.q_out.data(), i);
  out.kv_cache = p.kv_cache;
  for (size_t t = 0; t < static_cast<size_t>(p.tokens); ++t) {
    const int64_t slot = p.slot_mapping[t];
    if (slot < 0) continue;
    uint8_t* row = out.kv_cache.data() + static_cast<size_t>(slot) * row_bytes(p.kv_dtype);
    for (size_t d = 0; d < kRowDim; ++d) encode_value(p.kv_dtype, ref.kv_rows[t * kRowDim + d], p.k_scale, row, d);
  }
  return out;
}

Verdict check(const HostProblem& p, const Reference& ref, std::span<const uint8_t> q_out,
              std::span<const uint8_t> kv_cache) {
  constexpr double kInf = INFINITY;
  if (q_out.size() != ref.q_out.size() * num::bytes_of(p.q_dtype) || kv_cache.size() != p.kv_cache.size())
    return {false, kInf, kInf,
            fmt::format("outputs have {} q_out and {} cache bytes, expected {} and {}", q_out.size(), kv_cache.size(),
                        ref.q_out.size() * num::bytes_of(p.q_dtype), p.kv_cache.size())};

  std::vector<float> q(ref.q_out.size());
  for (size_t i = 0; i < q.size(); ++i) q[i] = num::load_kv(p.q_dtype, q_out.data(), i) * p.q_scale;
  const QLayout q_layout{p.heads};
  Verdict v = verify::compare("q_out", q, ref.q_out, tolerance(p.q_dtype, p.q_scale), q_element_name, &q_layout);

  // Written rows, by value; every other slot, by its bytes.
  const size_t rb = row_bytes(p.kv_dtype);
  std::vector<int64_t> writer(static_cast<size_t>(p.num_slots), -1), written_tokens;
  for (size_t t = 0; t < static_cast<size_t>(p.tokens); ++t)
    if (p.slot_mapping[t] >= 0) {
      writer[static_cast<size_t>(p.slot_mapping[t])] = static_cast<int64_t>(t);
      written_tokens.push_back(static_cast<int64_t>(t));
    }
  std::vector<float> rows;
  std::vector<double> expected;
  for (int64_t t : written_tokens) {
    const uint8_t* row = kv_cache.data() + static_cast<size_t>(p.slot_mapping[static_cast<size_t>(t)]) * rb;
    for (size_t d = 0; d < kRowDim; ++d) {
      rows.push_back(num::load_kv(p.kv_dtype, row, d) * p.k_scale);
      expected.push_back(ref.kv_rows[static_cast<size_t>(t) * kRowDim + d]);
    }
  }
  const CacheLayout cache_layout{&written_tokens, &p};
  v = verify::merge(v, verify::compare("kv_cache", rows, expected, tolerance(p.kv_dtype, p.k_scale), cache_element_name,
                                       &cache_layout));

  size_t changed_slots = 0;
  std::string first;
  for (size_t s = 0; s < writer.size(); ++s) {
    if (writer[s] >= 0 || std::memcmp(kv_cache.data() + s * rb, p.kv_cache.data() + s * rb, rb) == 0) continue;
    if (changed_slots++ == 0) {
      size_t b = 0;
      while (kv_cache[s * rb + b] == p.kv_cache[s * rb + b]) ++b;
      first = fmt::format("slot {} (page {}, offset {}): byte {} is 0x{:02x}, was 0x{:02x}", s, s / p.page_size,
                          s % p.page_size, b, kv_cache[s * rb + b], p.kv_cache[s * rb + b]);
    }
  }
  if (changed_slots > 0)
    v = verify::merge(v, Verdict{false, v.max_abs_err, v.rel_l2_err,
                                 fmt::format("kv_cache: {} slot(s) that no token maps to were written (padded "
                                             "tokens and untouched slots must keep their bytes); first: {}",
                                             changed_slots, first)});
  return v;
}

}  // namespace ktune::rope
