// O += P V on mma.sync / MFMA (kMma): this warp's value dims, all live m-tiles.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
#pragma unroll
      for (int kb = 0; kb < KEYS / 16; ++kb) {
        const u8* const slot = key_slot(kb * 16);
        const int key = kb * 16 % SLOT_KEYS;
        mc::PvA p[MT];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          if (mt < live_m_tiles) p[mt] = mc::load_pv_a<PRows>(sP, mt * 16, kb * 16);
        if constexpr (P_TERMS) {
          mc::PvA p_lo[MT];
#pragma unroll
          for (int mt = 0; mt < MT; ++mt)
            if (mt < live_m_tiles) p_lo[mt] = mc::load_pv_a<PRows>(sP_lo, mt * 16, kb * 16);
#pragma unroll
          for (int pb = 0; pb < PVB; ++pb) {
            const mc::PvB v = mc::load_pv_b<Tile>(slot, key, pv_dim0 + pb * 16);
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              if (mt < live_m_tiles) mc::mma_pv(acc[mt][pb], p[mt], v), mc::mma_pv(acc[mt][pb], p_lo[mt], v);
          }
        } else {
#pragma unroll
          for (int pb = 0; pb < PVB; pb += 2) {
            const mc::PvB16 v = mc::decode<Decode>(mc::load_pv_b8<Codes>(slot, key, pv_dim0 + pb * 16));
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
              if (mt < live_m_tiles) mc::mma_pv16(acc[mt][pb], acc[mt][pb + 1], p[mt], v);
          }
        }
      }
