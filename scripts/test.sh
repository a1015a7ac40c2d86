#!/usr/bin/env bash
# Set-up on a fresh machine, build, then every test suite (GPU tests skip where no device is),
# the sanitized db/dispatch/codegen tests and a short fuzz run of the space parser and db loader.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
build=${KTUNE_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure
# The code that reads files ktune did not write, under ASan+UBSan, then fuzzed for a bounded time.
./scripts/sanitize.sh
./scripts/fuzz.sh
