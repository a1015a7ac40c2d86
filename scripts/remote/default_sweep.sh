#!/usr/bin/env bash
# Sweeps a family's default space on a GPU machine in parts, over a .gpu-bundle/
# (scripts/remote/pack.sh): each run sweeps for at most BUDGET_SECONDS (for machines whose commands
# run under a time limit shorter than the whole sweep), continuing from the committed checkpoint
# (results/<device>/default-in-progress/<family>.sql.xz, the whole database as SQL) when there is
# one, and leaves the results text of everything swept so far and a new checkpoint in $out
# (scripts/remote/env.sh):
#   $out/<device>/<family>{.sql,_README.md,_winners.txt,_gaps.txt,_dispatch.hpp}  (sweep_results.sh;
#                          results/<device>/default/ once the sweep is complete)
#   $out/<family>.sql.xz   the new checkpoint: commit it in place of the old one until the sweep
#                          reports no candidate "not started", then delete it and commit the
#                          results text
#   $out/sweep.log
#   scripts/remote/default_sweep.sh [FAMILY] [BUDGET_SECONDS]   (defaults: mla_decode, 470)
set -uo pipefail
cd "$(dirname "$0")/../.."
family=${1:-mla_decode}; budget=${2:-470}
source scripts/remote/env.sh
device=$("$KTUNE" devices --no-bandwidth --first-slug)
[ -n "$device" ] || { echo "default_sweep: no GPU here ($KTUNE devices finds none)" >&2; exit 1; }
checkpoint=results/$device/default-in-progress/$family.sql.xz
dbdir=$(mktemp -d)
resume=()
if [ -f "$checkpoint" ]; then
  # Python, not the sqlite3 shell: the GPU machine has only the library.
  # A dump cut short (a run that ran out of time while writing it) must stop the run, not start
  # the sweep over: the committed checkpoint is the last whole one.
  python3 -c 'import lzma, sqlite3, sys
try:
    sqlite3.connect(sys.argv[2]).executescript(lzma.open(sys.argv[1], "rt").read())
except (lzma.LZMAError, EOFError, sqlite3.Error) as e:
    sys.exit(f"default_sweep: cannot load the checkpoint {sys.argv[1]}: {e} (a dump cut short? "
             "restore the committed one with git, or delete it to start the sweep over)")' \
    "$checkpoint" "$dbdir/$family.db" || exit 1
  resume=(--resume)
fi
KTUNE_FAMILIES=$family KTUNE_SWEEP_DB_DIR=$dbdir KTUNE_RESULTS_TRIM=screened KTUNE_RESULTS_DIR=$out \
  ./scripts/sweep_results.sh default "${resume[@]}" --budget "$budget" --timeout 30 >"$out/sweep.log" 2>&1
rc=$?
# xz's fastest preset: a checkpoint lives a run or two, and its dump must finish before the run's
# time limit (the highest preset takes several times as long for a file a fifth smaller). Written
# under another name and renamed when whole, so that a run cut off while dumping brings back no
# checkpoint rather than a truncated one.
python3 -c 'import lzma, sqlite3, sys
with lzma.open(sys.argv[2], "wt", preset=1) as f:
    for line in sqlite3.connect(sys.argv[1]).iterdump(): f.write(line + "\n")' "$dbdir/$family.db" "$out/$family.sql.xz.part" &&
  mv "$out/$family.sql.xz.part" "$out/$family.sql.xz"
grep -E "^(run|sweep|time):|budget of|nothing left" "$out/sweep.log"
echo "default_sweep: sweep_results exit $rc; checkpoint $out/$family.sql.xz"
exit $rc
