// Tile t's start (kMma, kWgmma, kWgmmaProducer, kWgmmaSs): wait for its slots, where its keys lie,
// S's accumulators, and queue_copies (the copies of the slots that tile t - 1 freed).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
    // Tile t (and the q tile) landed, for this thread's copies: the slots of the next tile and
    // those queued past it, STAGES - 2 SLOTS groups, may still be in flight. (With a producer:
    // tile t's slot is full.)
    if constexpr (WS)
      ws::wait(full + t % STAGES, (t / STAGES) & 1);
    else
      async_copy::wait<STAGES - 2 * SLOTS>();
    if constexpr (WGMMA) wg::proxy_fence();  // ... also for the tensor cores' reads
    math_sync();                             // ... and for everyone's; the slots of tile t - 1 are free
    // Where key k of tile t lies: row k % SLOT_KEYS of the ring slot that key_slot(k) returns.
    auto key_slot = [&](int k) -> u8* { return sRing + ((t * SLOTS + k / SLOT_KEYS) % STAGES) * STAGE_BYTES; };
    const int tile_start = k_begin + t * KEYS;
    // P's second term (P_TERMS): its own matrix, or with wgmma_ss the tile's rope panel, free once
    // Q K^T read it.
    u8* const sP_lo = PV_SS ? key_slot(0) + Tile::offset(0, kValueDim * 2) : sP + G.p_term_bytes();

    // S = Q K^T over the 576 dims, 32 at a time, step i into chain i % QKC (independent
    // accumulators, summed at the end: see MmaGeometry::qk_chains).
    mc::Acc16 chains[QKC][QMT][QKB];
#pragma unroll
    for (int c = 0; c < QKC; ++c)
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb) mc::zero(chains[c][qm][kb]);
    mc::Acc16(&s)[QMT][QKB] = chains[0];
    // wgmma: the first warpgroup over the tile's keys, all 64 rows (QMT = 1: warp w has m-tile w).
    // The product runs on the tensor cores while the warps queue the next tile's copies, whose
    // issue can stall a warp for as long as the memory system takes to accept them.
    static_assert(!WGMMA || (QMT == 1 && QKC == 1 && QKB * 16 == KEYS && ROWS == kWgmmaRows), "wgmma: 64 rows");
    static_assert(!WGMMA || SLOTS == 1, "wgmma: a tile is one slot");
    auto queue_copies = [&]() -> void {
      if constexpr (!WS) {  // (else the producer's)
#pragma unroll
        for (int j = 0; j < SLOTS; ++j) {
          const int u = t * SLOTS + STAGES - SLOTS + j;  // into a slot of tile t - 1
          if (u < num_slots) {
            issue_slot(u, ahead[j]);
            ahead[j] = look_up(u + SLOTS);
          }
          async_copy::commit();
        }
      }
    };
