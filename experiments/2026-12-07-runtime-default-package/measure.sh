#!/usr/bin/env bash
# What shipping the default tables in ktune_runtime costs at build time and what a run-time compile
# of one winner would cost its first call, on the CPU (NVRTC for sm_90a, hipRTC for gfx90a): each
# table packaged from scratch as the build does, then single programs compiled alone.
#   measure.sh KTUNE OUT_DIR     (KTUNE: a Release build's ktune)
set -euo pipefail
ktune=$1 out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cd "$out"
t() { /usr/bin/time -f "$1: wall %e s, user %U s, max rss %M KiB" "${@:2}"; }
for spec in h200-default:nvidia-h200/default/mla_decode h100-default:nvidia-h100-80gb-hbm3/default/mla_decode \
            h200-smoke:nvidia-h200/mla_decode h200-smoke-qk:nvidia-h200/qk_rope_cache; do
  name=${spec%%:*} dump=$src/results/${spec#*:}.sql family=$(basename "${spec#*:}")
  rm -rf "$name.db" "$name"
  t "restore $name" sqlite3 -batch "$name.db" ".read $dump"
  t "package $name" "$ktune" --quiet package --db "$name.db" --kernel "$family" --arch sm_90a --allow-stale \
    --no-cache --out "$name"
  echo "$name: $(ls "$name" | grep -c 'cubin$') programs, $(du -sb "$name" | cut -f1) bytes" \
       "($(cat "$name"/*.cubin | wc -c) of code objects)"
done
# One program alone, one thread: what a first call would wait for (the winners of 128 heads x 16,
# bf16 and fp8_e4m3fn, and a small mma program on both compilers).
one() { t "$1" "$ktune" compile --kernel mla_decode --space default --no-cache --jobs 1 "${@:2}"; }
one "sm_90a wgmma bf16" --arch sm_90a --heads 128 --block-len 16 --causal 1 --kv-dtype bf16 \
  --where rows=64 --where keys=64 --where threads=512 --where stages=2 --where math=2 --where split=0
one "sm_90a wgmma fp8" --arch sm_90a --heads 128 --block-len 16 --causal 1 --kv-dtype fp8_e4m3fn \
  --where rows=64 --where keys=32 --where threads=512 --where stages=3 --where math=2 --where split=0
one "sm_90a mma x2" --arch sm_90a --kv-dtype bf16 --where rows=16 --where keys=64 --where threads=256
one "gfx90a mma x2" --arch gfx90a --kv-dtype bf16 --causal 1 --where rows=16 --where keys=32
