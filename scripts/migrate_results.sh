#!/usr/bin/env bash
# Runs `ktune migrate` on every committed results dump (results/<device>/*.sql and
# results/<device>/<space>/*.sql, the ones scripts/regen_headers.sh reads), so that the runs of
# today's kernels recorded under an older template hash (the whole-source hash of older ktune
# builds, or a family's earlier templates of the same machine code: tuner/kernels/<family>/) carry
# today's. Each dump is loaded into a temporary database as regen_headers.sh does; where migrate
# adopted runs, the dump's rows of those runs get their new hash, every other byte left as it was
# (whichever SQLite wrote the dump), and the dispatch header next to it is regenerated with
# codegen as sweep_results.sh makes it. A dump of which nothing was adopted is left untouched. The
# rewritten dump must load as the migrated database, else it is refused (an older schema, which
# migrate changes too: load, migrate and dump that one by hand).
#   scripts/migrate_results.sh
# KTUNE_RESULTS_DIR: the results tree (default results).
set -euo pipefail
cd "$(dirname "$0")/.."
ktune=${KTUNE:-${KTUNE_BUILD_DIR:-build}/ktune}
results=${KTUNE_RESULTS_DIR:-results}
shopt -s nullglob
dumps=("$results"/*/*.sql "$results"/*/*/*.sql)
if [ ${#dumps[@]} -eq 0 ]; then
  echo "migrate_results: no results dumps ($results/*/*.sql) yet"
  exit 0
fi
run_hashes() { sqlite3 "$1" "SELECT id, template_hash FROM runs ORDER BY id"; }
status=0
for dump in "${dumps[@]}"; do
  dir=$(dirname "$dump"); family=$(basename "$dump" .sql)
  tmp=$(mktemp -d)
  sqlite3 "$tmp/$family.db" <"$dump"
  run_hashes "$tmp/$family.db" >"$tmp/before"
  "$ktune" migrate --db "$tmp/$family.db"
  run_hashes "$tmp/$family.db" >"$tmp/after"
  if cmp -s "$tmp/before" "$tmp/after"; then
    echo "migrate_results: $dump: nothing adopted, left as it is"
    rm -rf "$tmp"
    continue
  fi
  # The INSERT of each adopted run has its old hash once; it gets the new one.
  python3 - "$dump" "$tmp/before" "$tmp/after" >"$tmp/$family.sql" <<'PY'
import sys
dump, before, after = sys.argv[1:]
def hashes(path):
    with open(path) as f:
        return dict(line.rstrip("\n").split("|") for line in f if line.strip())
old, new = hashes(before), hashes(after)
changed = {i: (old[i], new[i]) for i in new if old[i] != new[i]}
seen = set()
with open(dump, "rb") as f:
    for line in f:
        for i, (frm, to) in changed.items():
            if line.startswith(f'INSERT INTO "runs" VALUES({i},'.encode()):
                quoted = f"'{frm}'".encode()
                if line.count(quoted) != 1:
                    sys.exit(f"migrate_results: {dump}: run {i}'s row holds {frm} {line.count(quoted)} times")
                line = line.replace(quoted, f"'{to}'".encode())
                seen.add(i)
        sys.stdout.buffer.write(line)
if seen != set(changed):
    sys.exit(f"migrate_results: {dump}: no row of run(s) {sorted(set(changed) - seen)}")
PY
  sqlite3 "$tmp/check.db" <"$tmp/$family.sql"
  if [ "$(sqlite3 "$tmp/check.db" .dump)" != "$(sqlite3 "$tmp/$family.db" .dump)" ]; then
    echo "migrate_results: $dump: migrate changed more than the runs' template hashes (an older schema?);" \
      "left as it is: load, migrate and dump it by hand" >&2
    rm -rf "$tmp"
    status=1
    continue
  fi
  cp "$tmp/$family.sql" "$dump"
  echo "migrate_results: rewrote $dump"
  if "$ktune" codegen --db "$tmp/$family.db" --kernel "$family" --out "$dir/${family}_dispatch.hpp" 2>"$tmp/err"; then
    echo "migrate_results: regenerated $dir/${family}_dispatch.hpp"
  else
    echo "migrate_results: $dir/${family}_dispatch.hpp not regenerated:" >&2
    cat "$tmp/err" >&2
    status=1
  fi
  rm -rf "$tmp"
done
exit $status
