// O^T += V^T P^T on wgmma, V^T from registers (kWgmma, kWgmmaProducer; PTX ISA, wgmma.mma_async
// with A in registers), P^T from shared memory. With a producer, the slot is then free (`empty`).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
      const u8* const v = key_slot(0);
      wg::accumulate_transposed<KEYS, G.p_stride()>(
          acc[0],
          [&](int step, int m, u32(&a)[4]) {
            wg::load_transposed_f16<Tile, DECODED>(a, v, step * 16, pv_dim0 + 64 * m + 16 * (warp % 4));
          },
          sP);
      if constexpr (WS) ws::arrive(empty + t % STAGES);  // its last reader done: the slot is free
