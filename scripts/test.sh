#!/usr/bin/env bash
# Set-up on a fresh machine, build, then every test suite (GPU tests skip where no device is)
# and the sanitized db/dispatch/codegen tests. The fuzzers run separately: scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
build=${KTUNE_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure
# The code that reads files ktune did not write, under ASan+UBSan.
./scripts/sanitize.sh
