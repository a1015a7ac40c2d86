#!/usr/bin/env bash
# On the GPU machine (carry build: scripts/remote/pack.sh, then
# scripts/remote/probes/build.sh mla_decode_fp8_value_tile): the fp8 value tile against main.
# Main decodes each fp8 code twice, as K in the Q K^T warps and as V in the P V warps; the probe
# decodes it once, and the Q K^T warps also write the first 512 dims as fp16 to a value tile in
# shared memory, which P V reads as the bf16 path reads its tile (1 KiB a key: 128-key tiles no
# longer fit, 64-key tiles leave room for 7 ring slots). Times the fp8 shapes with both
# builds (A: main, B: probe), the probe's 64- and 32-key tiles at several ring depths, then runs
# the probe's mla_decode GPU tests, then profiles main's and the probe's fp8 kernel at the target
# shape with Nsight Compute. Output: $OUT/probe.jsonl (per bench: build, shape, config, the object),
# $OUT/probe_gpu_tests.log, $OUT/{main,probe}_fp8_{sections.txt,opcodes.md} (the commands of
# experiments/2026-12-02-mla-decode-ncu-targets/README.md), a summary on stdout.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/ktune-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} KTUNE_CACHE_DIR=/tmp/ktune-cache
main=build/ktune; probe=build/probe/ktune
bench() {  # BUILD SHAPE CONFIG [flags]
  local build=$1 shape=$2 config=$3; shift 3
  local bin=$main; [ "$build" = probe ] && bin=$probe
  local json
  json=$(timeout 120 "$bin" bench --kernel mla_decode $shape --batch 128 --ctx 8192 --config "$config" --json "$@")
  echo "{\"build\": \"$build\", \"shape\": \"$shape\", \"config\": \"$config\", \"result\": ${json:-null}}" >>"$out/probe.jsonl"
  python3 - "$build" "$shape | $config" "${json:-null}" <<'PY'
import json, sys
build, what, text = sys.argv[1:]
d = json.loads(text)
print(build, what, "failed" if d is None else
      f"{d['median_us']:.1f} us, {d['frac_copy_bw']:.1%} copy BW, verified {d['verified']}")
PY
}
h16="--heads 16 --block-len 1 --causal 1 --kv-dtype"
bench main "$h16 bf16" "rows=16 keys=64 threads=256 stages=5 split=0 math=mma"
bench main "$h16 fp8_e4m3fn" "rows=16 keys=128 threads=256 stages=10 split=0 math=mma"
for s in 7 6 5 4; do bench probe "$h16 fp8_e4m3fn" "rows=16 keys=64 threads=256 stages=$s split=0 math=mma" --force; done
for s in 8 6; do bench probe "$h16 fp8_e4m3fn" "rows=16 keys=32 threads=256 stages=$s split=0 math=mma" --force; done
bench probe "$h16 fp8_e4m3fn" "rows=16 keys=64 threads=128 stages=7 split=0 math=mma" --force
for h in "--heads 16 --block-len 4" "--heads 128 --block-len 1"; do
  bench main "$h --causal 1 --kv-dtype fp8_e4m3fn" "rows=32 keys=128 threads=256 stages=9 split=0 math=mma" --no-verify
  bench probe "$h --causal 1 --kv-dtype fp8_e4m3fn" "rows=32 keys=64 threads=256 stages=6 split=0 math=mma" --no-verify
done
timeout 300 build/probe/ktune_gpu_tests --gtest_filter='*MlaDecode*' >"$out/probe_gpu_tests.log" 2>&1
echo "probe GPU tests: exit $?"; grep -E "^\[  (PASSED|FAILED) " "$out/probe_gpu_tests.log"
ncu=/usr/local/cuda/bin/ncu
for build in main probe; do
  bin=$main config="rows=16 keys=128 threads=256 stages=10 split=0 math=mma"
  [ "$build" = probe ] && bin=$probe config="rows=16 keys=64 threads=256 stages=7 split=0 math=mma"
  args=(bench --kernel mla_decode $h16 fp8_e4m3fn --batch 128 --ctx 8192 --config "$config" --no-verify --force)
  timeout 150 $ncu --target-processes all -k regex:mla_decode_mma -s 3 -c 1 --section SpeedOfLight \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats \
    --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' "$bin" "${args[@]}" \
    >"$out/${build}_fp8_sections.txt" 2>&1
  timeout 150 $ncu --target-processes all -k regex:mla_decode_mma -s 3 -c 1 --section SourceCounters \
    --section InstructionStats --page source --print-source sass --csv "$bin" "${args[@]}" >/tmp/${build}_sass.csv 2>&1 &&
    scripts/ncu_opcode_mix.py /tmp/${build}_sass.csv --top 16 >"$out/${build}_fp8_opcodes.md"
  echo "ncu $build: exit $?"; head -12 "$out/${build}_fp8_opcodes.md" 2>/dev/null
done
