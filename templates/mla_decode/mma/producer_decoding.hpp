#pragma once
// The producer warpgroup of MmaProducer::kDecoding (an fp8 cache on wgmma at 384 or 512 threads,
// MmaGeometry::decoded): wgmma reads B from shared memory only, so the producer decodes each slot's
// codes once for the CTA's 64 rows into an fp16 tile in the ring (decode_slot(u)). Its copies
// (issue_slot(u, rows), its page look-ups look_up(u) a slot ahead) fill CODE_SLOTS slots of codes of
// its own and run that far ahead of the decode, which waits for them and for the math warpgroups to
// release the ring slot (`empty`), and signals the tile on `full`. The last slots' copies are
// waited for, so none lands after the block leaves. (Unlike the other phases of mla_decode_mma, a
// function: as one, it compiles to the same machine code as inline,
// experiments/2026-12-07-mla-decode-phase-headers.)
#include "common/async_copy.hpp"
#include "common/producer.hpp"
#include "common/wgmma.hpp"

namespace ktune {
namespace mla_detail {

template <int STAGES, int CODE_SLOTS, class LookUp, class IssueSlot, class DecodeSlot>
__device__ __forceinline__ void produce_decoded(int num_slots, u64* full, u64* empty, LookUp& look_up,
                                                IssueSlot& issue_slot, DecodeSlot& decode_slot) {
  auto next = look_up(0);
#pragma unroll
  for (int u = 0; u < CODE_SLOTS; ++u) {
    if (u < num_slots) issue_slot(u, next);
    async_copy::commit();
    next = look_up(u + 1);
  }
  for (int u = 0; u < num_slots; ++u) {
    async_copy::wait<CODE_SLOTS - 1>();  // this thread's copies of slot u
    if (u >= STAGES) ws::wait(empty + u % STAGES, (u / STAGES - 1) & 1);
    decode_slot(u);
    wg::proxy_fence();  // the tile, for the tensor cores' reads
    ws::arrive(full + u % STAGES);
    if (u + CODE_SLOTS < num_slots) issue_slot(u + CODE_SLOTS, next);
    async_copy::commit();
    next = look_up(u + CODE_SLOTS + 1);
  }
}

}  // namespace mla_detail
}  // namespace ktune
