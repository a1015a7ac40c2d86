#!/usr/bin/env bash
# On the GPU machine (carry build: scripts/remote/pack.sh, then
# scripts/remote/probes/build.sh mla_decode_two_ctas): two CTAs per SM for the fp8 kernel.
# Every mma config the family keeps has the deepest ring that fits, so one CTA fills an SM's
# shared memory and the fp8 kernel runs 2 warps per scheduler, latency-bound (0.51 eligible warps,
# experiments/2026-12-02-mla-decode-fp8-value-tile/mla_decode_fp8_value_tile_probe.md). A ring of 4 slots leaves room
# for a second CTA (about 100 KiB each); split=2 makes B=128 launch 256 CTAs, so both run at once.
# threads=128 fits two CTAs' registers as main stands (214 a thread); threads=256 needs the probe,
# whose launch bounds cap ptxas at 128 registers where the ring leaves room for two CTAs (and
# which asks the driver for the most shared memory per SM, the carveout hint, for every kernel
# past 48 KiB, so its build also times main's winner as the control of that). Each two-CTA config
# also runs its one-CTA control (split=0: 128 CTAs).
# Output: $OUT/probe.jsonl (per bench: build, shape, config, the `ktune bench --json` object),
# $OUT/occupancy_{main,probe}.txt (ncu occupancy and launch sections of a two-CTA config), a
# summary on stdout.
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/ktune-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} KTUNE_CACHE_DIR=/tmp/ktune-cache
h16="--heads 16 --block-len 1 --causal 1 --batch 128 --ctx 8192 --kv-dtype"
# build | kv_dtype | config | extra flags
while IFS='|' read -r build dtype config flags; do
  bin=build/ktune; [ "$build" = probe ] && bin=build/probe/ktune
  json=$(timeout 120 "$bin" bench --kernel mla_decode $h16 $dtype --config "$config" --json $flags)
  printf '{"build": "%s", "kv_dtype": "%s", "config": "%s", "result": %s}\n' "$build" "$dtype" "$config" \
    "${json:-null}" >>"$out/probe.jsonl"
  python3 -c 'import json, sys; d = json.loads(sys.argv[2]); print(sys.argv[1], "failed" if d is None else
    "%.1f us, %.1f%% copy BW, verified %s" % (d["median_us"], 100 * d["frac_copy_bw"], d["verified"]))' \
    "$build $dtype $config" "${json:-null}"
done <<'EOF'
main|fp8_e4m3fn|rows=16 keys=128 threads=256 stages=10 split=0 math=mma|
main|fp8_e4m3fn|rows=16 keys=64 threads=128 stages=4 split=2 math=mma|--force
main|fp8_e4m3fn|rows=16 keys=64 threads=128 stages=4 split=0 math=mma|--force
main|fp8_e4m3fn|rows=16 keys=32 threads=128 stages=4 split=2 math=mma|--force
probe|fp8_e4m3fn|rows=16 keys=64 threads=256 stages=4 split=2 math=mma|--force
probe|fp8_e4m3fn|rows=16 keys=64 threads=256 stages=4 split=0 math=mma|--force
probe|fp8_e4m3fn|rows=16 keys=128 threads=256 stages=10 split=0 math=mma|
main|fp8_e4m3fnuz|rows=16 keys=128 threads=256 stages=10 split=0 math=mma|
main|fp8_e4m3fnuz|rows=16 keys=64 threads=128 stages=4 split=2 math=mma|--force
probe|fp8_e4m3fnuz|rows=16 keys=64 threads=256 stages=4 split=2 math=mma|--force
main|bf16|rows=16 keys=64 threads=256 stages=5 split=0 math=mma|
main|bf16|rows=16 keys=32 threads=128 stages=2 split=2 math=mma|--force
probe|bf16|rows=16 keys=32 threads=256 stages=2 split=2 math=mma|--force
EOF
ncu=/usr/local/cuda/bin/ncu
for build in main probe; do
  bin=build/ktune config="rows=16 keys=64 threads=128 stages=4 split=2 math=mma"
  [ "$build" = probe ] && bin=build/probe/ktune config="rows=16 keys=64 threads=256 stages=4 split=2 math=mma"
  timeout 150 $ncu --target-processes all -k regex:mla_decode_mma -s 3 -c 1 --section Occupancy --section LaunchStats \
    --section SpeedOfLight --section SchedulerStats --section WarpStateStats "$bin" bench --kernel mla_decode $h16 \
    fp8_e4m3fn --config "$config" --no-verify --force >"$out/occupancy_$build.txt" 2>&1
  echo "ncu $build: exit $?"
  grep -E "Block Limit (Registers|Shared Mem)|Achieved Active Warps|Registers Per Thread|Active Warps Per Scheduler|Eligible Warps" \
    "$out/occupancy_$build.txt"
done
