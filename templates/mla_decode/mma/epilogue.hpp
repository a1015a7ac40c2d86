// Epilogue (kMma, kWgmma, kWgmmaProducer, kWgmmaSs): the row sums across key warps, lse, and O
// normalised and stored.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
  // Row sums: lanes, then key warps, through shared memory.
  math_sync();  // every warp is done with sReduce's maxima
  if (qk_warp) {
#pragma unroll
    for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
      for (int i = 0; i < LR; ++i) {
        const float sum = group_sum<mc::kRowLanes>(sum_qk[qm][i]);
        if (lane % mc::kRowLanes == 0) sReduce[qk_key_warp * ROWS + (qk_m0 + qm) * 16 + mc::lane_row(i)] = sum;
      }
  }
  math_sync();

  // Epilogue: normalise; a row that saw no key (possible within a split) gets o = 0, lse = -inf.
  const int batch = static_cast<int>(gridDim.z);
  float inv[O_SLOTS];
#pragma unroll
  for (int slot = 0; slot < O_SLOTS; ++slot) {
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < QKW; ++w) sum += sReduce[w * ROWS + o_row(slot)];
    inv[slot] = sum > 0.f ? kv_scale * kv_unit / sum : 0.f;
    // One thread per row writes its lse: the first column group's lanes of warp 0 (wgmma_ss: of
    // warps 0 to 3, one m-tile each; wgmma: warp 0's lanes of the first row group).
    const int row = row0 + o_row(slot);
    const bool lse_thread = PV_RS ? warp == 0 && lane < 4 : warp < (PV_SS ? 4 : 1) && lane % mc::kRowLanes == 0;
    if (lse_thread && row < rows_per_request) {
      const float row_lse = sum > 0.f ? (max_o[slot] + log2f(sum)) * kLn2 : neg_inf();
      const i64 out_row = static_cast<i64>(b) * rows_per_request + row;
      if (num_splits == 1) {
        if (lse != nullptr) lse[out_row] = row_lse;
      } else {
        part_lse[static_cast<i64>(split) * batch * rows_per_request + out_row] = row_lse;
      }
    }
  }
  if constexpr (PV_RS) {
    stage_rows(acc[0], inv);
    math_sync();
    store_rows(tid, MATH_THREADS);
  } else {
#pragma unroll
    for (int mt = 0; mt < PMT; ++mt)
#pragma unroll
      for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
        for (int e = 0; e < mc::kLaneAcc; ++e) {
          const int slot = o_slot(mt, pb, e);
          const int row = row0 + o_row(slot);
          if (row >= rows_per_request) continue;
          const i64 out_row = static_cast<i64>(b) * rows_per_request + row;
          // The fp8 path's P V step permutes the dims of two blocks (mc::pv8_dim).
          const int dim = FP8 ? mc::pv8_dim(pv_dim0 + pb / 2 * 32, pb % 2, e) : pv_dim0 + pb * 16 + mc::acc_col(e);
          const float x = acc[mt][pb].v[e] * inv[slot];
          if (num_splits == 1)
            o[out_row * kValueDim + dim] = static_cast<u16>(float_to_bf16(x));
          else
            part_o[(static_cast<i64>(split) * batch * rows_per_request + out_row) * kValueDim + dim] = x;
        }
  }
