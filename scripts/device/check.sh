#!/usr/bin/env bash
# On the GPU machine, over a carried .devbin/ (scripts/device/pack.sh): device listing, the GPU
# test suites, and a sweep of SPACE into results/<device>/. Logs and a tarball of the results go
# to $OUT (the device tool brings back at most 8 files).
#   scripts/device/check.sh [SPACE] [extra sweep flags...]
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/device/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; "$KTUNE" devices; } 2>&1 | tee "$out/devices.txt"
if [ "${KTUNE_SKIP_TESTS:-0}" != 1 ]; then
  for t in .devbin/ktune_gpu_tests; do
    [ -x "$t" ] && "$t" --gtest_color=no ${KTUNE_GTEST_FILTER:+--gtest_filter=$KTUNE_GTEST_FILTER} 2>&1 | tee "$out/$(basename "$t").log" | grep -E '^\[  (FAILED|PASSED|SKIPPED) |^\[==========\]|tests? ran|FAILED TEST' 
  done
fi
if [ "${KTUNE_SKIP_SWEEP:-0}" != 1 ]; then
  KTUNE_RESULTS_DIR=/tmp/ktune-results ./scripts/sweep_results.sh "$@" 2>&1 | tail -n 200 >"$out/sweep.log"
  tail -n 30 "$out/sweep.log"
  tar -C /tmp/ktune-results -czf "$out/results.tgz" .
fi
