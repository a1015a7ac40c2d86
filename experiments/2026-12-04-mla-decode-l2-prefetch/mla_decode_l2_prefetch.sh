#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): the probe
# mla_decode_l2_prefetch. The producer warpgroups of math=wgmma and math=wgmma_t (threads=384)
# start each next slot's rows into L2 (cp.async.bulk.prefetch.L2, one per key row) right after
# issuing this slot's copies, so that the next slot's copies, issued once the math warpgroups
# release the slot, read L2 rather than DRAM: with a ring of 2 tiles a CTA has at most one tile's
# copies in flight, and at 128 CTAs the tile loop runs at 88% to 92% of the copy bandwidth
# (experiments/2026-12-04-mla-decode-split-cost/mla_decode_split_cost.md). Templates only, so it runs through
# `ktune --templates` over main's build: an A/B on the targets with their winners' configs
# (and wgmma's 32-key tiles), every bench verified by `ktune bench` on the verification shapes.
# Writes $OUT/l2_prefetch_ab.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
probe_templates mla_decode_l2_prefetch || exit 1
cases=$probe/cases.txt
wgmma="rows=64 threads=384 split=1 math=wgmma"
for k in "h128|--heads 128 --block-len 1 --causal 1 --batch 128 --kv-dtype bf16|$wgmma keys=64 stages=2" \
         "h16_l4|--heads 16 --block-len 4 --causal 1 --batch 128 --kv-dtype bf16|$wgmma keys=64 stages=2" \
         "h16_l4_k32|--heads 16 --block-len 4 --causal 1 --batch 128 --kv-dtype bf16|$wgmma keys=32 stages=4" \
         "h12_l4c|--heads 12 --block-len 4 --causal 1 --batch 32 --kv-dtype bf16|$wgmma keys=64 stages=2" \
         "h12_l4f|--heads 12 --block-len 4 --causal 0 --batch 32 --kv-dtype bf16|$wgmma keys=64 stages=2" \
         "fp8|--heads 16 --block-len 1 --causal 1 --batch 128 --kv-dtype fp8_e4m3fn|rows=16 keys=64 threads=384 stages=2 split=0 math=wgmma_t" \
         "fp8_b32|--heads 16 --block-len 1 --causal 1 --batch 32 --kv-dtype fp8_e4m3fn|rows=16 keys=64 threads=384 stages=2 split=1 math=wgmma_t"; do
  IFS='|' read -r name key config <<<"$k"
  flags="--kernel mla_decode --ctx 8192 $key --config '$config'"
  echo "$name main | $flags"
  echo "$name probe | $flags --templates $probe/templates"
done >"$cases"
timeout 400 ./scripts/bench_ab.py "$cases" --rounds 2 --ktune "$KTUNE" --json-out "$out/l2_prefetch_ab.jsonl" \
  | tee "$out/l2_prefetch_ab.md"
