#!/usr/bin/env bash
# Packs a Release build for a GPU machine that has no build tools: on the build machine (no GPU
# needed), copies into .gpu-bundle/ (ignored by git; copy it to the GPU machine beside a checkout
# of the same tree) the ktune binary, the GPU test and benchmark executables, the shared libraries
# a bare CUDA image lacks, and .gpu-bundle/cache: every program of each family's smoke and
# default spaces compiled for the GPU's arch (KTUNE_DEVICE_ARCH, default sm_90a), which
# scripts/remote/env.sh seeds the GPU machine's code-object cache with, so that its JIT compiles
# nothing the build machine already did (KTUNE_PACK_CACHE=0 skips it).
# Then, on the GPU machine: scripts/remote/check.sh, suites.sh, default_sweep.sh or targets.sh.
#   KTUNE_BUILD_DIR=build scripts/remote/pack.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KTUNE_BUILD_DIR:-build}
rm -rf .gpu-bundle && mkdir -p .gpu-bundle/lib
cp "$build/ktune" .gpu-bundle/
# Of the tests, only what needs the GPU: the bundle stays small enough to copy quickly.
for t in "$build"/tests/ktune_gpu_tests "$build"/tests/ktune_*_bench; do
  [ -x "$t" ] && cp "$t" .gpu-bundle/
done
# Libraries a bare CUDA image lacks (it has libstdc++, libsqlite3.so.0 and libfmt.so.9).
for exe in .gpu-bundle/ktune .gpu-bundle/ktune_*; do
  ldd "$exe" | awk '/=>/ {print $3}' | grep -E 'benchmark|SQLiteCpp|tomlplusplus' || true
done | sort -u | xargs -r -I{} cp -L {} .gpu-bundle/lib/
if [ "${KTUNE_PACK_CACHE:-1}" != 0 ]; then
  for family in mla_decode qk_rope_cache; do
    for space in smoke default; do
      "$build/ktune" compile --kernel "$family" --space "$space" --arch "${KTUNE_DEVICE_ARCH:-sm_90a}" \
        --cache-dir .gpu-bundle/cache | tail -n 1
    done
  done
fi
du -sh .gpu-bundle
