// O += P V on wgmma with both operands in shared memory (kWgmmaSs): P's two terms and V, N-major
// (PTX ISA, wgmma.mma_async with descriptors for A and B).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
      const u8* const terms[2] = {sP, sP_lo};
      wg::start_accumulation<KEYS, G.p_stride(), Tile::kPanelBytes>(acc[0], terms,
                                                                     key_slot(0) + Tile::offset(0, pv_dim0 * 2));
      wg::finish_product(acc[0]);
