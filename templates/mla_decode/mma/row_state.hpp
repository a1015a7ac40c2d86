// Row state, for every variant: the key limit of each of this thread's rows, the running maxima
// and sums, the O accumulators and the rows they hold, and O's store through shared memory
// (stage_rows, store_rows: wgmma's O^T).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
  // S = Q K^T: this warp's m-tiles and key blocks, and the key limit of each of its lane rows.
  const bool qk_warp = warp < G.qk_warps();  // warp-uniform
  const int qk_key_warp = G.qk_key_warp_of(warp);
  const int qk_m0 = G.qk_m_tile_of(warp);  // first m-tile
  const int qk_key0 = qk_key_warp * QKB * 16;
  int row_limit[QMT][LR];
  float qk_scale[QMT][LR];  // mfma_native, fp8: score_scale over the row's query scale
#pragma unroll
  for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
    for (int i = 0; i < LR; ++i) {
      const int row = row0 + (qk_m0 + qm) * 16 + mc::lane_row(i);
      row_limit[qm][i] =
          row < rows_per_request ? min_of(visible_keys<CAUSAL, MASK_SHIFT>(row, kv_len, heads, block_len), k_end) : 0;
      if constexpr (NATIVE && FP8)
        qk_scale[qm][i] = score_scale * Native::row_unscale(reinterpret_cast<const u32*>(sReduce), row - row0);
    }
  // The O accumulators acc[mt][pb] and the rows they hold. mma.sync / MFMA: O = P V, each warp
  // all m-tiles mt and PVB blocks of 16 dims from pv_dim0; the thread's O rows are its lane rows
  // of each m-tile, slot mt * LR + i. wgmma_ss: the same with one m-tile, warp % 4. wgmma:
  // O^T = V^T P^T (accumulate_transposed), each warpgroup 256 dims from pv_dim0 in 4 products of
  // 64 dims x 64 rows, block pb holding dims 64 (pb / 4) + 16 (warp % 4) + acc_row(e) and rows
  // 16 (pb % 4) + acc_col(e): 16 rows a thread, slot 4 (pb % 4) + 2 (e / 4) + e % 2.
  constexpr int O_SLOTS = PV_RS ? 16 : PMT * LR;
  auto o_slot = [&](int mt, int pb, int e) {
    return PV_RS ? 4 * (pb % 4) + 2 * (e >> 2) + (e & 1) : mt * LR + mc::row_slot(e);
  };
  auto o_row = [&](int slot) {  // the slot's row within the CTA
    return PV_RS ? 16 * (slot / 4) + 8 * (slot / 2 % 2) + 2 * (lane % 4) + slot % 2
                 : (PV_SS ? warp % 4 : slot / LR) * 16 + mc::lane_row(slot % LR);
  };
  const int pv_dim0 = (WGMMA ? warp / 4 - (SOFTMAX_WG ? 1 : 0) : warp) * PVB * 16;
  // Running row maxima, kept by every thread for the rows it touches: its S rows (qk) and its O
  // rows. Both come from the same shared reductions, so they agree.
  float max_qk[QMT][LR], sum_qk[QMT][LR], max_o[O_SLOTS];
#pragma unroll
  for (int i = 0; i < LR; ++i)
#pragma unroll
    for (int qm = 0; qm < QMT; ++qm) max_qk[qm][i] = neg_inf(), sum_qk[qm][i] = 0.f;
#pragma unroll
  for (int slot = 0; slot < O_SLOTS; ++slot) max_o[slot] = neg_inf();
  mc::Acc16 acc[PMT][PVB];
#pragma unroll
  for (int mt = 0; mt < PMT; ++mt)
#pragma unroll
    for (int pb = 0; pb < PVB; ++pb) mc::zero(acc[mt][pb]);

  // wgmma (PV_RS): the rows go out through shared memory (q and the ring, free by then),
  // [row][kStageStride] fp32, then in 16-byte vectors, a loop that is not unrolled: written element
  // by element, the 128 accumulators' stores with their row checks and two destinations were most
  // of the kernel's code, fetched cold by every SM at the end of every CTA. (A stride of 516 words
  // puts the lanes of one store, 8 dims x rows 0, 2, 4, 6, on distinct banks.) stage_rows: this
  // thread's O rows, times inv; then, once all that hold O have staged theirs, store_rows by
  // `threads` of them, this one the `first`.
  constexpr int kStageStride = kValueDim + 4;
  static_assert(!PV_RS || ROWS * kStageStride * 4 <= G.p_offset(), "the staged rows fit in q and the ring");
  float* const sO = reinterpret_cast<float*>(smem_bytes);
  auto stage_rows = [&](const mc::Acc16* blocks, const float* inv) {
#pragma unroll
    for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
      for (int e = 0; e < mc::kLaneAcc; ++e) {
        const int slot = o_slot(0, pb, e);
        const int dim = pv_dim0 + 64 * (pb / 4) + 16 * (warp % 4) + mc::acc_row(e);
        sO[o_row(slot) * kStageStride + dim] = blocks[pb].v[e] * inv[slot];
      }
  };
  auto store_rows = [&](int first, int threads) {
    const int batch = static_cast<int>(gridDim.z);
    constexpr int kVecs = kValueDim / 8;  // 8 dims a vector
    const int live_rows = min_of(ROWS, rows_per_request - row0);
#pragma unroll 1
    for (int i = first; i < live_rows * kVecs; i += threads) {
      const int r = i / kVecs, d = i % kVecs * 8;
      const u32x4 lo = load16(sO + r * kStageStride + d), hi = load16(sO + r * kStageStride + d + 4);
      const i64 out_row = static_cast<i64>(b) * rows_per_request + row0 + r;
      if (num_splits == 1) {
        const float x[8] = {__uint_as_float(lo.x), __uint_as_float(lo.y), __uint_as_float(lo.z), __uint_as_float(lo.w),
                            __uint_as_float(hi.x), __uint_as_float(hi.y), __uint_as_float(hi.z), __uint_as_float(hi.w)};
        store16(o + out_row * kValueDim + d, pack_bf16x8(x));
      } else {
        float* const dst = part_o + (static_cast<i64>(split) * batch * rows_per_request + out_row) * kValueDim + d;
        store16(dst, lo);
        store16(dst + 4, hi);
      }
    }
  };

  // P against the rows' running maxima unless a score passes them by more than kSlack
  // (softmax_rescale.hpp).
  constexpr float kSlack = 8.f;
