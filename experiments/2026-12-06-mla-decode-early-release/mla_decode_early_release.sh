#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): the probe
# mla_decode_early_release. With the producer warpgroup (384 threads), math=wgmma and math=wgmma_t
# release a ring slot once P V's A operand (V^T, or the fp8 codes) is in registers, while the last
# products, which read only P from its own buffer, still run; main releases it after they complete.
# The producer's next copies into the slot then start that much sooner: on the H200, where the
# 64-row tiles' math (2.39 µs a tile at H 16 L 4) outlasts their copies (2.13 µs), a slot's refill
# is what the ring of two waits on (experiments/2026-12-04-mla-decode-phase-cost/mla_decode_phase_cost.md).
# Templates only, through `ktune --templates` over main's build, every bench verified; then every
# smoke candidate of both paths with the probe's templates, verified as the sweep verifies.
# Writes $OUT/early_release_ab.{md,jsonl} and $OUT/early_release_smoke.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
probe_templates mla_decode_early_release || exit 1
cases=$probe/cases.txt
wgmma="rows=64 keys=64 threads=384 stages=2 math=wgmma"
bf16="--kernel mla_decode --kv-dtype bf16 --ctx 8192"
ab_cases "$probe/templates" >"$cases" <<EOF2
h16_l4_b128|$bf16 --heads 16 --block-len 4 --causal 1 --batch 128 --config '$wgmma split=0'
h12_l4c|$bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --config '$wgmma split=1'
h12_l4f|$bf16 --heads 12 --block-len 4 --causal 0 --batch 32 --config '$wgmma split=1'
h128|$bf16 --heads 128 --block-len 1 --causal 1 --batch 128 --config '$wgmma split=2'
h16_l1_fp8|--kernel mla_decode --kv-dtype fp8_e4m3fn --ctx 8192 --heads 16 --block-len 1 --causal 1 --batch 128 --config 'rows=16 keys=64 threads=384 stages=2 split=0 math=wgmma_t'
h16_l1_bf16 (unchanged)|$bf16 --heads 16 --block-len 1 --causal 1 --batch 128 --config 'rows=16 keys=32 threads=128 stages=2 split=2 math=mma'
EOF2
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$out/early_release_ab.jsonl" \
  | tee "$out/early_release_ab.md"
for math in wgmma wgmma_t; do
  timeout 100 "$KTUNE" --templates "$probe/templates" sweep --kernel mla_decode --space smoke --where math=$math \
    --where threads=384 --db "$probe/smoke.db" --budget 80 --timeout 20 2>&1 | tail -n 20
done | tee "$out/early_release_smoke.txt"
