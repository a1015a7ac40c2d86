// The tile's scores (kMma, kWgmma, kWgmmaProducer, kWgmmaSs): masked and scaled, this thread's
// maxima, and P at the running maxima.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
      // Mask and scale; this thread's maxima over its keys, and whether a score passes its row's
      // running maximum by more than kSlack.
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm) {
#pragma unroll
        for (int i = 0; i < LR; ++i) tile_max[qm][i] = neg_inf();
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) {
            const int slot = mc::row_slot(e);
            const int key = tile_start + qk_key0 + kb * 16 + mc::acc_col(e);
            const float x =
                key < row_limit[qm][slot] ? s[qm][kb].v[e] * (NATIVE && FP8 ? qk_scale[qm][slot] : score_scale)
                                          : neg_inf();
            s[qm][kb].v[e] = x;
            tile_max[qm][slot] = fmaxf(tile_max[qm][slot], x);
          }
#pragma unroll
        for (int i = 0; i < LR; ++i) past |= tile_max[qm][i] > max_qk[qm][i] + kSlack;
      }
      write_p(tile_sum);
