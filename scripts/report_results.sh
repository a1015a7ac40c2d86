#!/usr/bin/env bash
# Writes, from the committed dumps results/<device>/SPACE/<family>.sql, what `ktune report` and
# `ktune diff` make of them, beside each dump:
#   <family>_report.html                   ktune report of the sweep
#   <family>_diff_<other device>.txt       ktune diff: this device's sweep (A) against the other
#                                          device's sweep of the same space and family (B)
#   <family>_diff_kv_dtype_bf16_<fp8>.txt  ktune diff --pair kv_dtype=bf16,<fp8>: each fp8 cache
#                                          type against bf16, key by key (families keyed by kv_dtype)
# No device needed. The databases are named <device>.db in the outputs.
#   scripts/report_results.sh [SPACE]      (default: default)
set -euo pipefail
cd "$(dirname "$0")/.."
space=${1:-default}
root=$PWD
ktune=${KTUNE:-$root/${KTUNE_BUILD_DIR:-build}/ktune}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source scripts/families.sh
for family in "${families[@]}"; do
  devices=()
  for dump in results/*/"$space"/"$family".sql; do
    [ -f "$dump" ] || continue
    device=$(basename "$(dirname "$(dirname "$dump")")")
    mkdir -p "$work/$family"
    python3 -c 'import sqlite3, sys; sqlite3.connect(sys.argv[2]).executescript(open(sys.argv[1]).read())' \
      "$dump" "$work/$family/$device.db"
    devices+=("$device")
  done
  for device in "${devices[@]}"; do
    out=$root/results/$device/$space
    (cd "$work/$family" && "$ktune" -q report --db "$device.db" --out "$out/${family}_report.html")
    for other in "${devices[@]}"; do
      [ "$other" = "$device" ] && continue
      (cd "$work/$family" && "$ktune" diff --db "$device.db" --db "$other.db") >"$out/${family}_diff_$other.txt"
    done
    if grep -q 'kv_dtype=' "$root/results/$device/$space/$family.sql"; then
      for fp8 in fp8_e4m3fn fp8_e4m3fnuz; do
        (cd "$work/$family" && "$ktune" diff --db "$device.db" --pair "kv_dtype=bf16,$fp8") \
          >"$out/${family}_diff_kv_dtype_bf16_$fp8.txt"
      done
    fi
    echo "report_results: wrote $out/${family}_report.html and its diffs"
  done
done
