#!/usr/bin/env bash
# scripts/slurm/ against a real Slurm started on this machine (tests/slurm/cluster.sh: one node,
# its CPUs): a job array of two shards of compile-only runs (no GPU needed) and the dependent
# merge job; the merged database must hold what one unsharded run records. Then one task is
# cancelled: the merge must not run, and submitting again must resume the shards and end
# complete. Skips, saying why, only where Slurm cannot start.
#   tests/slurm/slurm_test.sh [KTUNE]     (default: build/ktune)
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
ktune=$(realpath "${1:-$repo/build/ktune}")
started=$SECONDS
tmp=$(mktemp -d)
# shellcheck source=tests/slurm/cluster.sh
source "$repo/tests/slurm/cluster.sh"
cleanup() {
  slurm_cluster_stop
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "slurm_test: FAIL: $*" >&2
  for log in "$tmp"/*/logs/*.out; do [ -f "$log" ] && { echo "--- $log" >&2; tail -5 "$log" >&2; }; done
  exit 1
}
if ! slurm_cluster_start "$tmp/cluster"; then
  echo "slurm_test: SKIP: Slurm cannot start here: $slurm_why"
  exit 0
fi
export KTUNE=$ktune KTUNE_CACHE_DIR=$tmp/cache

# What each task runs: compile-only runs of a part of the smoke space (16 keys, 4 programs).
space=(--kernel qk_rope_cache --space smoke --where vec=8 --where threads=256 --where layout=token
  --where clamp=0 --where tokens_per_cta=1)
shard_command=(compile --arch gfx90a "${space[@]}")
# What the merged database must hold: the kernels of one unsharded run (which also fills the
# code-object cache the tasks share).
"$ktune" -q "${shard_command[@]}" --db "$tmp/one.db"
kernels() { sqlite3 "$1" "SELECT key, config, kernel, symbol, status FROM compiled_kernels ORDER BY key, config, kernel"; }
runs() { sqlite3 "$1" "SELECT count(*) FROM runs"; }
[ -n "$(kernels "$tmp/one.db")" ] || fail "the unsharded run recorded no kernels"

# The state a job ends in (a dependent job that can never run is cancelled: --kill-on-invalid-dep).
final_state() {
  local state
  for _ in $(seq 1200); do
    state=$(scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2)
    case "$state" in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED)
      echo "$state"; return ;;
    esac
    sleep 0.25
  done
  echo "still ${state:-unknown}"
}
submit() {  # DIR [submit.sh options]
  local dir=$1
  shift
  "$repo/scripts/slurm/submit.sh" --dir "$dir" --tasks 2 "$@" -- "${shard_command[@]}" >/dev/null
  read -r array merge <"$dir/jobs"
}
check_merged() {
  [ "$(kernels "$1/merged.db")" = "$(kernels "$tmp/one.db")" ] ||
    fail "$1/merged.db holds other kernels than the unsharded run"
  [ "$(runs "$1/merged.db")" = 2 ] || fail "$1/merged.db holds $(runs "$1/merged.db") runs, not one per shard"
  grep -q 'ktune merge' "$1/logs/merge.out" || fail "the merge job did not finish"
  [ -f "$1/report.txt" ] || fail "no report"
}

# 1. The array, then the merge after it.
submit "$tmp/whole"
state=$(final_state "$merge")
[ "$state" = COMPLETED ] || fail "the merge job ended $state"
check_merged "$tmp/whole"

# 2. One task cancelled (held at submission, so that it is cancelled before it can finish): the
# merge never runs; the same submission again resumes both shards and ends complete.
submit "$tmp/cancel" --sbatch --hold
scancel "${array}_1"
scontrol release "$array" "$merge" 2>/dev/null || true
state=$(final_state "$merge")
[ "$state" = CANCELLED ] || fail "with a task cancelled, the merge job ended $state, not CANCELLED"
[ ! -e "$tmp/cancel/merged.db" ] || fail "a merge ran although a task was cancelled"
[ "$(final_state "${array}_0")" = COMPLETED ] || fail "task 0 did not complete"
submit "$tmp/cancel"
state=$(final_state "$merge")
[ "$state" = COMPLETED ] || fail "the resubmitted merge job ended $state"
check_merged "$tmp/cancel"
[ "$(runs "$tmp/cancel/shards/shard-0-of-2.db")" = 1 ] || fail "the resubmitted task 0 did not resume its run"
echo "slurm_test: ok: a job array of 2 shards merged as one unsharded run; a cancelled task resumed on resubmission" \
  "($((SECONDS - started)) s)"
