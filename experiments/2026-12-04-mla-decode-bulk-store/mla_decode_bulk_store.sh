#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): the probe
# mla_decode_bulk_store. math=wgmma stages its rows in shared memory as the output holds them
# (bf16 rows, or a split's fp32 rows) and writes each with one bulk copy (cp.async.bulk shared ->
# global, issued by one thread a row) instead of staging fp32 and having every math thread copy
# 16-byte vectors in a loop that waits on each load and store: ncu's warp stall samples of a
# launch that runs no tile put 45% of them in that loop
# (experiments/2026-12-04-mla-decode-no-tiles/mla_decode_no_tiles.md). Templates only, so it runs through
# `ktune --templates` over main's build, every bench verified by `ktune bench` on the
# verification shapes; then each kernel's duration under ncu at h12_l4c.
# Writes $OUT/bulk_store_ab.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
probe_templates mla_decode_bulk_store || exit 1
cases=$probe/cases.txt
wgmma="rows=64 keys=64 threads=384 stages=2 math=wgmma"
bf16="--kernel mla_decode --kv-dtype bf16 --ctx 8192"
ab_cases "$probe/templates" >"$cases" <<EOF2
h12_l4c|$bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --config '$wgmma split=1'
h12_l4f|$bf16 --heads 12 --block-len 4 --causal 0 --batch 32 --config '$wgmma split=1'
h64_l2_b8|$bf16 --heads 64 --block-len 2 --causal 1 --batch 8 --config '$wgmma split=2'
h64_l2_b1|$bf16 --heads 64 --block-len 2 --causal 1 --batch 1 --config '$wgmma split=2'
h16_l4_b128|$bf16 --heads 16 --block-len 4 --causal 1 --batch 128 --config '$wgmma split=0'
h128|$bf16 --heads 128 --block-len 1 --causal 1 --batch 128 --config '$wgmma split=1'
EOF2
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$out/bulk_store_ab.jsonl" \
  | tee "$out/bulk_store_ab.md"
# Each kernel's duration under ncu (clocks not locked), main and probe, at h12_l4c.
for t in main probe; do
  templates=(); [ "$t" = main ] || templates=(--templates "$probe/templates")
  echo "== $t"
  timeout 100 ncu --target-processes all --clock-control none -k regex:mla_ -s 6 -c 4 --metrics gpu__time_duration.sum \
    "$KTUNE" bench --kernel mla_decode --kv-dtype bf16 --ctx 8192 --heads 12 --block-len 4 --causal 1 --batch 32 \
    --no-verify --config "$wgmma split=1" "${templates[@]}" 2>&1 | grep -E "^  void|duration"
done | tee "$out/bulk_store_ncu.txt"
# Every math=wgmma candidate of the smoke space with the probe's templates, each verified as the
# sweep verifies (both masks, the three batch sizes, split and unsplit).
timeout 150 "$KTUNE" --templates "$probe/templates" sweep --kernel mla_decode --space smoke --where math=wgmma \
  --db "$probe/smoke_wgmma.db" --budget 120 --timeout 20 2>&1 | grep -E "^sweep:|verify_failed|fault" | tee "$out/bulk_store_smoke.txt"
