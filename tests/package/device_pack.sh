#!/usr/bin/env bash
# Here (no GPU): builds the runtime's tests and benchmark, installs the ktune CMake package into
# .devbin/pkg/prefix (every package the runtime compiles in, under share/ktune/<family>-<arch>),
# builds the out-of-tree consumer against it and gathers what the GPU machine needs in .devbin/pkg/
# (ignored by git: carry .devbin with the device tool; run scripts/device/pack.sh first, it empties
# .devbin), the test-only gfx90a fixture package included. Then, there: tests/package/device_run.sh.
#   KTUNE_BUILD_DIR (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KTUNE_BUILD_DIR:-build}
out=.devbin/pkg
cmake --build "$build" -j2 --target ktune_runtime ktune_package_tests ktune_runtime_bench
rm -rf "$out" "$build/consumer"
cmake --install "$build" --prefix "$PWD/$out/prefix" >/dev/null
cmake -S tests/package/consumer -B "$build/consumer" -DCMAKE_PREFIX_PATH="$PWD/$out/prefix" >/dev/null
cmake --build "$build/consumer" >/dev/null
cp "$build/consumer/ktune_consumer" "$build/tests/ktune_package_tests" "$build/tests/ktune_runtime_bench" "$out/"
if [ -d "$build/tests/fixture_packages" ]; then
  mkdir -p "$out/fixture"
  cp -r "$build/tests/fixture_packages/"*/ "$out/fixture/"
fi
mkdir -p "$out/lib"
# Libraries outside the device image (it has libstdc++ and libsqlite3.so.0).
ldd "$out/ktune_runtime_bench" | awk '/=>/ {print $3}' | grep -E 'benchmark' | xargs -r -I{} cp -L {} "$out/lib/"
du -sh "$out"
