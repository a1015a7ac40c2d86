#!/usr/bin/env bash
# scripts/check_results_layout.sh: the committed results/ passes; a copy of it passes; the same copy
# with one file of each kind that belongs in experiments/ planted fails, naming that file.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check=$here/scripts/check_results_layout.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "results_layout_test: $*"; exit 1; }

"$check" "$here/results" || fail "the committed results/ has files outside the allowlist (above)"
cp -r "$here/results" "$tmp/results"
"$check" "$tmp/results" >/dev/null || fail "a copy of results/ does not pass"

for planted in nvidia-h200/mla_decode_cluster_merge.patch nvidia-h200/mla_decode_two_ctas_ab.md \
               nvidia-h200/profiles/mla_decode_ncu.txt nvidia-h200/mla_decode_old.sql \
               nvidia-h200/default/mla_decode_ab.jsonl nvidia-h200/mla_decode_report.html \
               nvidia-h200/default/mla_decode_diff_old.md notes.md; do
  mkdir -p "$(dirname "$tmp/results/$planted")"
  touch "$tmp/results/$planted"
  out=$("$check" "$tmp/results") && fail "planted $planted, but the check passed"
  grep -qF "$planted" <<<"$out" || fail "planted $planted, but the check did not name it: $out"
  rm "$tmp/results/$planted"
done
"$check" "$tmp/results" >/dev/null || fail "the copy does not pass again once the planted files are gone"
echo "results_layout_test: ok"
