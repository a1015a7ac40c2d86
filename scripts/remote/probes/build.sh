#!/usr/bin/env bash
# Here (no GPU): builds a probe, a kernel change kept as a patch until a GPU machine has timed it
# against main, so that one run on that machine times both. Applies the patch to a worktree of
# HEAD, builds it (Release) and puts its ktune and GPU tests in .gpu-bundle/probe/, beside main's
# packed build (run scripts/remote/pack.sh first: it empties .gpu-bundle/).
#   scripts/remote/probes/build.sh PATCH      a patch file, or NAME for experiments/*/NAME.patch
set -euo pipefail
cd "$(dirname "$0")/../../.."
source scripts/remote/probes/patch_path.sh
patch=$(probe_patch "${1:?usage: build.sh PATCH|NAME}")
[ -x .gpu-bundle/ktune ] || { echo "build.sh: no .gpu-bundle/ktune: run scripts/remote/pack.sh first" >&2; exit 1; }
name=$(basename "$patch" .patch)
tree=${KTUNE_PROBE_TREE:-/tmp/ktune-probe-$name}
[ -d "$tree" ] || git worktree add --detach "$tree" HEAD
git -C "$tree" reset -q --hard "$(git rev-parse HEAD)"
git -C "$tree" apply "$patch"
KTUNE_BUILD_DIR=build "$tree/scripts/build.sh"
mkdir -p .gpu-bundle/probe
cp "$tree/build/ktune" "$tree/build/tests/ktune_gpu_tests" .gpu-bundle/probe/
echo "build.sh: .gpu-bundle/probe/ holds $name (on $(git rev-parse --short HEAD))"
