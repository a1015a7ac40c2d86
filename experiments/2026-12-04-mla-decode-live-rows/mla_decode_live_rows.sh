#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): math=wgmma's P V
# products only as wide as the CTA's live rows (mla_decode_live_rows.patch: H x L = 48 runs
# m64n48k16), and the same with a leaner softmax (mla_decode_live_rows_lean_softmax.patch: the
# score scale in the exponent's FMA, no mask on whole tiles, P stored in pairs), each against main's
# templates through `ktune --templates`, every bench verified. Writes $OUT/live_rows.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
probe_templates mla_decode_live_rows && rows=$probe
probe_templates mla_decode_live_rows_lean_softmax && lean=$probe
wgmma="rows=64 threads=384 math=wgmma"
bf16="--kernel mla_decode --kv-dtype bf16"
cases=$(mktemp)
while IFS='|' read -r name flags; do
  echo "$name main | $flags"
  echo "$name rows | $flags --templates $rows/templates"
  echo "$name lean | $flags --templates $lean/templates"
done >"$cases" <<EOC
h12_l4c|$bf16 --ctx 8192 --heads 12 --block-len 4 --causal 1 --batch 32 --config '$wgmma keys=64 stages=2 split=1'
h12_l4f|$bf16 --ctx 8192 --heads 12 --block-len 4 --causal 0 --batch 32 --config '$wgmma keys=64 stages=2 split=1'
h16_l4_b128|$bf16 --ctx 8192 --heads 16 --block-len 4 --causal 1 --batch 128 --config '$wgmma keys=64 stages=2 split=0'
h128|$bf16 --ctx 8192 --heads 128 --block-len 1 --causal 1 --batch 128 --config '$wgmma keys=64 stages=2 split=2'
h16_l2_b32|$bf16 --ctx 4096 --heads 16 --block-len 2 --causal 1 --batch 32 --config '$wgmma keys=32 stages=4 split=2'
h16_l1_mma|$bf16 --ctx 8192 --heads 16 --block-len 1 --causal 1 --batch 128 --config 'rows=16 keys=32 threads=128 stages=2 split=2 math=mma'
EOC
timeout 420 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$out/live_rows.jsonl" \
  | tee "$out/live_rows.md"
