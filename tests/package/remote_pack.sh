#!/usr/bin/env bash
# Packs the runtime's package tests for a GPU machine: on the build machine (no GPU needed), builds
# the runtime's tests and benchmark, installs the ktune CMake package into .gpu-bundle/pkg/prefix
# (every package the runtime compiles in, under share/ktune/<family>-<arch>), builds the
# out-of-tree consumer against it and gathers what the GPU machine needs in .gpu-bundle/pkg/ (run
# scripts/remote/pack.sh first: it empties .gpu-bundle/), the test-only gfx90a fixture package
# included. Then, on the GPU machine: tests/package/remote_run.sh.
#   KTUNE_BUILD_DIR (default build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KTUNE_BUILD_DIR:-build}
out=.gpu-bundle/pkg
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
# Libraries a bare CUDA image lacks (it has libstdc++ and libsqlite3.so.0).
ldd "$out/ktune_runtime_bench" | awk '/=>/ {print $3}' | grep -E 'benchmark' | xargs -r -I{} cp -L {} "$out/lib/"
du -sh "$out"
