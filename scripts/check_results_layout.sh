#!/usr/bin/env bash
# Checks that a results directory (default: results/) holds only what users consume: per device
# folder the tuning results of each kernel family (<family>.sql, _README.md, _winners.txt,
# _gaps.txt, _dispatch.hpp; the same in <device>/<space>/, with the report and diffs of
# scripts/report_results.sh (<family>_report.html, <family>_diff_<what>.txt); a sweep's checkpoint
# <device>/<space>-in-progress/<family>.sql.xz), the current benchmark tables (mla_decode_targets.md
# and .jsonl, mla_decode_vs_flashmla.md, matrix_roofs.md, select_bench.json, runtime_bench.json) and results/README.md.
# Experiment history (A/B tables, probes, patches, profiles) belongs in experiments/. Prints each
# file outside these kinds and exits 1 if there is one.
#   scripts/check_results_layout.sh [DIR]
set -euo pipefail
root=${1:-"$(dirname "$0")/../results"}
[ -d "$root" ] || { echo "check_results_layout: no directory $root" >&2; exit 2; }
unset KTUNE_FAMILIES
source "$(dirname "$0")/families.sh"
fam="($(IFS='|'; echo "${families[*]}"))"
device='[a-z0-9][a-z0-9-]*'
space='[a-z0-9_]+'
result="$fam(\.sql|_README\.md|_winners\.txt|_gaps\.txt|_dispatch\.hpp)"
table='(mla_decode_targets\.md|mla_decode_vs_flashmla\.md|mla_decode_targets\.jsonl|matrix_roofs\.md|select_bench\.json|runtime_bench\.json)'
seen="$fam(_report\.html|_diff_[a-z0-9_-]+\.txt)"
allowed="^(README\.md|$device/$result|$device/$table|$device/$space/$result|$device/$space/$seen|$device/$space-in-progress/$fam\.sql\.xz)$"
bad=0
while IFS= read -r -d '' file; do
  rel=${file#"$root"/}
  if ! [[ $rel =~ $allowed ]]; then
    echo "check_results_layout: not a kind results/ holds: $rel (experiment files go to experiments/<date>-<slug>/)"
    bad=1
  fi
done < <(find "$root" -mindepth 1 \( -type f -o -type l \) -print0 | sort -z)
exit $bad
