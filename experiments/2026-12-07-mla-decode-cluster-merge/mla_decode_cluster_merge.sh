#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh) with the probe beside it:
#   git apply mla_decode_cluster_merge.patch
#   ninja -C build ktune && mkdir -p build/probe && cp build/ktune build/probe/ktune
#   cp -r templates build/probe/templates && git checkout templates tuner
# The split-KV merge of the H 12 L 4 B 32 target in distributed shared memory (the probe)
# against main's combine kernel, and main without its combine (an unverified bound of what any
# merge could save), 3 rounds; then the probe against main by batch at ctx 8192 (first call:
# the rounds, writing $OUT/cluster_probe.jsonl; second and third calls: the batch scan, printed).
# KTUNE_PROBE_CLUSTER=1: the probe ktune launches the 512-thread kernel in clusters of its 2 to 8
# splits and launches no combine; KTUNE_PROBE_NO_COMBINE=1: it launches no combine at all.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
j=$out/cluster_probe.jsonl; mkdir -p /tmp/errs
cfg="rows=64 keys=64 threads=512 stages=2 split=1 math=wgmma"
bench() {  # side case causal ctx command...
  local side=$1 case=$2 causal=$3 ctx=$4; shift 4
  local line
  line=$("$@" bench --kernel mla_decode --heads 12 --block-len 4 --causal $causal --kv-dtype bf16 --batch 32 \
    --ctx $ctx --json --config "$cfg" $([ $side = nocombine ] && echo --no-verify) 2>>/tmp/errs/${side}_${case}.txt)
  local rc=$?
  [ -n "$line" ] || line=null
  echo "{\"round\":$round,\"side\":\"$side\",\"case\":\"$case\",\"rc\":$rc,\"bench\":$line}" >> "$j"
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(*sys.argv[2:], d and round(d["median_us"],1), d and d.get("verified"), d and round(d["frac_copy_bw"],3))' "$line" $round $side $case rc=$rc
}
for round in 1 2 3; do
  for c in "c8192 1 8192" "f8192 0 8192" "c4096 1 4096" "c16384 1 16384"; do
    set -- $c
    bench main $1 $2 $3 build/ktune
    bench cluster $1 $2 $3 env KTUNE_PROBE_CLUSTER=1 build/probe/ktune --templates build/probe/templates
    bench nocombine $1 $2 $3 env KTUNE_PROBE_NO_COMBINE=1 build/probe/ktune
  done
done
for bt in 8 16 24 28 29 30 31 32; do
  for side in main cluster; do
    if [ $side = main ]; then k="build/ktune"; e=""; else k="build/probe/ktune --templates build/probe/templates"; e="KTUNE_PROBE_CLUSTER=1"; fi
    r=$(env $e $k bench --kernel mla_decode --heads 12 --block-len 4 --causal 1 --kv-dtype bf16 --batch $bt --ctx 8192 \
      --json --no-verify --config "$cfg" 2>&1 | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(round(d["median_us"],1), round(d["p10_us"],1), round(d["p90_us"],1))')
    echo "B=$bt $side $r"
  done
done
