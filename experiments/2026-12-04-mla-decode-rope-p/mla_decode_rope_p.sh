#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): the probe
# mla_decode_rope_p, math=wgmma with its producer (threads=384) keeping each tile's P in the
# tile's rope panel (free once Q K^T has read it, refilled only after the tile's P V) instead of
# one P matrix for all tiles, so that the tile loop needs no barrier at its top: the first
# warpgroup goes on to Q K^T of tile t while the second may still take P V of tile t - 1 (ncu of
# the producer kernel: the barrier is its largest stall, experiments/2026-12-04-mla-decode-producer/mla_decode_producer_ab.md).
# Templates only (its shared-memory layout is main's), so it runs through `ktune --templates`
# over main's build: an A/B on the 64-row targets with both of wgmma's tiles, every bench
# verified by `ktune bench` on the verification shapes. Writes $OUT/rope_p_ab.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
probe_templates mla_decode_rope_p || exit 1
cases=$probe/cases.txt
for k in "h128|--heads 128 --block-len 1 --causal 1 --batch 128" "h16_l4|--heads 16 --block-len 4 --causal 1 --batch 128" \
         "h12_l4c|--heads 12 --block-len 4 --causal 1 --batch 32" "h12_l4f|--heads 12 --block-len 4 --causal 0 --batch 32"; do
  name=${k%%|*}; flags="--kernel mla_decode --kv-dtype bf16 --ctx 8192 ${k#*|}"
  for tile in "k64|keys=64 stages=2" "k32|keys=32 stages=4"; do
    config="--config 'rows=64 ${tile#*|} threads=384 split=1 math=wgmma'"
    echo "${name}_${tile%%|*} main | $flags $config"
    echo "${name}_${tile%%|*} probe | $flags $config --templates $probe/templates"
  done
done >"$cases"
timeout 400 ./scripts/bench_ab.py "$cases" --rounds 2 --ktune "$KTUNE" --json-out "$out/rope_p_ab.jsonl" \
  | tee "$out/rope_p_ab.md"
