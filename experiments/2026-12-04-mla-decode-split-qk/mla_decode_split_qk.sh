#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): the probe
# mla_decode_split_qk (math=wgmma with 64-key tiles: both warpgroups take Q K^T, 32 keys each, and
# the softmax of their own scores, where the first warpgroup took all 64 keys while the second
# waited). Its host-side change (MmaGeometry's Q K^T grid, and the family test that states it)
# moves no launch parameter, so the probe runs through `ktune ... --templates` over main's build:
# an A/B of main and the probe on the 64-row targets and one batch-32 key, every bench
# verified by `ktune bench` on the verification shapes (ragged lengths, pages of 1 to 1536 keys).
# Writes $OUT/split_qk_ab.{md,jsonl}. If it pays: apply the patch, run the GPU suites on its build.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
probe_templates mla_decode_split_qk || exit 1

common="--kv-dtype bf16 --ctx 8192"
h128="--kernel mla_decode --heads 128 --block-len 1 --causal 1 --batch 128 $common --config 'rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma'"
h16_l4="--kernel mla_decode --heads 16 --block-len 4 --causal 1 --batch 128 $common --config 'rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma'"
h12_l4c="--kernel mla_decode --heads 12 --block-len 4 --causal 1 --batch 32 $common --config 'rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma'"
h12_l4f="--kernel mla_decode --heads 12 --block-len 4 --causal 0 --batch 32 $common --config 'rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma'"
h16_l4_b32="--kernel mla_decode --heads 16 --block-len 4 --causal 1 --batch 32 $common --config 'rows=64 keys=64 threads=256 stages=2 split=2 math=wgmma'"
cases=$probe/cases.txt
{
  for c in h128 h16_l4 h12_l4c h12_l4f h16_l4_b32; do
    echo "$c main  | ${!c}"
    echo "$c probe | ${!c} --templates $probe/templates"
  done
} >"$cases"
timeout 400 ./scripts/bench_ab.py "$cases" --rounds 2 --ktune "$KTUNE" --json-out "$out/split_qk_ab.jsonl" \
  | tee "$out/split_qk_ab.md"
