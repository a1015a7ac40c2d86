#!/usr/bin/env bash
# Queues a ktune job array (one task per shard of the space: per GPU, or per node with
# --devices all) and, after it, a job that merges the shards' databases, writes the dispatch
# header and a report (docs/slurm.md). Running it again with the same arguments resumes every
# shard (after a cancelled or failed task, say) and merges again.
#   scripts/slurm/submit.sh --dir DIR --tasks N [--partition P] [--gpus-per-task G] [--time T]
#                           [--sbatch "ARGS"] -- VERB ARGS...
#   scripts/slurm/submit.sh --dir /shared/tune/h100 --tasks 8 --gpus-per-task 1 --partition gpu \
#     -- sweep --kernel mla_decode --space default
# VERB ARGS is a ktune command line without --db, --shard and --resume, which each task adds:
# `sweep ...` (on the task's GPUs) or `compile --arch ARCH ...` (compile-only runs, no GPU).
# $KTUNE names the ktune executable (default: build/ktune of this checkout); it and DIR must be
# at the same path on every node. Prints the two job ids.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '6,8p' "$0" >&2; exit 2; }
dir="" tasks="" partition="" gpus="" time_limit="" extra=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --tasks) tasks=$2; shift 2 ;;
    --partition) partition=$2; shift 2 ;;
    --gpus-per-task) gpus=$2; shift 2 ;;
    --time) time_limit=$2; shift 2 ;;
    --sbatch) extra=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "submit.sh: unknown option $1" >&2; usage ;;
  esac
done
[ -n "$dir" ] && [ -n "$tasks" ] && [ $# -gt 0 ] || usage
[[ "$tasks" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: --tasks $tasks: expected a positive count" >&2; exit 2; }
verb=$1
kernel=""
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = --kernel ]; then j=$((i + 1)); kernel=${!j:-}; fi
done
[ -n "$kernel" ] || { echo "submit.sh: the ktune command needs --kernel FAMILY" >&2; exit 2; }
ktune=${KTUNE:-$here/../../build/ktune}
ktune=$(cd "$(dirname "$ktune")" && pwd)/$(basename "$ktune")
[ -x "$ktune" ] || { echo "submit.sh: no ktune executable at $ktune (build it, or set KTUNE)" >&2; exit 2; }
mkdir -p "$dir/logs"
dir=$(cd "$dir" && pwd)

common=(--parsable --export="ALL,KTUNE=$ktune")
[ -n "$partition" ] && common+=(--partition "$partition")
[ -n "$time_limit" ] && common+=(--time "$time_limit")
# shellcheck disable=SC2206  # --sbatch holds several words on purpose
[ -n "$extra" ] && common+=($extra)
array_opts=(--array "0-$((tasks - 1))" --output "$dir/logs/shard-%a.out")
[ -n "$gpus" ] && array_opts+=(--gpus-per-task "$gpus")
array=$(sbatch "${common[@]}" "${array_opts[@]}" "$here/shard.sbatch" "$dir" "$@")
array=${array%%;*}
codegen=codegen
[ "$verb" = compile ] && codegen=no-codegen
merge=$(sbatch "${common[@]}" --dependency "afterok:$array" --kill-on-invalid-dep=yes \
  --output "$dir/logs/merge.out" "$here/merge.sbatch" "$dir" "$kernel" "$tasks" "$codegen")
merge=${merge%%;*}
echo "submit: job array $array ($tasks tasks), then merge job $merge; results in $dir"
echo "$array $merge" >"$dir/jobs"
