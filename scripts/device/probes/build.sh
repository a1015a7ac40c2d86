#!/usr/bin/env bash
# Here (no GPU): builds a probe, a kernel change kept as a patch until the GPU machine has timed it
# against main, for one call that times both. Applies probes/NAME.patch to a worktree of HEAD,
# builds it (Release) and puts its ktune and GPU tests in .devbin/probe/, next to main's build
# (run scripts/device/pack.sh first: it empties .devbin/).
#   scripts/device/probes/build.sh NAME
set -euo pipefail
cd "$(dirname "$0")/../../.."
name=${1:?usage: build.sh NAME (a patch in scripts/device/probes/)}
patch=$PWD/scripts/device/probes/$name.patch
[ -f "$patch" ] || { echo "build.sh: no probe $patch" >&2; exit 1; }
[ -x .devbin/ktune ] || { echo "build.sh: no .devbin/ktune: run scripts/device/pack.sh first" >&2; exit 1; }
tree=${KTUNE_PROBE_TREE:-/tmp/ktune-probe-$name}
[ -d "$tree" ] || git worktree add --detach "$tree" HEAD
git -C "$tree" reset -q --hard "$(git rev-parse HEAD)"
git -C "$tree" apply "$patch"
KTUNE_BUILD_DIR=build "$tree/scripts/build.sh"
mkdir -p .devbin/probe
cp "$tree/build/ktune" "$tree/build/tests/ktune_gpu_tests" .devbin/probe/
echo "build.sh: .devbin/probe/ holds $name (on $(git rev-parse --short HEAD)); carry .devbin"
