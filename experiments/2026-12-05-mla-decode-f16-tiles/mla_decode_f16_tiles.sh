#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh of main, then
# scripts/remote/probes/build.sh mla_decode_f16_tiles): math=wgmma_ss at 384 threads, whose producer
# warpgroup converts each slot's rows to fp16 in place once they landed (mla_decode_f16_tiles.patch:
# both products read fp16 from shared memory, P is one fp16 term, no conversion in the math
# warpgroups), against math=wgmma with its producer (V^T converted in registers), both through the
# probe's build; on the 32-key tiles also with the warpgroups taking turns at Q K^T
# (mla_decode_f16_seesaw.patch on top, through `--templates`); and math=wgmma_ss at 256 threads with
# main's templates against the patch's (its epilogue staged through shared memory, as wgmma's).
# First the probe's correctness suite (every math path, the new configs among them).
# Writes $OUT/f16_tiles_tests.txt and $OUT/f16_tiles.{md,jsonl}.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/probes/probe_env.sh
bin=build/probe
[ -x "$bin/ktune" ] || { echo "mla_decode_f16_tiles: no $bin/ktune (scripts/remote/probes/build.sh)" >&2; exit 1; }
probe_templates mla_decode_f16_tiles
patch -s -p1 -d "$probe" <mla_decode_f16_seesaw.patch || exit 1
seesaw=$probe/templates
timeout 150 "$bin/ktune_gpu_tests" --gtest_color=no --gtest_filter='*MlaDecodeCorrectness*' >"$out/f16_tiles_tests.txt" 2>&1
echo "correctness suite: exit $?"; tail -n 3 "$out/f16_tiles_tests.txt"
bf16="--kernel mla_decode --kv-dtype bf16"
cases=$(mktemp)
while IFS='|' read -r name flags tile; do
  echo "$name wgmma | $flags --config 'rows=64 threads=384 math=wgmma $tile'"
  echo "$name wgmma_ss f16 | $flags --config 'rows=64 threads=384 math=wgmma_ss $tile'"
  case $tile in *keys=32*) echo "$name seesaw | $flags --config 'rows=64 threads=384 math=wgmma_ss $tile' --templates $seesaw" ;; esac
done >"$cases" <<EOC
h12_l4c|$bf16 --ctx 8192 --heads 12 --block-len 4 --causal 1 --batch 32|keys=64 stages=2 split=1
h12_l4c k32|$bf16 --ctx 8192 --heads 12 --block-len 4 --causal 1 --batch 32|keys=32 stages=4 split=1
h12_l4f k32|$bf16 --ctx 8192 --heads 12 --block-len 4 --causal 0 --batch 32|keys=32 stages=4 split=1
h16_l4_b128|$bf16 --ctx 8192 --heads 16 --block-len 4 --causal 1 --batch 128|keys=64 stages=2 split=0
h16_l4_b128 k32|$bf16 --ctx 8192 --heads 16 --block-len 4 --causal 1 --batch 128|keys=32 stages=4 split=0
h16_l2_b32|$bf16 --ctx 4096 --heads 16 --block-len 2 --causal 1 --batch 32|keys=32 stages=4 split=2
EOC
ss256="$bf16 --ctx 8192 --heads 12 --block-len 4 --causal 1 --batch 32 --config 'rows=64 keys=64 threads=256 stages=2 split=1 math=wgmma_ss'"
echo "h12_l4c wgmma_ss 256 main | $ss256 --templates templates" >>"$cases"
echo "h12_l4c wgmma_ss 256 | $ss256" >>"$cases"
timeout 420 ./scripts/bench_ab.py "$cases" --rounds 3 --ktune "$bin/ktune" --json-out "$out/f16_tiles.jsonl" \
  | tee "$out/f16_tiles.md"
