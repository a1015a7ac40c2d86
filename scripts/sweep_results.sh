#!/usr/bin/env bash
# On a machine with a GPU: sweeps SPACE (default: smoke) of every family (scripts/families.sh) into a fresh database
# and commits-ready text under results/<device>/: the SQL dump (diffable, `sqlite3 x.db < dump`
# restores it), the winners table, and the generated dispatch header.
#   scripts/sweep_results.sh [SPACE] [extra sweep flags...]
# KTUNE_FAMILIES narrows the families (scripts/families.sh). KTUNE_RESULTS_TRIM=screened leaves
# out of the dump the ok rows that screening ruled out (slower than 1.25x their key's best when
# measured, so never a winner): they are most rows of a large space (the default one), and the
# README keeps their count and the tuning gain computed with them. KTUNE_SWEEP_DB_DIR keeps the
# databases (DIR/<family>.db) instead of fresh temporary ones, so that a sweep stopped by --budget
# continues in a later call with --resume.
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
  if [ -n "${KTUNE_SWEEP_DB_DIR:-}" ]; then mkdir -p "$KTUNE_SWEEP_DB_DIR"; db=$KTUNE_SWEEP_DB_DIR/$family.db
  else db=$(mktemp -d)/$family.db; fi
  cmd=("$ktune" sweep --kernel "$family" --space "$space" --db "$db" "$@")
  echo "sweep_results: ${cmd[*]}"
  "${cmd[@]}"
  src=$db  # what the text below is made of
  if [ "${KTUNE_RESULTS_TRIM:-}" = screened ]; then
    gain=$("$ktune" query --db "$db" --kernel "$family" --gain --format table)
    src=$(mktemp -d)/$family.db  # the sweep's own database keeps every row, for --resume
    cp "$db" "$src"
    trimmed=$(python3 - "$src" <<'EOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
total = c.execute("SELECT count(*) FROM measurements").fetchone()[0]
n = c.execute("DELETE FROM measurements WHERE status = 'ok' AND detail LIKE 'screened:%'").rowcount
c.commit()
c.execute("VACUUM")
print(f"{n} of the run's {total} measurements were screened out and are left out of the dump")
EOF
)
  fi
  dump_db "$src" >"$out/$family.sql"
  "$ktune" query --db "$src" --kernel "$family" --winners --format table >"$out/${family}_winners.txt"
  "$ktune" gaps --db "$src" --kernel "$family" --format table >"$out/${family}_gaps.txt"
  "$ktune" codegen --db "$src" --kernel "$family" --out "$out/${family}_dispatch.hpp"
  {
    echo "# $family on $device"
    echo
    echo "Produced on $(date -u +%Y-%m-%dT%H:%MZ) by:"
    echo
    echo '```'
    env_used=$(for v in KTUNE_FAMILIES KTUNE_RESULTS_TRIM KTUNE_SWEEP_DB_DIR; do
      [ -n "${!v:-}" ] && printf '%s=%q ' "$v" "${!v}"; done; true)
    echo "${env_used}scripts/sweep_results.sh $space $*"
    echo "${cmd[*]}" | sed "s|$db|$family.db|"
    echo '```'
    echo
    echo "Device:"
    echo
    echo '```'
    "$ktune" devices
    echo '```'
    if [ "${KTUNE_RESULTS_TRIM:-}" = screened ]; then
      echo
      echo "$trimmed. Tuning gain over every row of the run (\`ktune query --gain\`):"
      echo
      echo '```'
      echo "$gain"
      echo '```'
    fi
  } >"$out/${family}_README.md"
done
echo "sweep_results: wrote $out"
