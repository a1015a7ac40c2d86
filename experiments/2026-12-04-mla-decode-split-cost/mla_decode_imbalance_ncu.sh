#!/usr/bin/env bash
# On the GPU machine, over a carried build/ of main: ncu of math=wgmma with its producer
# (threads=384) at ctx 8192, one launch each, clocks not locked: the kernel duration against the
# SMs active cycles (min / avg / max: whether CTAs finish apart), DRAM and L2 bytes.
# Writes $OUT/ncu_NAME.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
ncu --version | tail -1
cfg="rows=64 keys=64 threads=384 stages=2 math=wgmma"
run() { name=$1; shift
  timeout 100 ncu --target-processes all --clock-control none -k regex:mla_decode -s 3 -c 1 \
    --metrics gpu__time_duration.sum,sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,sm__cycles_elapsed.max,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
    "$KTUNE" bench --kernel mla_decode --kv-dtype bf16 --ctx 8192 --no-verify "$@" >"$out/ncu_$name.txt" 2>&1
  grep -E "mla_|duration|cycles|dram|lts" "$out/ncu_$name.txt"
}
run h12_split1 --heads 12 --block-len 4 --causal 1 --batch 32 --config "$cfg split=1"
run h12_split0 --heads 12 --block-len 4 --causal 1 --batch 32 --config "$cfg split=0"
run h16_b128 --heads 16 --block-len 4 --causal 1 --batch 128 --config "$cfg split=0"
