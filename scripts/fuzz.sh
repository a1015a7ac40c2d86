#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan, coverage-guided) into
# build-fuzz/ (only the sources they reach: well under a minute on 2 cores) and runs each for a
# bounded time on its seed corpus; prints the executions per target. scripts/test.sh runs it. A crash, a sanitizer report, an escaped exception other than ktune::Error or an input
# slower than the per-input timeout fails the script and leaves the input in build-fuzz/artifacts/.
#   KTUNE_FUZZ_SECONDS  time per target (default 60)
#   KTUNE_FUZZ_CXX      the compiler (default clang++-14)
#   KTUNE_FUZZ_BUILD_DIR, KTUNE_JOBS
set -euo pipefail
cd "$(dirname "$0")/.."
build=${KTUNE_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${KTUNE_FUZZ_SECONDS:-60}
cxx=${KTUNE_FUZZ_CXX:-clang++-14}
targets=(fuzz_space fuzz_db_open fuzz_code_text)
declare -A dict=([fuzz_space]=tests/fuzz/space.dict)

command -v "$cxx" >/dev/null || { echo "fuzz: $cxx not found (Debian: clang-14 libclang-rt-14-dev, see scripts/deps.sh)" >&2; exit 1; }
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DKTUNE_BUILD_FUZZERS=ON -DKTUNE_BUILD_TESTS=OFF -DKTUNE_BUILD_BENCHMARKS=OFF >/dev/null
grep -q '^KTUNE_HAVE_LIBFUZZER:INTERNAL=1' "$build/CMakeCache.txt" ||
  { echo "fuzz: $cxx cannot link libFuzzer (Debian: libclang-rt-14-dev)" >&2; exit 1; }
build_start=$SECONDS
cmake --build "$build" -j"${KTUNE_JOBS:-$(nproc)}" --target "${targets[@]}"
echo "fuzz: built ${targets[*]} in $((SECONDS - build_start)) s"

for t in "${targets[@]}"; do
  # New inputs go to build-fuzz/corpus/<target> (kept between runs); the committed seeds are read only.
  corpus=$build/corpus/$t
  artifacts=$build/artifacts
  log=$build/$t.log
  mkdir -p "$corpus" "$artifacts"
  args=(-max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/$t-")
  [ -n "${dict[$t]:-}" ] && args+=(-dict="${dict[$t]}")
  if ! "$build/tests/fuzz/$t" "${args[@]}" "$corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "fuzz: $t FAILED; the input is in $artifacts/ (reproduce: $build/tests/fuzz/$t <input>)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
  echo "fuzz: $t: $runs executions in ${secs:-?} s, $cov, corpus $(ls "$corpus" | wc -l) new + $(ls "tests/fuzz/corpus/$t" | wc -l) seed inputs, no failure"
done
