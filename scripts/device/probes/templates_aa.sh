#!/usr/bin/env bash
# On the GPU machine, over a carried .devbin/ (scripts/device/pack.sh of main): the A/A control of
# the probes' method. Main's own templates, copied and run through `ktune --templates`, against the
# embedded ones: any difference is the method's, not a kernel change's. Writes $OUT/templates_aa.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/device/env.sh
copy=$(mktemp -d)
cp -r templates "$copy/"
cases=$copy/cases.txt
wgmma="rows=64 keys=64 threads=384 stages=2 math=wgmma"
for k in "h12_l4c|--heads 12 --block-len 4 --causal 1 --batch 32|$wgmma split=1" \
         "h64_l2_b1|--heads 64 --block-len 2 --causal 1 --batch 1|$wgmma split=2" \
         "h16_l4_b128|--heads 16 --block-len 4 --causal 1 --batch 128|$wgmma split=0" \
         "h128|--heads 128 --block-len 1 --causal 1 --batch 128|$wgmma split=1"; do
  IFS='|' read -r name key config <<<"$k"
  flags="--kernel mla_decode --kv-dtype bf16 --ctx 8192 $key --config '$config'"
  echo "$name embedded | $flags"
  echo "$name copy | $flags --templates $copy/templates"
  # and in the other order, for the position within a round
  echo "$name copy, first | $flags --templates $copy/templates"
  echo "$name embedded, second | $flags"
done >"$cases"
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$out/templates_aa.jsonl" \
  | tee "$out/templates_aa.md"
