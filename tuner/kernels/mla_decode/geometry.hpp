#pragma once
// Host view of the kernels' tile geometry. The definitions live with the kernel templates
// (templates/mla_decode/geometry.hpp) and are included from there, so that host and device share them.
#include "kernels/mla_decode/problem.hpp"
#include "templates/mla_decode/geometry.hpp"

namespace ktune::mla {

constexpr mla_tile::Geometry geometry(const Config& c, num::KvDtype kv_dtype) noexcept {
  return {c.rows, c.keys, c.threads, c.stages, static_cast<int>(kv_dtype)};
}

// The matrix-core kernel's geometry (math mma, wgmma or wgmma_ss) for a target warp size (32 NVIDIA,
// 64 AMD CDNA).
constexpr mla_tile::MmaGeometry mma_geometry(const Config& c, num::KvDtype kv_dtype, int warp) noexcept {
  return {c.rows,
          c.keys,
          c.threads,
          c.stages,
          static_cast<int>(kv_dtype),
          warp,
          is_wgmma(c.math) ? 1 : 0,
          c.math == kMathWgmmaSs ? 1 : 0};
}

// The thread count of math=wgmma and math=wgmma_t with a producer warpgroup (MmaGeometry::producer,
// TransposedGeometry::producer).
constexpr int kWgmmaProducerThreads = mla_tile::kWgmmaThreads + mla_tile::kWarpgroupThreads;
// math=wgmma's thread count with a softmax warpgroup besides (MmaGeometry::softmax_warpgroup).
constexpr int kWgmmaSoftmaxThreads = kWgmmaProducerThreads + mla_tile::kWarpgroupThreads;

// The transposed kernel's geometry (math wgmma_t).
constexpr mla_tile::TransposedGeometry transposed_geometry(const Config& c, num::KvDtype kv_dtype) noexcept {
  return {c.rows, c.keys, c.threads, c.stages, static_cast<int>(kv_dtype)};
}

// Dynamic shared memory of the config's main kernel (independent of the warp size).
constexpr int shared_bytes(const Config& c, num::KvDtype kv_dtype) noexcept {
  switch (c.math) {
    case kMathSimt: return geometry(c, kv_dtype).shared_bytes();
    case kMathWgmmaT: return transposed_geometry(c, kv_dtype).shared_bytes();
    default: return mma_geometry(c, kv_dtype, 32).shared_bytes();
  }
}

// Whether the config's main kernel tiles (each kernel static_asserts the same) with a warp of
// `warp` lanes.
constexpr bool tiles(const Config& c, num::KvDtype kv_dtype, int warp) noexcept {
  switch (c.math) {
    case kMathSimt: return geometry(c, kv_dtype).valid();
    case kMathWgmmaT: return warp == 32 && transposed_geometry(c, kv_dtype).valid();
    default: return mma_geometry(c, kv_dtype, warp).valid();
  }
}

}  // namespace ktune::mla
