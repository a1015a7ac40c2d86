#!/usr/bin/env bash
# Builds the database, dispatch-table, codegen and space-file unit tests (ktune_sanitized_unit_tests: the code
# that reads files other programs wrote) with AddressSanitizer + UndefinedBehaviorSanitizer
# (KTUNE_SANITIZE) into build-asan/ and runs them. Any sanitizer report fails the run.
#   KTUNE_SANITIZE_FILTER  gtest filter (default Db*:Dispatch*:Codegen*:SweepTomlGuard*:SweepSpace*)
#   KTUNE_ASAN_BUILD_DIR, KTUNE_JOBS
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KTUNE_ASAN_BUILD_DIR:-build-asan}
filter=${KTUNE_SANITIZE_FILTER:-'Db*:Dispatch*:Codegen*:SweepTomlGuard*:SweepSpace*'}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKTUNE_SANITIZE=ON -DKTUNE_BUILD_BENCHMARKS=OFF >/dev/null
build_start=$SECONDS
cmake --build "$build" -j"${KTUNE_JOBS:-$(nproc)}" --target ktune_sanitized_unit_tests
echo "sanitize: built ktune_sanitized_unit_tests in $((SECONDS - build_start)) s"
log=$build/sanitize.log
run_start=$SECONDS
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if ! "$build/tests/ktune_sanitized_unit_tests" --gtest_filter="$filter" --gtest_color=no >"$log" 2>&1; then
  tail -n 80 "$log"
  echo "sanitize: FAILED under ASan+UBSan (full log: $log)" >&2
  exit 1
fi
passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$log")
skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?,.*/\1/p' "$log")
echo "sanitize: $passed tests passed, ${skipped:-0} skipped under ASan+UBSan ($filter) in $((SECONDS - run_start)) s"
[ "${passed:-0}" -gt 0 ] || { echo "sanitize: the filter '$filter' selected no test" >&2; exit 1; }
