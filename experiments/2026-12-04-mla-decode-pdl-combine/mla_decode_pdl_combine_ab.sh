#!/usr/bin/env bash
# On the GPU machine: the A/B that measured the split-KV combine launched to overlap the main
# kernel's tail (a programmatic dependent launch: Context::launch_dependent, the combine's
# wait_for_previous_kernel()) while it was a probe: main's ktune ($KTUNE, a carried build/ of
# 64cb628 from scripts/remote/pack.sh) against the probe's in build/probe/ktune (64cb628 with the
# change, its ktune target built here), in alternating rounds (bench_ab.py, one round each), every
# bench verified; then every split config of the smoke space swept (and verified) by the probe's
# ktune. Writes $OUT/pdl_combine_ab.{md,jsonl} and $OUT/pdl_combine_smoke.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
probe_ktune=build/probe/ktune
[ -x "$probe_ktune" ] || { echo "mla_decode_pdl_combine: no $probe_ktune" >&2; exit 1; }
v=$(mktemp -d)
wgmma="rows=64 keys=64 threads=384 stages=2 math=wgmma"
for k in "h12_l4c|--heads 12 --block-len 4 --causal 1 --batch 32 --kv-dtype bf16|$wgmma split=1" \
         "h12_l4f|--heads 12 --block-len 4 --causal 0 --batch 32 --kv-dtype bf16|$wgmma split=1" \
         "h64_l2_b8|--heads 64 --block-len 2 --causal 1 --batch 8 --kv-dtype bf16|$wgmma split=2" \
         "h64_l2_b1|--heads 64 --block-len 2 --causal 1 --batch 1 --kv-dtype bf16|$wgmma split=2" \
         "fp8_b32|--heads 16 --block-len 1 --causal 1 --batch 32 --kv-dtype fp8_e4m3fn|rows=16 keys=64 threads=384 stages=2 split=1 math=wgmma_t" \
         "h16_l1_b2_64k|--heads 16 --block-len 1 --causal 1 --batch 2 --ctx 65536 --kv-dtype bf16|rows=16 keys=64 threads=256 stages=5 split=2 math=mma" \
         "h16_l4_b128 (no split: control)|--heads 16 --block-len 4 --causal 1 --batch 128 --kv-dtype bf16|$wgmma split=0"; do
  IFS='|' read -r name key config <<<"$k"
  ctx=--ctx\ 8192; [[ "$key" == *--ctx* ]] && ctx=
  echo "$name | --kernel mla_decode $ctx $key --config '$config'"
done >"$v/cases.txt"
for round in 1 2 3; do
  for side in main probe; do
    ktune=$KTUNE; [ "$side" = probe ] && ktune=$probe_ktune
    timeout 200 ./scripts/bench_ab.py "$v/cases.txt" --rounds 1 --ktune "$ktune" --json-out "$v/$side.$round.jsonl" >/dev/null
  done
done
python3 - "$v" "$out/pdl_combine_ab" <<'PY'
import glob, json, os, statistics, sys
d, stem = sys.argv[1], sys.argv[2]
times, order = {}, []
with open(stem + ".jsonl", "w") as out:
    for path in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
        side, rnd = os.path.basename(path).split(".")[:2]
        for line in open(path):
            rec = json.loads(line)
            rec["round"], rec["side"] = int(rnd), side
            out.write(json.dumps(rec) + "\n")
            if rec["label"] not in order:
                order.append(rec["label"])
            ok = rec["result"] is not None and rec["result"].get("verified") is True
            times.setdefault((rec["label"], side), []).append(rec["result"]["median_us"] if ok else None)
with open(stem + ".md", "w") as md:
    md.write("3 alternating rounds of `bench_ab.py --rounds 1`, main's ktune then the probe's; µs, median of the rounds\n\n")
    md.write("| case | main | probe | probe / main | main's rounds | probe's rounds |\n|---|---|---|---|---|---|\n")
    for label in order:
        a, b = times[(label, "main")], times[(label, "probe")]
        if None in a or None in b:
            md.write(f"| {label} | failed or unverified | | | {a} | {b} |\n")
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        md.write(f"| {label} | {ma:.1f} | {mb:.1f} | {mb / ma:.3f} | {', '.join(f'{x:.1f}' for x in a)} | "
                 f"{', '.join(f'{x:.1f}' for x in b)} |\n")
PY
cat "$out/pdl_combine_ab.md"
timeout 200 "$probe_ktune" sweep --kernel mla_decode --space smoke --where split=1,2 --db "$v/smoke_split.db" \
  --budget 150 --timeout 20 2>&1 | grep -E "^sweep:" | tee "$out/pdl_combine_smoke.txt"
