#!/usr/bin/env bash
# On the GPU machine, over a carried build/ (scripts/remote/pack.sh): math=wgmma_t at 16 and 32
# query rows a CTA (n16 and n32 products) on fp8_e4m3fn keys, against the bf16 cache's wgmma
# (512 threads) on the same shape; one verified `ktune bench --json` line per config, each after
# a "# key | config" line. The keys: the wide folds whose fp8 winners lost to bf16 by 1.6x to 1.8x
# (experiments/2026-12-06-mla-decode-fp8-vs-bf16/mla_decode_fp8_vs_bf16.md), a 32-row one and a 64-row one.
#   mla_decode_wgmma_t_rows32_ab.sh > ab.log
set -uo pipefail
cd "$(dirname "$0")/../.."
ktune=${KTUNE:-build/ktune}
for key in "--heads 128 --block-len 4 --causal 1 --batch 32 --ctx 4096" \
           "--heads 128 --block-len 1 --causal 1 --batch 128 --ctx 8192" \
           "--heads 32 --block-len 1 --causal 1 --batch 128 --ctx 8192" \
           "--heads 16 --block-len 4 --causal 1 --batch 32 --ctx 8192"; do
  for cfg in "rows=16 keys=64 threads=384 stages=2 split=0 math=wgmma_t" \
             "rows=16 keys=64 threads=256 stages=2 split=0 math=wgmma_t" \
             "rows=32 keys=64 threads=256 stages=2 split=0 math=wgmma_t" \
             "rows=32 keys=64 threads=128 stages=5 split=0 math=wgmma_t" \
             "rows=32 keys=64 threads=256 stages=2 split=2 math=wgmma_t"; do
    echo "# $key | $cfg"
    # shellcheck disable=SC2086  # the key is a list of options
    timeout 60 "$ktune" bench --kernel mla_decode $key --kv-dtype fp8_e4m3fn --config "$cfg" --json --timeout 50
  done
  echo "# $key | bf16: rows=64 keys=64 threads=512 stages=2 split=0 math=wgmma"
  # shellcheck disable=SC2086
  timeout 60 "$ktune" bench --kernel mla_decode $key --kv-dtype bf16 \
    --config "rows=64 keys=64 threads=512 stages=2 split=0 math=wgmma" --json --timeout 50
done
