#!/usr/bin/env bash
# On the GPU machine, over a carried build/ of main: is math=wgmma's 64-row tile paced by shared
# memory? ncu of one launch each of the 64-row targets (threads=384, ctx 8192, clocks not
# locked): the compute and memory workload sections (pipe utilization, shared-memory wavefronts and
# bank conflicts), then the tensor pipes' and shared-memory banks' utilization by metric name, and
# the device's metric names of both kinds for the next look. Writes $OUT/smem_ncu_NAME.txt and
# $smem_ncu_metric_names.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/remote/env.sh
ncu --version | tail -1
cfg="rows=64 keys=64 threads=384 stages=2 math=wgmma"
ncu --query-metrics --chip gh100 2>&1 | grep -E "pipe_tensor|data_bank|mem_shared|wavefronts" >"$smem_ncu_metric_names.txt"
run() { name=$1; shift
  local bench=("$KTUNE" bench --kernel mla_decode --kv-dtype bf16 --ctx 8192 --no-verify "$@")
  {
    timeout 120 ncu --target-processes all --clock-control none -k regex:mla_decode_mma -s 3 -c 1 \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --section WarpStateStats "${bench[@]}"
    timeout 120 ncu --target-processes all --clock-control none -k regex:mla_decode_mma -s 3 -c 1 \
      --metrics 'gpu__time_duration.sum,regex:sm__pipe_tensor_op_.*cycles_active\.avg\.pct_of_peak_sustained_(active|elapsed)$,regex:l1tex__data_bank_(reads|writes)\.avg\.pct_of_peak_sustained_elapsed$,regex:l1tex__data_pipe_lsu_wavefronts_mem_shared.*\.sum$' \
      "${bench[@]}"
  } >"$out/smem_ncu_$name.txt" 2>&1
  grep -E "mla_|Duration|duration|tensor|bank|Shared|shared|Pipe" "$out/smem_ncu_$name.txt" | head -60
}
run h12_l4c --heads 12 --block-len 4 --causal 1 --batch 32 --config "$cfg split=1"
run h16_l4_b128 --heads 16 --block-len 4 --causal 1 --batch 128 --config "$cfg split=0"
