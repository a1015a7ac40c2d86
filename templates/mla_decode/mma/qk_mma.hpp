// S = Q K^T on mma.sync / MFMA (kMma): this warp's m-tiles and key blocks over the 576 dims
// (PTX ISA, mma.sync.aligned.m16n8k16; CDNA ISA, v_mfma_f32_16x16x16: common/matrix_core.hpp).
// A phase of mla_decode_mma's body, included at its place in mla_decode_mma.hip (which says why);
// it reads the names that the phases before it declare.
        // Bodies of QK_UNROLL steps with compile-time dims, so that the operands' addresses are
        // immediates (mc layouts); a body's first dim g is whole 128-byte groups of the 16-bit
        // tiles, which their swizzle leaves alone, so it moves the bases (fp8 codes: not whole
        // groups, so it stays in the dim).
        constexpr int QK_STEPS = kHeadDim / (32 * QKC);
        constexpr int QK_UNROLL = G.qk_unrolled() ? QK_STEPS : 2;  // see MmaGeometry::qk_unrolled
        static_assert(QK_STEPS % QK_UNROLL == 0, "whole bodies");
        for (int g = 0; g < kHeadDim; g += QK_UNROLL * 32 * QKC) {
#pragma unroll
          for (int i = 0; i < QK_UNROLL; ++i)
#pragma unroll
            for (int c = 0; c < QKC; ++c) {
              const int d = (i * QKC + c) * 32;  // step i * QKC + c of the body, into chain c
              mc::QkA a[QMT];
#pragma unroll
              for (int qm = 0; qm < QMT; ++qm) a[qm] = mc::load_qk_a<QTile>(sQ + g * 2, (qk_m0 + qm) * 16, d);
#pragma unroll
              for (int kb = 0; kb < QKB; ++kb) {
                const int key = qk_key0 + kb * 16;  // a block of 16 keys lies in one slot
                if constexpr (NATIVE && !FP8) {  // mfma_native, bf16: one 16x16x32 product a step
                  const mc::QkB k = mc::load_qk_b<Tile>(key_slot(key) + g * 2, key % SLOT_KEYS, d);
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) Native::mma_qk(chains[c][qm][kb], a[qm], k);
                } else if constexpr (NATIVE) {  // mfma_native, fp8: the codes undecoded, two q terms
                  const mc::QkB8 k = mc::load_qk_b8<Codes>(key_slot(key), key % SLOT_KEYS, g + d);
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) Native::mma_qk8(chains[c][qm][kb], a[qm], k);
                } else if constexpr (!FP8) {
                  const mc::QkB k = mc::load_qk_b<Tile>(key_slot(key) + g * 2, key % SLOT_KEYS, d);
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) mc::mma_qk(chains[c][qm][kb], a[qm], k);
                } else {
                  const mc::QkB16 k =
                      mc::decode<Decode>(mc::load_qk_b8<Codes>(key_slot(key), key % SLOT_KEYS, g + d));
#pragma unroll
                  for (int qm = 0; qm < QMT; ++qm) mc::mma_qk_f16(chains[c][qm][kb], a[qm], k);
                }
              }
            }
        }
#pragma unroll
        for (int c = 1; c < QKC; ++c)
#pragma unroll
          for (int qm = 0; qm < QMT; ++qm)
#pragma unroll
            for (int kb = 0; kb < QKB; ++kb)
#pragma unroll
              for (int e = 0; e < mc::kLaneAcc; ++e) s[qm][kb].v[e] += chains[c][qm][kb].v[e];
