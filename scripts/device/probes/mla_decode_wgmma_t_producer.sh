#!/usr/bin/env bash
# On the GPU machine, over a carried .devbin/ (scripts/device/pack.sh of main, then
# scripts/device/probes/build.sh mla_decode_wgmma_t_producer): the probe mla_decode_wgmma_t_producer,
# math=wgmma_t at 384 threads, its two math warpgroups' rings filled by a producer warpgroup (as
# math=wgmma's since 2d4e0f4: results/nvidia-h200/mla_decode_producer_ab.md), against wgmma_t at
# 256 and 128 threads, where each math warpgroup issues its own copies (ncu at the fp8 target:
# the copies' address registers were the second most-sampled stall,
# results/nvidia-h200/profiles/mla_decode_wgmma_t_ring_slots_probe.md). Issue 6's fp8 target
# (0.6x the bf16 time) and the batch-32 / L=4 keys, every bench verified; "main" rows run main's
# templates (this tree's templates/) through the probe's build, whose host code for 128 and 256
# threads is main's. Then the probe build's GPU tests of mla_decode.
# Writes $OUT/wgmma_t_producer_ab.{md,jsonl} and $OUT/gpu_tests.txt.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/device/env.sh
probe_ktune=$PWD/.devbin/probe/ktune
[ -x "$probe_ktune" ] || { echo "no $probe_ktune: run scripts/device/probes/build.sh mla_decode_wgmma_t_producer" >&2; exit 1; }
cases=$(mktemp)
main_templates="--templates $PWD/templates"
for k in "fn|--heads 16 --block-len 1 --causal 1 --batch 128 --kv-dtype fp8_e4m3fn" \
         "fnuz|--heads 16 --block-len 1 --causal 1 --batch 128 --kv-dtype fp8_e4m3fnuz" \
         "fn_b32|--heads 16 --block-len 1 --causal 1 --batch 32 --kv-dtype fp8_e4m3fn" \
         "fn_l4|--heads 16 --block-len 4 --causal 1 --batch 128 --kv-dtype fp8_e4m3fn"; do
  name=${k%%|*}; flags="--kernel mla_decode --ctx 8192 ${k#*|}"
  echo "$name t256 main | $flags --config 'rows=16 keys=64 threads=256 stages=2 split=1 math=wgmma_t' $main_templates"
  echo "$name t128 main | $flags --config 'rows=16 keys=64 threads=128 stages=2 split=2 math=wgmma_t' $main_templates"
  echo "$name t384 probe | $flags --config 'rows=16 keys=64 threads=384 stages=2 split=1 math=wgmma_t'"
done >"$cases"
timeout 330 ./scripts/bench_ab.py "$cases" --rounds 2 --ktune "$probe_ktune" --json-out "$out/wgmma_t_producer_ab.jsonl" \
  | tee "$out/wgmma_t_producer_ab.md"
timeout 150 .devbin/probe/ktune_gpu_tests --gtest_color=no --gtest_filter='*MlaDecode*' >"$out/gpu_tests.txt" 2>&1
grep -E '^\[  (PASSED|FAILED) ' "$out/gpu_tests.txt"
