#!/usr/bin/env bash
# Set-up on a fresh machine, build, then every test suite. GPU tests skip where no device is.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
build=${KTUNE_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure
