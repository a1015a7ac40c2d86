#!/usr/bin/env bash
# Runs the GPU suites of a build on a GPU machine, over a .gpu-bundle/ (scripts/remote/pack.sh) and
# .gpu-bundle/pkg/ (tests/package/remote_pack.sh), each step under its own time limit so that one
# slow step cannot use up the time of the rest. Logs and results go to $out (scripts/remote/env.sh)
# as one tarball, rewritten after every step, plus steps.txt.
#   scripts/remote/suites.sh tests    GPU test suites, the runtime through the installed package,
#                                     the select / runtime benchmarks
#   scripts/remote/suites.sh sweeps   the qk_rope_cache GPU tests and the runtime again, smoke
#                                     sweeps of every family into results/<device>/, the
#                                     mla_decode target shapes (sweep + bench table)
#   KTUNE_SWEEP_BUDGET (seconds per family, default 100), KTUNE_TEST_LIMIT (seconds of the GPU
#   test suites, default 300)
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
logs=/tmp/ktune-suites; mkdir -p "$logs"

step() {
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "step $name: exit $rc after $((SECONDS - start)) s (limit $limit s)" | tee -a "$out/steps.txt"
  tail -n 6 "$logs/$name.log" | sed 's/^/  | /' | tee -a "$out/steps.txt"
  # After every step, so that a run cut short still brings back what was done.
  tar -C "$logs" -czf "$out/suites-$mode.tgz" .
}

mode=${1:-}
step devices 60 bash -c 'nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv; "$KTUNE" devices'
case "$mode" in
  tests)
    step gpu_tests "${KTUNE_TEST_LIMIT:-300}" .gpu-bundle/ktune_gpu_tests --gtest_color=no
    step runtime 90 env OUT="$logs" ./tests/package/remote_run.sh
    step select_bench 30 .gpu-bundle/ktune_select_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
      --benchmark_out="$logs/select_bench.json" --benchmark_out_format=json
    ;;
  sweeps)
    step rope_tests 40 .gpu-bundle/ktune_gpu_tests --gtest_color=no --gtest_filter='*QkRopeCache*'
    step runtime 90 env OUT="$logs" ./tests/package/remote_run.sh
    budget=${KTUNE_SWEEP_BUDGET:-100}
    step smoke_sweeps $((2 * budget + 100)) env KTUNE_RESULTS_DIR="$logs/results" ./scripts/sweep_results.sh smoke \
      --budget "$budget" --timeout 20
    step targets 220 ./scripts/remote/targets.sh "$logs"
    ;;
  *) echo "usage: $0 tests|sweeps" >&2; exit 2 ;;
esac
grep -h -E '^\[  (FAILED|PASSED|SKIPPED) |tests? ran|FAILED TEST' "$logs"/*.log >>"$out/steps.txt" 2>/dev/null
