#!/usr/bin/env bash
# On the GPU machine, over a carried build/ of main: where math=wgmma's time goes on the
# 64-row targets with main's templates: the kernel whole, its copies alone and its math alone
# (the edits of experiments/2026-12-02-mla-decode-overlap/mla_decode_overlap_probe.md, as template copies run through `--templates`, not
# verified: a variant computes on whatever the ring holds), plus ncu of the whole kernel at h128.
# Writes $OUT/split_time.{md,jsonl} and $OUT/h128_sections.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
v=$(mktemp -d)
for variant in copy_only math_only; do cp -r templates "$v/$variant"; done
# copy only: the ring's copies, waits and first barrier; Q K^T, softmax and P V skipped.
python3 - "$v" <<'PY'
import sys
d = sys.argv[1]
f = "templates/mla_decode/mla_decode_mma.hip"
src = open(f).read()
anchor = "        wg::finish_product(s[0]);\n      } else {\n        queue_copies();\n      }\n    } else {\n      queue_copies();\n    }\n"
assert src.count(anchor) == 1, "copy_only anchor"
open(f"{d}/copy_only/mla_decode/mla_decode_mma.hip", "w").write(src.replace(anchor, anchor + "    if constexpr (WGMMA) continue;\n"))
issue = "          issue_slot(u, ahead[j]);\n"
assert src.count(issue) == 1, "math_only anchor"
open(f"{d}/math_only/mla_decode/mla_decode_mma.hip", "w").write(src.replace(issue, "          (void)0;\n"))
PY
cfg="rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma"
declare -A key=(
  [h128]="--heads 128 --block-len 1 --causal 1 --batch 128"
  [h16_l4]="--heads 16 --block-len 4 --causal 1 --batch 128"
  [h12_l4c]="--heads 12 --block-len 4 --causal 1 --batch 32"
)
cases=$v/cases.txt
for k in h128 h16_l4 h12_l4c; do
  flags="--kernel mla_decode ${key[$k]} --kv-dtype bf16 --ctx 8192 --config '$cfg'"
  echo "$k whole | $flags"
  echo "$k copy_only | $flags --templates $v/copy_only --no-verify"
  echo "$k math_only | $flags --templates $v/math_only --no-verify"
done >"$cases"
timeout 300 ./scripts/bench_ab.py "$cases" --rounds 2 --ktune "$KTUNE" --json-out "$out/split_time.jsonl" | tee "$out/split_time.md"
timeout 200 ncu --target-processes all -k regex:mla_decode_mma -s 3 -c 1 --section SpeedOfLight --section WarpStateStats \
  --section SchedulerStats --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats \
  --section InstructionStats --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' \
  "$KTUNE" bench --kernel mla_decode ${key[h128]} --kv-dtype bf16 --ctx 8192 --config "$cfg" --no-verify \
  >"$out/h128_sections.txt" 2>&1
tail -5 "$out/h128_sections.txt"
