#!/usr/bin/env bash
# Here (no GPU): copies what the GPU machine needs from a Release build into .devbin/ (ignored by
# git, carried to the device with the device tool's `carry`): the ktune binary, the test and
# benchmark executables, and the shared libraries the device image lacks.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${KTUNE_BUILD_DIR:-build}
rm -rf .devbin && mkdir -p .devbin/lib
cp "$build/ktune" .devbin/
for t in "$build"/tests/ktune_*_tests "$build"/tests/ktune_*_bench; do
  [ -x "$t" ] && cp "$t" .devbin/
done
# Libraries outside the device image (it has libstdc++, libsqlite3.so.0 and libfmt.so.9).
for exe in .devbin/ktune .devbin/ktune_*; do
  ldd "$exe" | awk '/=>/ {print $3}' | grep -E 'benchmark|SQLiteCpp|tomlplusplus' || true
done | sort -u | xargs -r -I{} cp -L {} .devbin/lib/
# (git rev-parse: in a worktree .git is a file, and the exclude file is the main checkout's.)
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
grep -qx '/.devbin/' "$exclude" 2>/dev/null || echo '/.devbin/' >>"$exclude"
du -sh .devbin
