#!/usr/bin/env bash
# Sweeps and times mla_decode's target shapes on a GPU machine: sweeps their keys
# (scripts/bench_cases/mla_decode_targets*) into one database, then times each target's winner
# with `ktune bench --db` into a Markdown table. Runs over a .gpu-bundle/ ($KTUNE from
# scripts/remote/env.sh) or a local build (build/ktune).
#   scripts/remote/targets.sh DIR    (writes DIR/targets.db, DIR/mla_decode_targets.md, .jsonl)
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?usage: targets.sh DIR}; mkdir -p "$dir"
ktune=${KTUNE:-build/ktune}
db=$dir/targets.db
cases=scripts/bench_cases
sweep() { "$ktune" sweep --kernel mla_decode --db "$db" --budget 30 --timeout 20 "$@" | tail -n 4; }
sweep --space $cases/mla_decode_targets_ctx8192.toml --heads 16,128 --block-len 1 --causal 1 --where batch=128
sweep --space $cases/mla_decode_targets_ctx8192.toml --heads 16 --block-len 4 --causal 1 --kv-dtype bf16 --where batch=128
sweep --space $cases/mla_decode_targets_ctx8192.toml --heads 12 --block-len 4 --kv-dtype bf16 --where batch=32
sweep --space $cases/mla_decode_targets_ctx65536.toml --heads 16 --block-len 1 --causal 1 --kv-dtype bf16 --where batch=2
"$ktune" query --db "$db" --gain
./scripts/bench_table.py $cases/mla_decode_targets.txt --kernel mla_decode --db "$db" --ktune "$ktune" \
  --json-out "$dir/mla_decode_targets.jsonl" | tee "$dir/mla_decode_targets.md"
