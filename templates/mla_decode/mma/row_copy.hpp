#pragma once
// copy_row: the 16-byte asynchronous copies of one KV row into a ring slot, offsets as immediates
// (mla_decode_mma's slot copies, mma/slot_copies.hpp).
#include "common/async_copy.hpp"
#include "common/prelude.hpp"

namespace ktune {
namespace mla_detail {

// Copies chunks C .. N - 1 of a row whose chunks are SRC_STRIDE bytes apart in the cache and
// DST_STRIDE apart in shared memory, each with its offsets as immediates (a recursion, because an
// unrolled loop's index is not a template argument).
template <int C, int N, int SRC_STRIDE, int DST_STRIDE>
struct RowCopy {
  __device__ __forceinline__ static void run(u8* dst, const u8* src, bool valid) {
    async_copy::copy16<C * DST_STRIDE, C * SRC_STRIDE>(dst, src, valid);
    RowCopy<C + 1, N, SRC_STRIDE, DST_STRIDE>::run(dst, src, valid);
  }
};
template <int N, int SRC_STRIDE, int DST_STRIDE>
struct RowCopy<N, N, SRC_STRIDE, DST_STRIDE> {
  __device__ __forceinline__ static void run(u8*, const u8*, bool) {}
};

template <int C, int N, int SRC_STRIDE, int DST_STRIDE = SRC_STRIDE>
__device__ __forceinline__ void copy_row(u8* dst, const u8* src, bool valid) {
  RowCopy<C, N, SRC_STRIDE, DST_STRIDE>::run(dst, src, valid);
}

}  // namespace mla_detail
}  // namespace ktune
