#!/usr/bin/env bash
# Set-up on a fresh machine, the stamp lint and the format check (each with its test), build, then every test suite (GPU
# tests skip where no device is), the job-array scripts on a real Slurm, the sanitized db/dispatch/codegen tests and a short fuzzing run
# of the space parser and the database loader (KTUNE_FUZZ_SECONDS per target, 30 here).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
# No build needed, seconds: dates, hashes, timings or issue numbers in the code fail at once.
./tests/scripts/lint_stamps_test.sh
./scripts/lint_stamps.sh
# The C++ sources in clang-format's style (scripts/format.sh applies it).
./tests/scripts/format_test.sh
./scripts/format.sh --check
./scripts/build.sh
build=${KTUNE_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure
# scripts/slurm/ on a one-node Slurm this test starts and stops (skips, saying why, where it cannot).
./tests/slurm/slurm_test.sh "$build/ktune"
# The code that reads files ktune did not write, under ASan+UBSan.
./scripts/sanitize.sh
# The parsers of files ktune did not write, under libFuzzer (about 40 s to build, then 2 x 30 s).
KTUNE_FUZZ_SECONDS=${KTUNE_FUZZ_SECONDS:-30} ./scripts/fuzz.sh
