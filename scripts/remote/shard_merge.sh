#!/usr/bin/env bash
# On a GPU machine over a .gpu-bundle/ (scripts/remote/pack.sh): the smoke space of FAMILY swept
# once unsharded, then as two shards in two processes on device 0 at once merged with `ktune
# merge`, then with `--devices 0` (the node path end to end). The merged and the node database
# must hold the same keys and rows (key, config, status) as the unsharded one, and winners of the
# same configs; where a winner differs, its median in the unsharded database must be within the
# screening factor (1.25x) of that key's best there (two configs that close swap places between
# sweeps, the more so with two processes sharing the GPU): timings are compared for plausibility
# only. Logs and the three databases go to $out; exits non-zero on a difference.
#   scripts/remote/shard_merge.sh [FAMILY]        (default: mla_decode)
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
family=${1:-mla_decode}
sweep=("$KTUNE" sweep --kernel "$family" --space smoke --device 0)
rm -f "$out"/shard_merge_*.db*
log() { echo "shard_merge: $*" | tee -a "$out/shard_merge.log"; }
start=$SECONDS
"${sweep[@]}" --db "$out/shard_merge_one.db" >"$out/shard_merge_one.log" 2>&1 || { tail "$out/shard_merge_one.log"; exit 1; }
log "unsharded: $((SECONDS - start)) s"
start=$SECONDS
"${sweep[@]}" --shard 0/2 --db "$out/shard_merge_s0.db" >"$out/shard_merge_s0.log" 2>&1 &
first=$!
"${sweep[@]}" --shard 1/2 --db "$out/shard_merge_s1.db" >"$out/shard_merge_s1.log" 2>&1 || { tail "$out/shard_merge_s1.log"; exit 1; }
wait "$first" || { tail "$out/shard_merge_s0.log"; exit 1; }
"$KTUNE" merge --db "$out/shard_merge_merged.db" "$out/shard_merge_s0.db" "$out/shard_merge_s1.db" | tee -a "$out/shard_merge.log"
log "two shards at once, merged: $((SECONDS - start)) s"
start=$SECONDS
"$KTUNE" sweep --kernel "$family" --space smoke --devices 0 --db "$out/shard_merge_node.db" >"$out/shard_merge_node.log" 2>&1 ||
  { tail "$out/shard_merge_node.log"; exit 1; }
log "--devices 0: $((SECONDS - start)) s"
python3 - "$out" <<'PY' | tee -a "$out/shard_merge.log"
import sqlite3, sys
out = sys.argv[1]
def load(name):
    c = sqlite3.connect(f"file:{out}/shard_merge_{name}.db?mode=ro", uri=True)
    rows = sorted(c.execute("SELECT key, config, status FROM measurements"))
    medians = {(k, cf): m for k, cf, m in c.execute("SELECT key, config, median_us FROM measurements WHERE status = 'ok'")}
    winners = {k: (cf, m) for k, cf, m in c.execute("SELECT key, config, median_us FROM winners")}
    runs = c.execute("SELECT count(*) FROM runs").fetchone()[0]
    return rows, medians, winners, runs
one_rows, one_medians, one_winners, _ = load("one")
failed = False
for name in ("merged", "node"):
    rows, medians, winners, runs = load(name)
    keys, one_keys = {r[0] for r in rows}, {r[0] for r in one_rows}
    if keys != one_keys:
        print(f"{name}: keys differ: only there {sorted(keys - one_keys)[:3]}, only unsharded {sorted(one_keys - keys)[:3]}")
        failed = True
    if rows != one_rows:
        diff = sorted(set(rows) ^ set(one_rows))
        print(f"{name}: {len(diff)} rows (key, config, status) differ, e.g. {diff[:3]}")
        failed = True
    same = swapped = 0
    for key, (config, median) in winners.items():
        if key not in one_winners:
            print(f"{name}: winner of {key} has no unsharded winner"); failed = True; continue
        best_config, best = one_winners[key]
        if config == best_config:
            same += 1
            continue
        there = one_medians.get((key, config))
        if there is None or there > 1.25 * best:
            print(f"{name}: winner of {key} is {config} ({median:.2f} us); unsharded: {best_config} ({best:.2f} us), "
                  f"where {config} took {there} us"); failed = True
        else:
            swapped += 1
    print(f"{name}: {runs} run(s), {len(keys)} keys, {len(rows)} rows; winners: {same} the same config, "
          f"{swapped} a config within 1.25x of the unsharded best")
print("shard_merge:", "FAILED" if failed else "ok")
sys.exit(1 if failed else 0)
PY
