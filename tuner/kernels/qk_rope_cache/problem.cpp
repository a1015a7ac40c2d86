#include "kernels/qk_rope_cache/problem.hpp"

#include <fmt/format.h>

#include "kernels/qk_rope_cache/reference.hpp"

namespace ktune::rope {
namespace {

const std::vector<std::string> kDtypeLabels = {"bf16", "fp8_e4m3fn", "fp8_e4m3fnuz"};

}  // namespace

const std::vector<FieldSpec>& key_fields() {
  static const std::vector<FieldSpec> fields = {
      {"heads", "query heads per token (H)", 1, 128},
      {"kv_dtype", "KV cache element type (fp8: value = code * k_scale)", 0, 2, kDtypeLabels},
      {"q_dtype", "decode query (q_out) element type (fp8: value = code * q_scale)", 0, 2, kDtypeLabels},
      {"rope",
       "full: rotate by the cos / sin tables; identity: NoPE (cos 1, sin 0) through a 1-row table "
       "with positions clamped into it",
       0,
       1,
       {"full", "identity"}},
      {"is_neox", "1: NeoX rope (halves i, i + 32); 0: GPT-J rope (interleaved pairs 2i, 2i + 1)", 0, 1},
      {"tokens", "tokens bucket (T, tokens per launch)", 1, 1 << 16},
  };
  return fields;
}

const std::vector<FieldSpec>& config_fields() {
  static const std::vector<FieldSpec> fields = {
      {"layout",
       "token: one CTA per token (all heads and the cache row); token_head: one CTA per (token, row)",
       0,
       1,
       {"token", "token_head"}},
      {"vec", "elements per vector access: 2, 4 or 8", 2, 8},
      {"tokens_per_cta", "tokens per CTA: 1, 2 or 4", 1, 4},
      {"threads", "threads per CTA: 64, 128, 256 or 512", 64, 512},
      {"clamp", "1: clamp positions into the cos / sin table (serves a 1-row identity table); 0: trust them", 0, 1},
      {"fused", "1: the fused kernel; 0: the unfused baseline (rope, cache write, concat, quantise kernels)", 0, 1},
  };
  return fields;
}

const std::vector<FieldSpec>& shape_fields() {
  static const std::vector<FieldSpec> fields = {
      {"tokens", "tokens T; 0: the key's tokens bucket", 0, 1 << 16},
      {"page_size", "KV cache page size in tokens", 1, 1 << 16},
      {"table_rows", "rows of the cos / sin tables of a full rope (an identity rope has 1)", 1, 1 << 22},
      {"padded_every", "every n-th token is padded (slot -1, no cache write); 0: none", 0, 1 << 16},
  };
  return fields;
}

Key key_of(const Params& p) {
  validate(p, key_fields(), "qk_rope_cache key");
  return Key{static_cast<int>(p.at("heads")),
             static_cast<num::KvDtype>(p.at("kv_dtype")),
             static_cast<num::KvDtype>(p.at("q_dtype")),
             static_cast<RopeMode>(p.at("rope")),
             p.at("is_neox") != 0,
             static_cast<int>(p.at("tokens"))};
}

Config config_of(const Params& p) {
  validate(p, config_fields(), "qk_rope_cache config");
  return Config{static_cast<Layout>(p.at("layout")),
                static_cast<int>(p.at("vec")),
                static_cast<int>(p.at("tokens_per_cta")),
                static_cast<int>(p.at("threads")),
                p.at("clamp") != 0,
                p.at("fused") != 0};
}

Shape shape_of(const Params& p) {
  validate(p, shape_fields(), "qk_rope_cache shape");
  return Shape{static_cast<int>(p.at("tokens")), static_cast<int>(p.at("page_size")),
               static_cast<int>(p.at("table_rows")), static_cast<int>(p.at("padded_every"))};
}

Params to_params(const Key& k) {
  return Params{{"heads", k.heads},
                {"kv_dtype", static_cast<int64_t>(k.kv_dtype)},
                {"q_dtype", static_cast<int64_t>(k.q_dtype)},
                {"rope", static_cast<int64_t>(k.rope)},
                {"is_neox", k.is_neox ? 1 : 0},
                {"tokens", k.tokens}};
}

Params to_params(const Config& c) {
  return Params{{"layout", static_cast<int64_t>(c.layout)},
                {"vec", c.vec},
                {"tokens_per_cta", c.tokens_per_cta},
                {"threads", c.threads},
                {"clamp", c.clamp ? 1 : 0},
                {"fused", c.fused ? 1 : 0}};
}

Params to_params(const Shape& s) {
  return Params{
      {"tokens", s.tokens}, {"page_size", s.page_size}, {"table_rows", s.table_rows}, {"padded_every", s.padded_every}};
}

std::vector<std::string> kernel_names(const Config& c, num::KvDtype kv_dtype, num::KvDtype q_dtype) {
  const int kv = static_cast<int>(kv_dtype), q = static_cast<int>(q_dtype), clamp = c.clamp ? 1 : 0;
  if (c.fused)
    // Template parameters: LAYOUT, VEC, TPC, THREADS, CLAMP, KV_DTYPE, Q_DTYPE.
    return {fmt::format("ktune::qk_rope_cache<{}, {}, {}, {}, {}, {}, {}>", static_cast<int>(c.layout), c.vec,
                        c.tokens_per_cta, c.threads, clamp, kv, q)};
  std::vector<std::string> names = {
      fmt::format("ktune::unfused_rope<{}, {}, {}>", c.vec, c.threads, clamp),
      fmt::format("ktune::unfused_cache<{}, {}, {}>", c.vec, c.threads, kv),
      fmt::format("ktune::unfused_concat<{}, {}>", c.vec, c.threads),
  };
  if (q_dtype != num::KvDtype::bf16)
    names.push_back(fmt::format("ktune::unfused_quantise<{}, {}, {}>", c.vec, c.threads, q));
  return names;
}

int items_per_cta(const Config& c, int heads) noexcept {
  const int chunks = kRowDim / c.vec;
  return c.layout == Layout::token ? c.tokens_per_cta * (heads + 1) * chunks : c.tokens_per_cta * chunks;
}

}  // namespace ktune::rope
