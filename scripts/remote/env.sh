# Environment of the scripts that run on a GPU machine over a .gpu-bundle/ (scripts/remote/pack.sh),
# sourced from the repository root: $out (the folder for what the run brings back: $OUT, else
# /tmp/ktune-out; created), the bundle's libraries, $KTUNE, and a code-object cache seeded with
# what pack.sh compiled on the build machine for the GPU's arch, so that a fresh machine's JIT
# compiles only what the bundle does not already cover (entries are keyed by everything that
# changes the binary, the compiler's identity included, which `ktune devices` prints (version,
# options, hash of the library): a seed made with another build of NVRTC is never found, costs
# nothing but its copy, and the GPU machine compiles instead).
out=${OUT:-/tmp/ktune-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.gpu-bundle/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KTUNE=$PWD/.gpu-bundle/ktune KTUNE_CACHE_DIR=/tmp/ktune-cache
if [ -d .gpu-bundle/cache ]; then
  mkdir -p "$KTUNE_CACHE_DIR" && cp -r .gpu-bundle/cache/. "$KTUNE_CACHE_DIR"/  # same key, same bytes
fi
