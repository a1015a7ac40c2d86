#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main) that also holds
# 4d1c635's templates in build/old_templates (unpacked here as
# experiments/2026-12-02-mla-decode-fp16-p/mla_decode_fp16_p_ab.txt says): the probe
# mla_decode_pv_preload (wgmma's P V loads and converts its first V^T fragments while Q K^T runs,
# not after the P barrier). It changes no host code, so it runs through `ktune ... --templates`
# over main's build: an A/B of 4d1c635 (two bf16 terms of P), main (one fp16 term) and the probe
# on the key where main lost 7% to 4d1c635 (heads=16 L=4 batch=32 ctx=4096, the smoke sweep's
# winner) and on two where it won, then ncu of 4d1c635 and main on the first.
# Writes $OUT/pv_preload_ab.{md,jsonl} and $OUT/ncu_{old,main}.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
[ -d build/old_templates/mla_decode ] || { echo "pv_preload: no build/old_templates (see the header)" >&2; exit 1; }
probe_templates mla_decode_pv_preload || exit 1

b32="--kernel mla_decode --heads 16 --block-len 4 --causal 1 --kv-dtype bf16 --batch 32 --ctx 4096 --config 'rows=64 keys=32 threads=256 stages=4 split=2 math=wgmma'"
b128="--kernel mla_decode --heads 16 --block-len 4 --causal 1 --kv-dtype bf16 --batch 128 --ctx 8192 --config 'rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma'"
h128="--kernel mla_decode --heads 128 --block-len 1 --causal 1 --kv-dtype bf16 --batch 128 --ctx 8192 --config 'rows=64 keys=64 threads=256 stages=2 split=2 math=wgmma'"
cases=$probe/cases.txt
{
  echo "h16_l4_b32 4d1c635 | $b32 --templates build/old_templates"
  echo "h16_l4_b32 main    | $b32"
  echo "h16_l4_b32 probe   | $b32 --templates $probe/templates"
  echo "h16_l4_b128 main   | $b128"
  echo "h16_l4_b128 probe  | $b128 --templates $probe/templates"
  echo "h128 main          | $h128"
  echo "h128 probe         | $h128 --templates $probe/templates"
} >"$cases"
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$out/pv_preload_ab.jsonl" \
  | tee "$out/pv_preload_ab.md"

ncu() {
  timeout 120 /usr/local/cuda/bin/ncu --target-processes all -k regex:mla_decode_mma -s 3 -c 1 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
    --section MemoryWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
    "$KTUNE" bench --kernel mla_decode --heads 16 --block-len 4 --causal 1 --kv-dtype bf16 --batch 32 --ctx 4096 \
    --config "rows=64 keys=32 threads=256 stages=4 split=2 math=wgmma" --no-verify "$@"
}
ncu --templates build/old_templates >"$out/ncu_old.txt" 2>&1
ncu >"$out/ncu_main.txt" 2>&1
grep -hE "Duration|Executed Instructions  |Eligible Warps|stalled_(barrier|wait|short|long|gmma)" "$out"/ncu_*.txt
