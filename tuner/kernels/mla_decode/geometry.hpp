#pragma once
// Host view of the kernel's tile geometry. The definition lives with the kernel template
// (templates/mla_decode/geometry.hpp) and is included from there, so that host and device share it.
#include "kernels/mla_decode/problem.hpp"
#include "templates/mla_decode/geometry.hpp"

namespace ktune::mla {

constexpr mla_tile::Geometry geometry(const Config& c, num::KvDtype kv_dtype) noexcept {
  return {c.rows, c.keys, c.threads, c.stages, static_cast<int>(kv_dtype)};
}

}  // namespace ktune::mla
