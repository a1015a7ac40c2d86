#!/usr/bin/env bash
# On the GPU machine: the softmax maxima of the mma / wgmma / wgmma_ss kernel kept lazily
# (mla_decode_lazy_max.patch: P against the running maxima, one __syncthreads_or a tile unless a
# score passes them by 8, as wgmma_t's since e39b723) against main, through main's build and
# --templates: every case verifies first, then times.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/device/probes/probe_env.sh
probe_templates mla_decode_lazy_max
rm -rf .devbin/lazy_max_templates && cp -r "$probe/templates" .devbin/lazy_max_templates
python3 scripts/bench_ab.py scripts/bench_cases/mla_decode_lazy_max_ab.txt --rounds "${ROUNDS:-2}" \
  --ktune .devbin/ktune --json-out "$out/mla_decode_lazy_max_ab.jsonl" >"$out/mla_decode_lazy_max_ab.md" \
  2>"$out/mla_decode_lazy_max_ab.err"
echo "bench_ab exit $?"; cat "$out/mla_decode_lazy_max_ab.md"; tail -5 "$out/mla_decode_lazy_max_ab.err"
