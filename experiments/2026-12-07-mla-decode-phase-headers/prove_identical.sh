#!/usr/bin/env bash
# Whether two template trees give mla_decode the same machine code: builds the code-object caches
# of the default space for sm_90a (NVRTC) and gfx90a (hipRTC) from each tree, compares them kernel
# by kernel with scripts/code_objects_diff.py, and prints each tree's mla_decode template hash (the
# pair that tuner/kernels/mla_decode/equivalent_templates.hpp records when every kernel is
# identical). Run from the root of a ktune checkout with a built ktune:
#   experiments/2026-12-07-mla-decode-phase-headers/prove_identical.sh KTUNE BASE_TEMPLATES NEW_TEMPLATES WORK [JOBS]
# WORK keeps the caches (base-<arch>, new-<arch>), so a second run compiles nothing again; JOBS
# (default 2) is compile's --jobs; SPACE (default "default") the space and filters, e.g.
# SPACE="smoke --heads 16 --block-len 1 --causal 0" for a quick part that holds every variant.
# Exit status: 0 every kernel identical for both arches, 1 not.
set -euo pipefail
[ $# -ge 4 ] || { sed -n 2,11p "$0" >&2; exit 2; }
ktune=$1 base=$2 new=$3 work=$4 jobs=${5:-2}
read -ra space <<<"${SPACE:-default}"
mkdir -p "$work"
# A tree's template hash: codegen of a committed dump under that tree either accepts the dump (the
# tree's hash is that of the dump's runs) or refuses it naming the current template hash.
template_hash() {
  local db="$work/hash.db" out
  rm -f "$db"
  sqlite3 "$db" < results/nvidia-h200/mla_decode.sql
  if out=$("$ktune" --templates "$1" codegen --db "$db" --kernel mla_decode --out "$work/hash.hpp" 2>&1); then
    sqlite3 "$db" "SELECT DISTINCT template_hash FROM runs"
  else
    grep -o 'current template hash [0-9a-f]*' <<<"$out" | awk '{print $4}'
  fi
}
status=0
for arch in sm_90a gfx90a; do
  for side in base new; do
    tree=$base; [ "$side" = new ] && tree=$new
    "$ktune" --templates "$tree" compile --kernel mla_decode --space "${space[@]}" --arch "$arch" --jobs "$jobs" \
      --cache-dir "$work/$side-$arch" | tail -1
  done
  echo "$arch: $(python3 scripts/code_objects_diff.py "$work/base-$arch" "$work/new-$arch" | tail -1)"
  python3 scripts/code_objects_diff.py "$work/base-$arch" "$work/new-$arch" > /dev/null || status=1
done
echo "template hash of mla_decode: base $(template_hash "$base"), new $(template_hash "$new")"
exit $status
