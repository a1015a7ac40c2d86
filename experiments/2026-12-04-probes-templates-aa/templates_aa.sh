#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main): the A/A control of
# the probes' method. Main's own templates, copied and run through `ktune --templates`, against the
# embedded ones: any difference is the method's, not a kernel change's. Writes $OUT/templates_aa.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
copy=$(mktemp -d)
cp -r templates "$copy/"
cases=$copy/cases.txt
wgmma="rows=64 keys=64 threads=384 stages=2 math=wgmma"
bf16="--kernel mla_decode --kv-dtype bf16 --ctx 8192"
keys="h12_l4c|$bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --config '$wgmma split=1'
h64_l2_b1|$bf16 --heads 64 --block-len 2 --causal 1 --batch 1 --config '$wgmma split=2'
h16_l4_b128|$bf16 --heads 16 --block-len 4 --causal 1 --batch 128 --config '$wgmma split=0'
h128|$bf16 --heads 128 --block-len 1 --causal 1 --batch 128 --config '$wgmma split=1'"
# Each key as "main" (embedded) and "probe" (the copy), then in the other order, for the position
# within a round.
ab_cases "$copy/templates" <<<"$keys" >"$cases"
ab_cases "$copy/templates" <<<"$keys" | awk -F ' [|] ' '
  { line = $1 (NR % 2 ? ", second" : ", first") " | " substr($0, length($1) + 4) }
  NR % 2 { held = line; next }
  { print line; print held }' >>"$cases"
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$KTUNE" --json-out "$templates_aa.jsonl" \
  | tee "$templates_aa.md"
