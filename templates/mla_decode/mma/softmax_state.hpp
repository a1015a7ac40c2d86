// The tile's softmax state (kMma, kWgmma, kWgmmaProducer, kWgmmaSs): its maxima and sums, and
// write_p, P = 2^(S - the running maxima) into sP.
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
    // The tile's softmax (softmax_scores.hpp, softmax_rescale.hpp): this thread's maxima over its
    // keys, its share of the row sums at the running maxima, whether one of its scores passed those
    // by more than kSlack.
    float tile_max[QMT][LR], tile_sum[QMT][LR];
    bool past = false;
#pragma unroll
    for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
      for (int i = 0; i < LR; ++i) tile_sum[qm][i] = 0.f;
    // P = 2^(S - the running maxima) into sP (two bf16 terms with P_TERMS, else fp16), the lane's
    // share of the row sums added to `sum`.
    auto write_p = [&](float(&sum)[QMT][LR]) {
#pragma unroll
      for (int qm = 0; qm < QMT; ++qm) {
        float base[LR];
#pragma unroll
        for (int i = 0; i < LR; ++i) base[i] = max_qk[qm][i] == neg_inf() ? 0.f : max_qk[qm][i];
#pragma unroll
        for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
          for (int e = 0; e < mc::kLaneAcc; ++e) {
            const int slot = mc::row_slot(e);
            const float p = fast_exp2(s[qm][kb].v[e] - base[slot]);
            sum[qm][slot] += p;
            const u32 at = PRows::offset((qk_m0 + qm) * 16 + mc::acc_row(e), (qk_key0 + kb * 16 + mc::acc_col(e)) * 2);
            if constexpr (P_TERMS) {
              const u32 hi = __float_as_uint(p) >> 16;
              *reinterpret_cast<u16*>(sP + at) = static_cast<u16>(hi);
              *reinterpret_cast<u16*>(sP_lo + at) = static_cast<u16>(float_to_bf16(p - __uint_as_float(hi << 16)));
            } else {
              *reinterpret_cast<u16*>(sP + at) = static_cast<u16>(float_to_f16(p));
            }
          }
      }
    };
