// The tile's softmax across warps (kMma, kWgmma, kWgmmaProducer, kWgmmaSs): where a score passed
// its row's running maximum by more than kSlack, the new maxima, P again, O and the sums rescaled.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
    // P against the rows' running maxima as they stand: the softmax allows any base common to a
    // row, and this one needs no exchange between warps while no score passes it by more than
    // kSlack (P <= 2^kSlack, as exact in its format as any P; sums and O in fp32). One barrier
    // publishes P and tells whether a thread saw a score past that; only then (the first tile of
    // a row, rarely a later one) the warps exchange the tile's maxima, rescale O and the sums and
    // write P again.
    if constexpr (WGMMA) wg::proxy_fence();  // P, for the tensor cores' reads
    if (math_sync_or(past)) {
      if (qk_warp) {
#pragma unroll
        for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
          for (int i = 0; i < LR; ++i) {
            const float m = group_max<mc::kRowLanes>(tile_max[qm][i]);
            if (lane % mc::kRowLanes == 0) sReduce[qk_key_warp * ROWS + (qk_m0 + qm) * 16 + mc::lane_row(i)] = m;
          }
      }
      math_sync();
      if (qk_warp) {
#pragma unroll
        for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
          for (int i = 0; i < LR; ++i) {
            const int r = (qk_m0 + qm) * 16 + mc::lane_row(i);
            float m = neg_inf();
#pragma unroll
            for (int w = 0; w < QKW; ++w) m = fmaxf(m, sReduce[w * ROWS + r]);
            const float new_max = fmaxf(max_qk[qm][i], m);
            // A row that has seen no key yet keeps max -inf; subtracting 0 keeps its P at 0.
            sum_qk[qm][i] *= fast_exp2(max_qk[qm][i] - (new_max == neg_inf() ? 0.f : new_max));
            max_qk[qm][i] = new_max;
          }
        write_p(sum_qk);
      }
      // The same new maxima for this thread's O rows: rescale the accumulators.
      float alpha[O_SLOTS];
#pragma unroll
      for (int slot = 0; slot < O_SLOTS; ++slot) {
        float m = neg_inf();
#pragma unroll
        for (int w = 0; w < QKW; ++w) m = fmaxf(m, sReduce[w * ROWS + o_row(slot)]);
        const float new_max = fmaxf(max_o[slot], m);
        alpha[slot] = fast_exp2(max_o[slot] - (new_max == neg_inf() ? 0.f : new_max));
        max_o[slot] = new_max;
      }
#pragma unroll
      for (int mt = 0; mt < PMT; ++mt)
#pragma unroll
        for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) acc[mt][pb].v[e] *= alpha[o_slot(mt, pb, e)];
      if constexpr (WGMMA) wg::proxy_fence();
      math_sync();  // P complete
    } else if (qk_warp) {
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
        for (int i = 0; i < LR; ++i) sum_qk[qm][i] += tile_sum[qm][i];
    }
