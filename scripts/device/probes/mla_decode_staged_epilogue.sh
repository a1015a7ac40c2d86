#!/usr/bin/env bash
# On the GPU machine: the wgmma epilogue through shared memory (mla_decode_staged_epilogue.patch)
# against main, through main's build and --templates: every case verifies first, then times.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source scripts/device/probes/probe_env.sh
probe_templates mla_decode_staged_epilogue
rm -rf .devbin/staged_templates && cp -r "$probe/templates" .devbin/staged_templates
python3 scripts/bench_ab.py scripts/bench_cases/mla_decode_staged_epilogue_ab.txt --rounds "${ROUNDS:-2}" \
  --ktune .devbin/ktune --json-out "$out/mla_decode_staged_epilogue_ab.jsonl" >"$out/mla_decode_staged_epilogue_ab.md" \
  2>"$out/mla_decode_staged_epilogue_ab.err"
echo "bench_ab exit $?"; cat "$out/mla_decode_staged_epilogue_ab.md"; tail -5 "$out/mla_decode_staged_epilogue_ab.err"
