#!/usr/bin/env bash
# On the GPU machine, over a carried build/: the A/B that measured mla_decode_pv_warpgroups
# (math=wgmma at 512 threads, MmaGeometry::softmax_warpgroup: a softmax warpgroup takes Q K^T and
# the softmax of each tile as soon as its slot is full, and two P V warpgroups (256 value dims
# each) follow, up to the ring behind, reading P from the tile's rope panel and the rows' rescale
# factors from a record per slot; the producer warpgroup as at 384 threads). At 384 threads the
# tile's chain is Q K^T, softmax, then P V, with the second warpgroup idle through the first two.
# While it was a probe (its runs in mla_decode_pv_warpgroups_ab.md): main's build from
# scripts/remote/pack.sh and the probe's in build/probe/ (scripts/remote/probes/build.sh).
# Since it is in main, both sides default to main's ktune ($KTUNE) and the tests to main's
# ktune_gpu_tests: every other kernel of the default space compiles to the same machine code as
# with b6af9c5's templates (scripts/code_objects_diff.py over both trees' `ktune compile --space
# default --arch sm_90a` caches, 2026-12-06: 140 kernels identical, the four 512-thread ones new),
# so main's 384-thread side is the base's kernel. PVWG_BASE, PVWG_WITH and PVWG_TESTS name others.
# The base runs 384 threads, keys=64 stages=2, its best config; the change's side 512 threads,
# keys=64 stages=2 (and keys=32 stages=4 at h12_l4c), and 384 threads at h12_l4c, a control (its
# kernel is byte-identical to the base's), in alternating rounds (bench_ab.py --probe), every
# bench verified.
# (a) the GPU tests of mla_decode with the change (the 512-thread configs among them); (b) the
# A/B; (c) the smoke space's keys with 512-thread wgmma configs (32- and 64-key tiles), swept and
# verified. Writes $OUT/pv_warpgroups_gpu_tests.txt, $OUT/pv_warpgroups_ab.{md,jsonl} and
# $OUT/pv_warpgroups_smoke.txt. For a short run: PVWG_ROUNDS (default 3) rounds of the A/B, and
# PVWG_SMOKE=0 skips (c).
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
base_ktune=${PVWG_BASE:-$KTUNE}
probe_ktune=${PVWG_WITH:-$KTUNE}
probe_tests=${PVWG_TESTS:-build/ktune_gpu_tests}
for f in "$base_ktune" "$probe_ktune" "$probe_tests"; do
  [ -x "$f" ] || { echo "mla_decode_pv_warpgroups_ab: no $f" >&2; exit 1; }
done
v=$(mktemp -d)

# (a) The templates are embedded in the binaries: their new instances compile here (the
# seeded cache holds main's). The controls of the 512-thread configs first (the verification
# shapes, masks, a planted off-by-one, late-rising scores), then the rest of mla_decode's.
softmax='*MlaDecodeControls.*/wgmma_softmax'
for run in "50|$softmax" "90|*MlaDecode*:-$softmax"; do
  IFS='|' read -r seconds filter <<<"$run"
  timeout "$seconds" "$probe_tests" --gtest_filter="$filter" >"$v/gpu_tests.txt" 2>&1
  echo "ktune_gpu_tests --gtest_filter='$filter': exit status $?" >>"$v/gpu_tests.txt"
  tail -n 40 "$v/gpu_tests.txt"
done >"$out/pv_warpgroups_gpu_tests.txt"
grep -E "^\[  (FAILED|PASSED) |exit status" "$out/pv_warpgroups_gpu_tests.txt" | head -n 30

# (b) The A/B.
bf16="--kernel mla_decode --kv-dtype bf16 --ctx 8192"
k64="rows=64 keys=64 stages=2 math=wgmma"
shapes=("h12_l4c|--heads 12 --block-len 4 --causal 1 --batch 32|split=1"
        "h12_l4f|--heads 12 --block-len 4 --causal 0 --batch 32|split=1"
        "h16_l4_b128|--heads 16 --block-len 4 --causal 1 --batch 128|split=0"
        "h128|--heads 128 --block-len 1 --causal 1 --batch 128|split=2")
for s in "${shapes[@]}"; do
  IFS='|' read -r name key split <<<"$s"
  echo "$name | $bf16 $key --config '$k64 threads=384 $split'" >>"$v/main.txt"
  echo "$name | $bf16 $key --config '$k64 threads=512 $split'" >>"$v/probe.txt"
done
h12c="--heads 12 --block-len 4 --causal 1 --batch 32"
cat >>"$v/probe.txt" <<EOF2
h12_l4c keys=32 stages=4 | $bf16 $h12c --config 'rows=64 keys=32 stages=4 math=wgmma threads=512 split=1'
h12_l4c 384 threads (control) | $bf16 $h12c --config '$k64 threads=384 split=1'
EOF2
# bench_ab.py alternates the sides by round (main's cases, then the probe's) and sets each probe
# case against main's case of its first word.
timeout 360 ./scripts/bench_ab.py "$v/main.txt" --rounds "${PVWG_ROUNDS:-3}" --timeout 30 --ktune "$base_ktune" \
  --probe "$probe_ktune" --probe-cases "$v/probe.txt" --json-out "$out/pv_warpgroups_ab.jsonl" \
  >"$out/pv_warpgroups_ab.md"
cat "$out/pv_warpgroups_ab.md"

[ "${PVWG_SMOKE:-1}" = 0 ] && exit 0
# (c) The smoke space's 512-thread configs (its file, which has them since 59472c9; the first runs
# added them with sed, as mla_decode_pv_warpgroups_smoke.txt says), on its bf16 keys.
timeout 50 "$probe_ktune" sweep --kernel mla_decode --space tuner/kernels/mla_decode/spaces/smoke.toml \
  --where math=wgmma --where threads=512 --where kv_dtype=bf16 --db "$v/smoke.db" --budget 35 --timeout 15 2>&1 |
  tail -n 20 | tee "$out/pv_warpgroups_smoke.txt"
