#!/usr/bin/env bash
# On the GPU machine, over a carried build/ with main's build (scripts/remote/pack.sh) and the
# probe's (scripts/remote/probes/build.sh mla_decode_fp8_page_runs, for its GPU tests; optional): the probe
# mla_decode_fp8_page_runs (fp8 slots inside one page copied as one contiguous run by all threads,
# whole 128-byte lines per warp instruction, where 4 threads per key read 64 bytes of each of 8
# rows). Its GPU tests first (page sizes 64 and 1536 take the new copies; the verification shapes
# of `ktune bench` have pages of 1 and 16 and do not), then an A/B of main and the probe (through
# `--templates`: the probe changes no host code) on the fp8 target shape.
# Writes $OUT/fp8_page_runs_gpu_tests.log and $OUT/fp8_page_runs_ab.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
# The timing needs no probe build; the tests do, and are worth a 12-minute build only once the
# probe has won: without build/probe/ the script says so and times it.
if [ -x build/probe/ktune_gpu_tests ]; then
  timeout 200 build/probe/ktune_gpu_tests --gtest_color=no --gtest_filter='*MlaDecode*' \
    >"$out/fp8_page_runs_gpu_tests.log" 2>&1
  echo "fp8_page_runs: probe GPU tests exit $?"; tail -n 3 "$out/fp8_page_runs_gpu_tests.log"
else
  echo "fp8_page_runs: no build/probe/ (build.sh mla_decode_fp8_page_runs): GPU tests not run"
fi

probe_templates mla_decode_fp8_page_runs || exit 1
shape="--kernel mla_decode --heads 16 --block-len 1 --causal 1 --batch 128 --ctx 8192"
cases=$probe/cases.txt
{
  for c in "fp8_e4m3fn|rows=16 keys=128 threads=256 stages=10 split=1 math=mma" \
           "fp8_e4m3fn|rows=16 keys=64 threads=128 stages=4 split=2 math=mma" \
           "fp8_e4m3fn|rows=16 keys=32 threads=128 stages=4 split=2 math=mma" \
           "fp8_e4m3fnuz|rows=16 keys=128 threads=256 stages=10 split=1 math=mma"; do
    dtype=${c%%|*} config=${c#*|}
    echo "$dtype ${config// /,} main  | $shape --kv-dtype $dtype --config '$config'"
    echo "$dtype ${config// /,} probe | $shape --kv-dtype $dtype --config '$config' --templates $probe/templates"
  done
} >"$cases"
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$out/fp8_page_runs_ab.jsonl" \
  | tee "$out/fp8_page_runs_ab.md"
