#!/usr/bin/env bash
# On the GPU machine, over a carried .devbin/ (scripts/device/pack.sh) and .devbin/pkg/
# (tests/package/device_pack.sh): what one lease should produce, each step time-boxed so that one
# slow step cannot eat the call. Logs and results go to $OUT as one tarball plus steps.txt (the
# device tool brings back at most 8 files).
#   scripts/device/session.sh tests    GPU test suites, the runtime through the installed package,
#                                      the select / runtime benchmarks
#   scripts/device/session.sh sweeps   the qk_rope_cache GPU tests and the runtime again, smoke
#                                      sweeps of every family into results/<device>/, the
#                                      mla_decode target shapes (sweep + bench table)
#   KTUNE_SWEEP_BUDGET (seconds per family, default 100), KTUNE_TEST_LIMIT (default 300: the suites took 186 s on an H200 on 2026-12-04, 220 s on an H100 on 2026-12-05)
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/device/env.sh
logs=/tmp/ktune-session; mkdir -p "$logs"

step() {
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "step $name: exit $rc after $((SECONDS - start)) s (limit $limit s)" | tee -a "$out/steps.txt"
  tail -n 6 "$logs/$name.log" | sed 's/^/  | /' | tee -a "$out/steps.txt"
  # After every step, so that a call cut short still brings back what was done.
  tar -C "$logs" -czf "$out/session-$mode.tgz" .
}

mode=${1:-}
step devices 60 bash -c 'nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; "$KTUNE" devices'
case "$mode" in
  tests)
    step gpu_tests "${KTUNE_TEST_LIMIT:-300}" .devbin/ktune_gpu_tests --gtest_color=no
    step runtime 90 env OUT="$logs" ./tests/package/device_run.sh
    step select_bench 30 .devbin/ktune_select_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_out="$logs/select_bench.json" --benchmark_out_format=json
    ;;
  sweeps)
    step rope_tests 40 .devbin/ktune_gpu_tests --gtest_color=no --gtest_filter='*QkRopeCache*'
    step runtime 90 env OUT="$logs" ./tests/package/device_run.sh
    budget=${KTUNE_SWEEP_BUDGET:-100}
    step smoke_sweeps $((2 * budget + 100)) env KTUNE_RESULTS_DIR="$logs/results" ./scripts/sweep_results.sh smoke \
      --budget "$budget" --timeout 20
    step targets 220 ./scripts/device/targets.sh "$logs"
    ;;
  *) echo "usage: $0 tests|sweeps" >&2; exit 2 ;;
esac
grep -h -E '^\[  (FAILED|PASSED|SKIPPED) |tests? ran|FAILED TEST' "$logs"/*.log >>"$out/steps.txt" 2>/dev/null
