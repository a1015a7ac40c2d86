// MmaVariant::kWgmmaSoftmax (wgmma at 512 threads) after its setup: a softmax warpgroup and two
// P V warpgroups, each with its tile loop and its epilogue.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
  // The softmax warpgroup (SOFTMAX_WG, warps 0 to 3) computes S = Q K^T and P of each tile as soon
  // as its slot is full, up to the whole ring ahead of the P V warpgroups (warps 4 to 11, value
  // dims 0 .. 255 and 256 .. 511), and hands the tile over in its own slot: P (fp16, as sP's
  // KMajorRows) in the rope panel, which only Q K^T reads, and the rows' rescale factors in the
  // slot's record, both published by the slot's mbarrier `ready`. Only the P V warpgroups release a
  // slot (empty), so its P and record are written again only after both have read them. The
  // running maxima and sums are the softmax warpgroup's alone, and all of a row's scores lie in
  // the 4 lanes of one warp: a row's maximum moves on its own, after a quad's shuffles, where the
  // other paths exchange the maxima between warps and move all rows at once.
    static_assert(ROWS * G.p_stride() == Tile::kPanelBytes, "P fills the tile's rope panel");
    constexpr int kFlagsByte = kWgmmaRows * 4;  // the record's per-warp flags, after the factors
    auto rope_panel = [&](int t) -> u8* {
      return sRing + t % STAGES * STAGE_BYTES + Tile::offset(0, kValueDim * 2);
    };
    wg::proxy_fence();          // this thread's part of the q tile, for the tensor cores' reads
    wg::sync<MATH_THREADS>(2);  // ... and everyone's
    if (warp < 4) {  // the softmax warpgroup (warpgroup-uniform)
      ws::shrink_registers<G.softmax_registers()>();
      for (int t = 0; t < num_tiles; ++t) {
        ws::wait(full + t % STAGES, (t / STAGES) & 1);
        wg::proxy_fence();  // the slot's rows, for the tensor cores' reads
        mc::Acc16 s[QKB];
        wg::start_product<KEYS, kHeadDim, ROWS, KEYS, DECODED>(s, sQ, sRing + t % STAGES * STAGE_BYTES);
        wg::finish_product(s);
        // Every warp's share of the product done before any overwrites the rope panel with P: a
        // warp's wait covers its own rows, and PTX does not say that all warps' reads of the
        // shared K operand are over by then.
        wg::sync<kWarpgroupThreads>(4);
        // Mask and scale; per row the tile's maximum (a quad's), and where it passes the running
        // maximum by more than kSlack, the row moves to it: its sum and (through the record) O
        // are rescaled by alpha, 0 for a row that had seen no key (its sum and O are 0).
        const int tile_start = k_begin + t * KEYS;
        float* const alpha_out = reinterpret_cast<float*>(sRecord + t % STAGES * G.record_bytes());
        float tile_max[LR];
#pragma unroll
        for (int i = 0; i < LR; ++i) tile_max[i] = neg_inf();
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) {
            const int slot = mc::row_slot(e);
            const int key = tile_start + kb * 16 + mc::acc_col(e);
            const float x = key < row_limit[0][slot] ? s[kb].v[e] * score_scale : neg_inf();
            s[kb].v[e] = x;
            tile_max[slot] = fmaxf(tile_max[slot], x);
          }
        bool moved = false;
        float base[LR];
#pragma unroll
        for (int i = 0; i < LR; ++i) {
          const float m = group_max<mc::kRowLanes>(tile_max[i]);
          const bool move = m > max_qk[0][i] + kSlack;
          const float alpha = move ? fast_exp2(max_qk[0][i] - m) : 1.f;
          if (move) max_qk[0][i] = m, sum_qk[0][i] *= alpha;
          moved |= move;
          if (lane % mc::kRowLanes == 0) alpha_out[warp * 16 + mc::lane_row(i)] = alpha;
          // A row that has seen no key yet keeps max -inf; subtracting 0 keeps its P at 0.
          base[i] = max_qk[0][i] == neg_inf() ? 0.f : max_qk[0][i];
        }
        // Elements e and e + 1 of a block are adjacent keys of one row: one 4-byte store (the
        // swizzle moves 16-byte chunks).
        u8* const p = rope_panel(t);
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; e += 2) {
            const int slot = mc::row_slot(e);
            const float x0 = fast_exp2(s[kb].v[e] - base[slot]), x1 = fast_exp2(s[kb].v[e + 1] - base[slot]);
            sum_qk[0][slot] += x0 + x1;
            const u32 at = PRows::offset(warp * 16 + mc::acc_row(e), (kb * 16 + mc::acc_col(e)) * 2);
            *reinterpret_cast<u32*>(p + at) = float_to_f16(x0) | float_to_f16(x1) << 16;
          }
        const bool warp_moved = wg::warp_any(moved);
        if (lane == 0) sRecord[t % STAGES * G.record_bytes() + kFlagsByte + warp] = warp_moved;
        wg::proxy_fence();  // P, for the tensor cores' reads
        ws::arrive(ready + t % STAGES);
      }
      // Epilogue: the rows' sums (a quad's), for the P V warpgroups' normalisation, and lse (a
      // row that saw no key: -inf).
      const int batch = static_cast<int>(gridDim.z);
