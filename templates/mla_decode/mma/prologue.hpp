// Prologue, for every variant: the q tile, the first slots (without a producer), and with an fp8
// cache the queries rewritten in fp16.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
  // Prologue: the q tile (zeros for padding rows) with slot 0 in the first group, then the other
  // slots that the ring holds ahead, one group each (empty groups keep the count uniform): slots
  // 0 .. STAGES - SLOTS - 1, all but one tile's worth. (With a producer: the q tile alone.)
  const u16* const q_request = q + static_cast<i64>(b) * rows_per_request * kHeadDim;
#pragma unroll
  for (int v = 0; v < G.q_chunks_per_thread(); ++v) {
    const int idx = tid + v * MATH_THREADS;
    if (idx < ROWS * ROW_CHUNKS) {
      const int r = idx / ROW_CHUNKS;
      const int chunk = idx % ROW_CHUNKS;
      const bool valid = row0 + r < rows_per_request;
      const u16* const src = valid ? q_request + static_cast<i64>(row0 + r) * kHeadDim + chunk * kVec : q;
      async_copy::copy16<0>(sQ + QTile::offset(r, chunk * 16), src, valid);
    }
  }
  if constexpr (WS) {
    async_copy::commit();
    async_copy::wait<0>();  // the q tile: the first tile's barrier publishes it
  } else {
    if (num_slots > 0) issue_slot(0, look_up(0));
    async_copy::commit();
#pragma unroll
    for (int u = 1; u < STAGES - SLOTS; ++u) {
      if (u < num_slots) issue_slot(u, look_up(u));
      async_copy::commit();
    }
  }
  // Scores go to the exp2 domain in one multiply; kv_scale is applied here and to the output. The
  // fp8 path computes with fp16 queries, rewritten in place once the q tile landed (the tile
  // loop's first barrier publishes them). fp8 codes reach the matrix cores scaled by 1 / kv_unit
  // (Fp8ToF16).
  constexpr float kv_unit = FP8 ? Decode::kScale : 1.f;
  constexpr float k_unit = NATIVE ? 1.f : kv_unit;  // mfma_native: the fp8 MFMA reads the codes as they are
  const float score_scale = softmax_scale * kv_scale * k_unit * kLog2e;
  if constexpr (DECODED) {
    // As the decoded tile's dims lie: each 16-byte chunk in place (the chunks came from several
    // threads' copies, all waited for above).
    math_sync();
    for (int i = tid; i < ROWS * ROW_CHUNKS; i += MATH_THREADS) {
      u32x4* const chunk = reinterpret_cast<u32x4*>(sQ + QTile::offset(i / ROW_CHUNKS, i % ROW_CHUNKS * 16));
      const u32x4 w = *chunk;
      *chunk = u32x4{bf16x2_to_f16x2(w.x), bf16x2_to_f16x2(w.y), bf16x2_to_f16x2(w.z), bf16x2_to_f16x2(w.w)};
    }
  } else if constexpr (NATIVE && FP8) {
    // mfma_native: the queries as two fp8 terms, each row with its scale (Native::convert_queries),
    // whose largest magnitudes go to sReduce, unused until the tile loop.
    u32* const row_bits = reinterpret_cast<u32*>(sReduce);
    for (int r = tid; r < ROWS; r += MATH_THREADS) row_bits[r] = 0u;
    async_copy::wait<STAGES - SLOTS - 1>();  // the first group
    math_sync();
    Native::template convert_queries<QTile, ROWS, MATH_THREADS>(sQ, row_bits, tid, math_sync);
  } else if constexpr (FP8) {
    // In steps of 32 dims, in the order the decoded keys meet them (mc::store_q16); a step's
    // chunks came from several threads' copies.
    async_copy::wait<STAGES - SLOTS - 1>();  // the first group
    math_sync();
    constexpr int Q_STEPS = kHeadDim / 32;
    for (int i = tid; i < ROWS * Q_STEPS; i += MATH_THREADS) {
      const int r = i / Q_STEPS, d0 = i % Q_STEPS * 32;
      float f[32];
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        float x[8];
        bf16x8_to_float(load16(sQ + QTile::offset(r, (d0 + 8 * c) * 2)), x);
#pragma unroll
        for (int e = 0; e < 8; ++e) f[8 * c + e] = x[e];
      }
      mc::store_q16<QTile>(sQ, r, d0, f);
    }
  }
