#!/usr/bin/env bash
# On the GPU machine, over a carried build/ of main: where math=wgmma with its producer
# (threads=384) spends its time on the L 4 targets, from three copies of main's templates run
# through `ktune --templates` (not verified: a variant computes on whatever the ring holds, or on
# nothing):
#   no_tiles:  neither the producer's slot loop nor the math warpgroups' tile loop runs: the launch,
#              the q tile, the epilogue and (split) the combine;
#   copy_only: the math warpgroups wait for each slot and release it at once: the copies alone;
#   math_only: the producer copies the ring's first STAGES slots only and then releases each slot
#              with no copy: the math alone, on what the ring holds.
# 2 rounds of bench_ab, then ncu's duration of each kernel of one launch (main and combine, clocks
# not locked) of the whole and no_tiles kernels at H 12 L 4 B 32.
# Writes $OUT/phase_cost.{md,jsonl} and $OUT/phase_cost_ncu.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
v=$(mktemp -d)
for variant in no_tiles copy_only math_only; do cp -r templates "$v/$variant"; done
python3 - "$v" <<'PY'
import sys
d = sys.argv[1]
f = "templates/mla_decode/mla_decode_mma.hip"
src = open(f).read()
def variant(name, *edits):
    out = src
    for old, new in edits:
        assert out.count(old) == 1, f"{name}: anchor {old!r}"
        out = out.replace(old, new)
    open(f"{d}/{name}/mla_decode/mla_decode_mma.hip", "w").write(out)
slots = "for (int u = 0; u < num_slots; ++u) {"
tiles = "  for (int t = 0; t < num_tiles; ++t) {"
full = "      ws::wait(full + t % STAGES, (t / STAGES) & 1);\n"
variant("no_tiles", (slots, "for (int u = 0; u < 0 * num_slots; ++u) {"), (tiles, "  for (int t = 0; t < 0 * num_tiles; ++t) {"))
variant("copy_only", (full, full.replace(");\n", "), ws::arrive(empty + t % STAGES);\n    if constexpr (WS) continue;\n")))
variant("math_only", ("        issue_slot(u, rows);\n", "        if (u < STAGES) issue_slot(u, rows);\n"))
PY
cfg="rows=64 keys=64 threads=384 stages=2 math=wgmma"
cases=$v/cases.txt
for k in "h12_l4c_8k|--heads 12 --block-len 4 --causal 1 --batch 32 --ctx 8192 --config '$cfg split=1'" \
         "h12_l4c_2k|--heads 12 --block-len 4 --causal 1 --batch 32 --ctx 2048 --config '$cfg split=1'" \
         "h16_l4_8k|--heads 16 --block-len 4 --causal 1 --batch 128 --ctx 8192 --config '$cfg split=0'"; do
  IFS='|' read -r name key <<<"$k"
  flags="--kernel mla_decode --kv-dtype bf16 $key"
  echo "$name whole | $flags"
  for variant in no_tiles copy_only math_only; do echo "$name $variant | $flags --templates $v/$variant --no-verify"; done
done >"$cases"
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 2 --ktune "$KTUNE" --json-out "$out/phase_cost.jsonl" | tee "$out/phase_cost.md"
for t in main no_tiles; do
  templates=(); [ "$t" = main ] || templates=(--templates "$v/$t")
  echo "== $t" >>"$out/phase_cost_ncu.txt"
  timeout 100 ncu --target-processes all --clock-control none -k regex:mla_ -s 6 -c 4 \
    --metrics gpu__time_duration.sum,sm__cycles_active.avg,launch__grid_size \
    "$KTUNE" bench --kernel mla_decode --kv-dtype bf16 --heads 12 --block-len 4 --causal 1 --batch 32 --ctx 8192 \
    --no-verify --config "$cfg split=1" "${templates[@]}" >>"$out/phase_cost_ncu.txt" 2>&1
done
grep -E "^==|mla_|duration|cycles_active|grid_size" "$out/phase_cost_ncu.txt"
