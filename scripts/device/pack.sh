#!/usr/bin/env bash
# Here (no GPU): copies what the GPU machine needs from a Release build into .devbin/ (ignored by
# git, carried to the device with the device tool's `carry`): the ktune binary, the GPU test and
# benchmark executables, the shared libraries the device image lacks, and .devbin/cache: every
# program of each family's smoke and default spaces compiled for the device's arch
# (KTUNE_DEVICE_ARCH, default sm_90a: the H200), which scripts/device/env.sh seeds the device's
# code-object cache with (about a minute here per template change; KTUNE_PACK_CACHE=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KTUNE_BUILD_DIR:-build}
rm -rf .devbin && mkdir -p .devbin/lib
cp "$build/ktune" .devbin/
# Of the tests, what needs the GPU (the device tool carries 64 MiB, the working tree included).
for t in "$build"/tests/ktune_gpu_tests "$build"/tests/ktune_*_bench; do
  [ -x "$t" ] && cp "$t" .devbin/
done
# Libraries outside the device image (it has libstdc++, libsqlite3.so.0 and libfmt.so.9).
for exe in .devbin/ktune .devbin/ktune_*; do
  ldd "$exe" | awk '/=>/ {print $3}' | grep -E 'benchmark|SQLiteCpp|tomlplusplus' || true
done | sort -u | xargs -r -I{} cp -L {} .devbin/lib/
if [ "${KTUNE_PACK_CACHE:-1}" != 0 ]; then
  for family in mla_decode qk_rope_cache; do
    for space in smoke default; do
      "$build/ktune" compile --kernel "$family" --space "$space" --arch "${KTUNE_DEVICE_ARCH:-sm_90a}" \
        --cache-dir .devbin/cache | tail -n 1
    done
  done
fi
# (git rev-parse: in a worktree .git is a file, and the exclude file is the main checkout's.)
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.devbin/' "$exclude" 2>/dev/null || echo '/.devbin/' >>"$exclude"
du -sh .devbin
