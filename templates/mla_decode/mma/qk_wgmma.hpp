// S = Q K^T on wgmma (kWgmma, kWgmmaProducer, kWgmmaSs): the first warpgroup issues the product,
// queues the next copies while the tensor cores run, and waits for it (PTX ISA, wgmma.mma_async:
// the product runs asynchronously until wgmma.wait_group; common/wgmma.hpp).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
      if (qk_warp) {
        wg::start_product<KEYS, kHeadDim, ROWS, KEYS, DECODED>(s[0], sQ, key_slot(0));
        queue_copies();
        wg::finish_product(s[0]);
      } else {
        queue_copies();
      }
