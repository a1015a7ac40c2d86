// The copies of the KV tiles into the ring, for every variant: look_up (a slot's page look-ups),
// issue_slot (its 16-byte asynchronous copies) and decode_slot (MmaProducer::kDecoding: fp8 codes
// to an fp16 tile).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
  // Queues the copies of the keys of slot u (the CTA's keys u * SLOT_KEYS ..) into ring slot
  // u % STAGES. A group of threads per key row, so that a thread looks the page up once per key;
  // keys at or past k_end become zeros (their pages may not exist, and P V must not meet stale
  // non-finite values). The page lookups of a slot are made one tile ahead of its copies
  // (SlotRows, CacheKey): a warp issues in order, and a copy waiting on a block-table load would hold the
  // warp's matrix work behind a global-memory round trip.
  const i32* const pages = block_table + static_cast<i64>(b) * max_pages;
  constexpr int STAGE_BYTES = G.stage_bytes();
  constexpr int RAW_ROW_BYTES = G.raw_row_bytes();
  constexpr int TPK = G.copy_threads_per_key();
  constexpr int COPY_PASSES = G.copy_passes();
  constexpr int KEYS_PER_PASS = G.copy_keys_per_pass();
  constexpr int CHUNKS_PER_THREAD = G.chunks_per_row() / TPK;
  struct SlotRows {
    CacheKey key[COPY_PASSES];  // this thread's key in each pass
  };
  auto look_up = [&](int u) {
    SlotRows r;
    const int slot_start = k_begin + u * SLOT_KEYS;
#pragma unroll
    for (int pass = 0; pass < COPY_PASSES; ++pass) {
      const int key = pass * KEYS_PER_PASS + ctid / TPK;
      const int j = slot_start + key;
      const bool valid = u < num_slots && key < SLOT_KEYS && j < k_end;
      r.key[pass] = look_up_key(pages, j, page_size, valid);
    }
    return r;
  };
  constexpr int CODE_SLOTS = DECODED ? G.code_slots() : 1;
  auto issue_slot = [&](int u, const SlotRows& rows) {
    u8* const slot = DECODED ? sCodes + (u % CODE_SLOTS) * G.code_stage_bytes() : sRing + (u % STAGES) * STAGE_BYTES;
#pragma unroll
    for (int pass = 0; pass < COPY_PASSES; ++pass) {
      const int key = pass * KEYS_PER_PASS + ctid / TPK;
      if (key < SLOT_KEYS) {
        const bool valid = rows.key[pass].valid();
        const u8* const row = kv_cache + rows.key[pass].row(page_size) * RAW_ROW_BYTES;
        if constexpr (!FP8) {
          // Chunk tid % TPK + c * TPK sits c * TPK * 16 bytes after chunk tid % TPK in the cache
          // row, and in the slot either as far (a swizzled row: TPK * 16 = 128 bytes is a whole
          // swizzle group, which the XOR of bits 4..6 leaves alone) or c panels further on.
          constexpr int kSlotStride = WGMMA ? KEYS * 128 : TPK * 16;
          copy_row<0, CHUNKS_PER_THREAD, TPK * 16, kSlotStride>(slot + Tile::offset(key, (ctid % TPK) * 16),
                                                                row + (ctid % TPK) * 16, valid);
        } else {
          // 36 chunks, 4 threads: thread c takes chunks c + 8 m (5 of them) and c + 4 + 8 m (4):
          // chunks 8 apart share their XOR (bits 0..2), so each run is one stride in both rows.
          static_assert(TPK == 4 && CHUNKS_PER_THREAD == 9, "an fp8 row is 4 runs of 9 chunks");
          const int c = ctid % TPK;
          const int x = Codes::chunk_xor(key);
          u8* const dst = slot + key * G.code_row_bytes();
          copy_row<0, 5, 128>(dst + ((c ^ x) << 4), row + c * 16, valid);
          copy_row<0, 4, 128>(dst + (((c + 4) ^ x) << 4), row + (c + 4) * 16, valid);
        }
      }
    }
  };

  // DECODED: this thread's chunks of slot u's codes, the ones its own copies brought (so that it
  // waits for no other thread's), to fp16 in ring slot u % STAGES. A chunk is 16 codes, 16 dims of
  // a key: two 16-byte chunks of the tile, in panel rows of 128 bytes whose swizzle puts the 8 key
  // rows x 4 chunks of one store on distinct banks.
  auto decode_slot = [&](int u) {
    if constexpr (DECODED) {
      const u8* const codes = sCodes + (u % CODE_SLOTS) * G.code_stage_bytes();
      u8* const tile = sRing + (u % STAGES) * STAGE_BYTES;
#pragma unroll
      for (int pass = 0; pass < COPY_PASSES; ++pass) {
        const int key = pass * KEYS_PER_PASS + ctid / TPK;
        if (key < SLOT_KEYS) {
          const int x = Codes::chunk_xor(key);
          // Rolled: unrolled, the chunks' loads in flight spilled 4 bytes at the producer's 56
          // registers (ptxas 13.0), 32 to 64 at 40.
#pragma unroll 1
          for (int m = 0; m < CHUNKS_PER_THREAD; ++m) {
            const int chunk = ctid % TPK + (m < 5 ? 8 * m : 4 + 8 * (m - 5));  // issue_slot's order
            const u32x4 w = load16(codes + key * G.code_row_bytes() + ((chunk ^ x) << 4));
            const u32x2 d0 = Decode::quad(w.x), d1 = Decode::quad(w.y), d2 = Decode::quad(w.z),
                        d3 = Decode::quad(w.w);
            store16(tile + Tile::offset(key, chunk * 32), u32x4{d0.x, d0.y, d1.x, d1.y});
            store16(tile + Tile::offset(key, chunk * 32 + 16), u32x4{d2.x, d2.y, d3.x, d3.y});
          }
        }
      }
    }
  };
