#!/usr/bin/env bash
# Runs the runtime's package tests on a GPU machine, over a .gpu-bundle/pkg/
# (tests/package/remote_pack.sh): the runtime's tests (MLA decode and qk_rope_cache through
# ktune_runtime against the CPU references, a KTUNE_DB winner compiled at run time with NVRTC), the
# out-of-tree consumer built against the installed package (it finds the code objects next to the
# library: KTUNE_PACKAGE_DIR unset) and the runtime benchmarks, as JSON in $OUT/runtime_bench.json
# (logs in $OUT, else /tmp/ktune-out).
set -uo pipefail
cd "$(dirname "$0")/../.."
dev=.gpu-bundle/pkg
out=${OUT:-/tmp/ktune-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/$dev/prefix/lib:$PWD/$dev/lib:${LD_LIBRARY_PATH:-}
packages=$PWD/$dev/prefix/share/ktune  # the root of the installed packages (<family>-<arch>/)
status=0
# The build tree's ktune, cmake and library are not here: those tests skip or are left out.
KTUNE_PACKAGE_DIR=$packages KTUNE_FIXTURE_PACKAGE_DIR=$PWD/$dev/fixture "$dev/ktune_package_tests" --gtest_color=no \
  --gtest_filter='Runtime*:-RuntimeInstall*:RuntimePython*' >"$out/package_tests.log" 2>&1 || status=1
grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED) |Failure|error' "$out/package_tests.log"
env -u KTUNE_PACKAGE_DIR -u KTUNE_DB "$dev/ktune_consumer" 2>&1 | tee "$out/consumer.log" || status=1
KTUNE_PACKAGE_DIR=$packages "$dev/ktune_runtime_bench" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/runtime_bench.json" --benchmark_out_format=json 2>&1 | tee "$out/runtime_bench.txt" || status=1
exit $status