#pragma unroll
      for (int i = 0; i < LR; ++i) {
        const float sum = group_sum<mc::kRowLanes>(sum_qk[0][i]);
        const int r = warp * 16 + mc::lane_row(i);
        if (lane % mc::kRowLanes == 0) {
          sReduce[r] = sum;
          if (row0 + r < rows_per_request) {
            const float row_lse = sum > 0.f ? (max_qk[0][i] + log2f(sum)) * kLn2 : neg_inf();
            const i64 out_row = static_cast<i64>(b) * rows_per_request + row0 + r;
            if (num_splits == 1) {
              if (lse != nullptr) lse[out_row] = row_lse;
            } else {
              part_lse[static_cast<i64>(split) * batch * rows_per_request + out_row] = row_lse;
            }
          }
        }
      }
      wg::sync<MATH_THREADS>(2);  // the sums, for the P V warpgroups
    } else {  // a P V warpgroup
      ws::grow_registers<G.value_registers()>();
      mc::Acc16 pv_acc[PVB];  // O^T over this warpgroup's dims, as acc[0] of the other paths
#pragma unroll
      for (int pb = 0; pb < PVB; ++pb) mc::zero(pv_acc[pb]);
      for (int t = 0; t < num_tiles; ++t) {
        // The tile landed (the softmax warpgroup waited for it), and its P and record are written.
        ws::wait(ready + t % STAGES, (t / STAGES) & 1);
        const u8* const v = sRing + t % STAGES * STAGE_BYTES;
        const u8* const record = sRecord + t % STAGES * G.record_bytes();
        // Rows that moved their maximum: O's rescale factors (1 for the other rows). The same word
        // for all threads: a uniform branch.
        if (*reinterpret_cast<const u32*>(record + kFlagsByte) != 0) {
          const float* const alpha = reinterpret_cast<const float*>(record);
#pragma unroll
          for (int pb = 0; pb < PVB; ++pb)
#pragma unroll
            for (int e = 0; e < mc::kLaneAcc; ++e) pv_acc[pb].v[e] *= alpha[o_row(o_slot(0, pb, e))];
        }
        wg::accumulate_transposed<KEYS, G.p_stride()>(
            pv_acc,
            [&](int step, int m, u32(&a)[4]) {
              wg::load_transposed_f16<Tile, DECODED>(a, v, step * 16, pv_dim0 + 64 * m + 16 * (warp % 4));
            },
            rope_panel(t));
        ws::arrive(empty + t % STAGES);  // V, P and the record read: the slot is free
      }
      // Epilogue: normalise (a row that saw no key: o = 0) and store through shared memory. Past
      // the barrier every math thread is done with every tile, and the producer's copies all
      // landed (the softmax warpgroup waited for each), so the q tile and the ring take the rows.
      wg::sync<MATH_THREADS>(2);
      float inv[O_SLOTS];
#pragma unroll
      for (int slot = 0; slot < O_SLOTS; ++slot) {
        const float sum = sReduce[o_row(slot)];
        inv[slot] = sum > 0.f ? kv_scale * kv_unit / sum : 0.f;
      }
      stage_rows(pv_acc, inv);
      wg::sync<PV_THREADS>(3);
      store_rows(tid - kWarpgroupThreads, PV_THREADS);
    }
