#!/usr/bin/env bash
# On the GPU machine, over a carried build/ of main: ncu of math=wgmma with its producer
# (threads=384) with neither tile loop run (the no_tiles copy of main's templates of
# experiments/2026-12-04-mla-decode-phase-cost/mla_decode_phase_cost.sh: the launch, the q tile, the epilogue), one launch each, clocks not
# locked: at H 12 L 4 B 32 with 4 splits (fp32 partials, then the combine) and without (32 CTAs,
# bf16 rows), and at H 16 L 4 B 128 (no split): sections, and the split case's warp stall samples
# by SASS instruction. Writes $OUT/no_tiles_{h12_split1,h12_split0,h16}.txt and
# $OUT/no_tiles_h12_split1_stalls.csv (ncu's source page, the instructions with a sample).
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
v=$(mktemp -d)
cp -r templates "$v/no_tiles"
python3 - "$v/no_tiles/mla_decode/mla_decode_mma.hip" <<'PY'
import sys
path = sys.argv[1]
src = open(path).read()
for old, new in [("for (int u = 0; u < num_slots; ++u) {", "for (int u = 0; u < 0 * num_slots; ++u) {"),
                 ("  for (int t = 0; t < num_tiles; ++t) {", "  for (int t = 0; t < 0 * num_tiles; ++t) {")]:
    assert src.count(old) == 1, old
    src = src.replace(old, new)
open(path, "w").write(src)
PY
cfg="rows=64 keys=64 threads=384 stages=2 math=wgmma"
h12="--heads 12 --block-len 4 --causal 1 --batch 32"
h16="--heads 16 --block-len 4 --causal 1 --batch 128"
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis
          --section WarpStateStats --section SchedulerStats)
run() { name=$1; shift
  timeout 100 ncu --target-processes all --clock-control none -k regex:mla_ -s 6 -c 2 "${sections[@]}" \
    --metrics gpu__time_duration.sum,sm__cycles_active.avg,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
    "$KTUNE" --templates "$v/no_tiles" bench --kernel mla_decode --kv-dtype bf16 --ctx 8192 --no-verify "$@" \
    >"$out/no_tiles_$name.txt" 2>&1
  grep -E "^  void|Duration|gpu__time|Elapsed Cycles|DRAM Throughput|Memory Throughput|Registers|Warp Cycles Per Issued" \
    "$out/no_tiles_$name.txt"
}
run h12_split1 $h12 --config "$cfg split=1"
run h12_split0 $h12 --config "$cfg split=0"
run h16 $h16 --config "$cfg split=0"
timeout 120 ncu --target-processes all --clock-control none -k regex:mla_decode -s 3 -c 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv \
  "$KTUNE" --templates "$v/no_tiles" bench --kernel mla_decode --kv-dtype bf16 --ctx 8192 --no-verify $h12 \
  --config "$cfg split=1" >"$v/source.csv" 2>&1
python3 - "$v/source.csv" "$out/no_tiles_h12_split1_stalls.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
names = rows[head]
data = [r for r in rows[head + 1:] if len(r) == len(names)]
col = {n: i for i, n in enumerate(names)}
num = lambda r, n: int(float(r[col[n]].replace(",", "") or 0))
stalls = [n for n in names if n.startswith("stall_") and "Not Issued" not in n]
base = int(data[0][0], 16)
out = csv.writer(open(sys.argv[2], "w"))
out.writerow(["offset", "sass", "samples", "executed"] + stalls)
for r in data:
    if num(r, "Warp Stall Sampling (All Samples)") > 0:
        out.writerow([hex(int(r[0], 16) - base), r[1].strip(), num(r, "Warp Stall Sampling (All Samples)"),
                      num(r, "Instructions Executed")] + [num(r, n) for n in stalls])
PY
wc -l "$out/no_tiles_h12_split1_stalls.csv"
