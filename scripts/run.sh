#!/usr/bin/env bash
# The main job. Set-up on a fresh machine, build, then:
#  - with a GPU: sweep the smoke space of every family on it into results/<device>/, dump the
#    database as diffable SQL and generate the dispatch headers from it;
#  - without one: prove every instance of the default space compiles for gfx90a (hipRTC), gfx942
#    and gfx950 (the offline clang) and, where NVRTC is present, sm_90a, then regenerate the dispatch headers from the committed
#    results (results/*/*.sql) and check them against the committed headers.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/deps.sh
./scripts/build.sh
ktune=${KTUNE_BUILD_DIR:-build}/ktune
source scripts/families.sh

gpu_arch=$("$ktune" devices --no-bandwidth --first-arch)

if [ -n "$gpu_arch" ]; then
  echo "run: GPU found ($gpu_arch): sweeping the smoke space"
  ./scripts/sweep_results.sh smoke
  exit 0
fi

echo "run: no GPU on this machine ($("$ktune" devices --no-bandwidth | grep -m1 -i unavailable || echo 'no devices')):"
echo "run: compile-only proof for MI-series (gfx90a, gfx942, gfx950) and sm_90a, then codegen from committed results"
for f in "${families[@]}"; do
  for amd in gfx90a gfx942 gfx950; do
    "$ktune" compile --kernel "$f" --space default --arch "$amd"
  done
  "$ktune" compile --kernel "$f" --space default --arch sm_90a || {
    echo "run: sm_90a compile failed (or NVRTC unavailable); see above" >&2; exit 1; }
done
./scripts/regen_headers.sh
