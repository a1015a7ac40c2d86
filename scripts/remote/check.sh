#!/usr/bin/env bash
# Checks a build on a GPU machine, over a .gpu-bundle/ (scripts/remote/pack.sh): the device
# listing, the GPU test suites, and a sweep of SPACE into results/<device>/ (sweep_results.sh).
# Logs and one tarball of the results go to $out (scripts/remote/env.sh): a few files to bring back.
#   scripts/remote/check.sh [SPACE] [extra sweep flags...]
#   KTUNE_SKIP_TESTS=1, KTUNE_SKIP_SWEEP=1 skip a part; KTUNE_GTEST_FILTER narrows the tests
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; "$KTUNE" devices; } 2>&1 | tee "$out/devices.txt"
if [ "${KTUNE_SKIP_TESTS:-0}" != 1 ]; then
  for t in .gpu-bundle/ktune_gpu_tests; do
    [ -x "$t" ] && "$t" --gtest_color=no ${KTUNE_GTEST_FILTER:+--gtest_filter=$KTUNE_GTEST_FILTER} 2>&1 | tee "$out/$(basename "$t").log" | grep -E '^\[  (FAILED|PASSED|SKIPPED) |^\[==========\]|tests? ran|FAILED TEST' 
  done
fi
if [ "${KTUNE_SKIP_SWEEP:-0}" != 1 ]; then
  KTUNE_RESULTS_DIR=/tmp/ktune-results ./scripts/sweep_results.sh "$@" 2>&1 | tail -n 200 >"$out/sweep.log"
  tail -n 30 "$out/sweep.log"
  tar -C /tmp/ktune-results -czf "$out/results.tgz" .
fi
