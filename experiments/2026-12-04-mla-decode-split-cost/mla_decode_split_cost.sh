#!/usr/bin/env bash
# On the GPU machine, over a carried build/ of main: what math=wgmma with its producer
# (threads=384) spends beyond its tiles on the batch-32 target (H 12, L 4, B 32): the time
# against context at split=1 (4 splits, 128 CTAs) and split=0 (32 CTAs), H 16 L 4 B 128 beside it
# (no split), then ncu's duration of each kernel of one launch (main and combine, clocks not
# locked) at ctx 8192. Writes $OUT/split_cost.{md,jsonl} and $OUT/split_cost_ncu.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
cases=$(mktemp)
cfg="rows=64 keys=64 threads=384 stages=2 math=wgmma"
for ctx in 2048 4096 8192 16384; do
  echo "h12_l4_b32 split=1 ctx=$ctx | --kernel mla_decode --kv-dtype bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --ctx $ctx --no-verify --config '$cfg split=1'"
  echo "h12_l4_b32 split=0 ctx=$ctx | --kernel mla_decode --kv-dtype bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --ctx $ctx --no-verify --config '$cfg split=0'"
  echo "h16_l4_b128 split=0 ctx=$ctx | --kernel mla_decode --kv-dtype bf16 --heads 16 --block-len 4 --causal 1 --batch 128 --ctx $ctx --no-verify --config '$cfg split=0'"
done >"$cases"
echo "h12_l4_b32 split=2 ctx=8192 | --kernel mla_decode --kv-dtype bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --ctx 8192 --no-verify --config '$cfg split=2'" >>"$cases"
timeout 200 ./scripts/bench_ab.py "$cases" --rounds 1 --ktune "$KTUNE" --json-out "$out/split_cost.jsonl" | tee "$out/split_cost.md"
timeout 120 ncu --target-processes all --clock-control none -k regex:mla_ -s 6 -c 4 \
  --metrics gpu__time_duration.sum,sm__cycles_active.avg,launch__grid_size \
  "$KTUNE" bench --kernel mla_decode --kv-dtype bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --ctx 8192 \
  --no-verify --config "$cfg split=1" >"$out/split_cost_ncu.txt" 2>&1
grep -E "mla_|duration|cycles_active|grid_size" "$out/split_cost_ncu.txt"
