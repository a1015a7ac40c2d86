#!/usr/bin/env bash
# On a machine with a GPU: sweeps SPACE (default: smoke) of every family (scripts/families.sh) into a fresh database
# and commits-ready text under results/<device>/: the SQL dump (diffable, `sqlite3 x.db < dump`
# restores it), the winners table, and the generated dispatch header.
#   scripts/sweep_results.sh [SPACE] [extra sweep flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
space=${1:-smoke}; shift || true
ktune=${KTUNE:-${KTUNE_BUILD_DIR:-build}/ktune}
device=$("$ktune" devices --no-bandwidth --first-slug)
out=${KTUNE_RESULTS_DIR:-results}/$device
mkdir -p "$out"
# The SQL text of a database (sqlite3's .dump; Python's identical-in-effect iterdump where the
# sqlite3 shell is absent, as on the GPU machine).
dump_db() {
  if command -v sqlite3 >/dev/null; then sqlite3 "$1" .dump
  else python3 -c 'import sqlite3,sys; print("\n".join(sqlite3.connect(sys.argv[1]).iterdump()))' "$1"; fi
}
source scripts/families.sh
for family in "${families[@]}"; do
  db=$(mktemp -d)/$family.db
  cmd=("$ktune" sweep --kernel "$family" --space "$space" --db "$db" "$@")
  echo "sweep_results: ${cmd[*]}"
  "${cmd[@]}"
  dump_db "$db" >"$out/$family.sql"
  "$ktune" query --db "$db" --kernel "$family" --winners --format table >"$out/${family}_winners.txt"
  "$ktune" gaps --db "$db" --kernel "$family" --format table >"$out/${family}_gaps.txt"
  "$ktune" codegen --db "$db" --kernel "$family" --out "$out/${family}_dispatch.hpp"
  {
    echo "# $family on $device"
    echo
    echo "Produced on $(date -u +%Y-%m-%dT%H:%MZ) by:"
    echo
    echo '```'
    echo "scripts/sweep_results.sh $space $*"
    echo "${cmd[*]}" | sed "s|$db|$family.db|"
    echo '```'
    echo
    echo "Device:"
    echo
    echo '```'
    "$ktune" devices
    echo '```'
  } >"$out/${family}_README.md"
done
echo "sweep_results: wrote $out"
