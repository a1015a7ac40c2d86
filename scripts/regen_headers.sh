#!/usr/bin/env bash
# Rebuilds each committed results database from its SQL dump, regenerates the dispatch header
# and checks it against the committed one: the committed header must be exactly what codegen
# makes of the committed results. results/<device>/ holds the smoke sweeps, results/<device>/<space>/
# the sweeps of other spaces (the runtime packages the default sweeps of the devices
# KTUNE_RUNTIME_RESULTS names, or their smoke sweeps where a family has no default one).
# A stale dump (swept with other templates than the current ones) is reported and its header is
# not compared: the header carries launch sizes from the templates' geometry, so codegen of the
# current templates need not reproduce what codegen of the swept ones made. (The runtime refuses
# stale results by itself: codegen and package check the template hash.)
set -euo pipefail
cd "$(dirname "$0")/.."
ktune=${KTUNE:-${KTUNE_BUILD_DIR:-build}/ktune}
shopt -s nullglob
dumps=(results/*/*.sql results/*/*/*.sql)
if [ ${#dumps[@]} -eq 0 ]; then
  echo "regen_headers: no committed results (results/*/*.sql) yet"
  exit 0
fi
status=0
for dump in "${dumps[@]}"; do
  dir=$(dirname "$dump"); family=$(basename "$dump" .sql)
  tmp=$(mktemp -d)
  sqlite3 "$tmp/$family.db" <"$dump"
  "$ktune" --quiet migrate --db "$tmp/$family.db"  # a dump of an older schema reads as today's
  if ! "$ktune" codegen --db "$tmp/$family.db" --kernel "$family" --out "$tmp/$family.hpp" 2>"$tmp/err"; then
    if grep -q 'template hash' "$tmp/err"; then
      echo "regen_headers: $dump is stale (templates changed since that sweep; re-run the sweep on a GPU):" \
        "$dir/${family}_dispatch.hpp is not compared"
      cat "$tmp/err"
      rm -rf "$tmp"
      continue
    else
      cat "$tmp/err" >&2; exit 1
    fi
  fi
  if cmp -s "$tmp/$family.hpp" "$dir/${family}_dispatch.hpp"; then
    echo "regen_headers: $dir/${family}_dispatch.hpp is up to date with $dump"
  else
    echo "regen_headers: $dir/${family}_dispatch.hpp differs from what codegen makes of $dump:" >&2
    diff -u "$dir/${family}_dispatch.hpp" "$tmp/$family.hpp" | head -40 >&2 || true
    status=1
  fi
  rm -rf "$tmp"
done
exit $status
