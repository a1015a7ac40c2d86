#!/usr/bin/env bash
# Installs what the build needs from Debian's packages. Idempotent: installs only what is missing.
set -euo pipefail
pkgs=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev sqlite3          # the tuning database
  libsqlitecpp-dev                # RAII C++ access to SQLite (statements, transactions)
  libfmt-dev                      # formatting
  libcli11-dev                    # the ktune command line
  nlohmann-json3-dev              # JSON output (query, bench --json, worker protocol)
  libtomlplusplus-dev             # space files
  libxxhash-dev                   # code-object cache keys, template hashes
  libgtest-dev libgmock-dev       # tests
  libbenchmark-dev                # dispatch lookup benchmarks
  librapidcheck-dev               # property tests of the generated dispatcher
  clang-22 lld-22 llvm-22         # the offline AMD compiler (gfx942, gfx950) and llvm-objdump for the ISA test
  rocm-device-libs                # the device libraries clang links into AMD code objects
  clang-14 libclang-rt-14-dev     # libFuzzer + sanitizer runtimes: scripts/fuzz.sh fuzzes the space parser and db loader
  clang-format-14                 # scripts/format.sh: .clang-format is written for this major version
  python3                         # scripts/*.py (bench tables, ncu instruction mixes) and their tests
  chromium                        # the browser test of `ktune report` (headless)
  slurm-wlm munge                 # tests/slurm: scripts/slurm/ run on a one-node Slurm started by the test
)
# HIP headers + hipRTC (compile for gfx90a without a GPU) from Debian, unless a ROCm install is
# there (ROCM_PATH, else /opt/rocm): ktune builds against and loads that one first, and a second,
# older HIP beside it would only be a copy to mistake for it.
rocm_root="${ROCM_PATH:-/opt/rocm}"
if [ -f "$rocm_root/include/hip/hiprtc.h" ]; then
  echo "deps: ROCm found at $rocm_root: no distribution HIP installed"
else
  pkgs+=(libamdhip64-dev)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "deps: all Debian packages present"
fi
if [ -d /usr/local/cuda/include ]; then
  echo "deps: CUDA toolkit found at /usr/local/cuda (NVRTC for sm_* compile tests)"
else
  echo "deps: no CUDA toolkit at /usr/local/cuda: the cuda backend builds from its own declarations and reports itself unavailable"
fi
