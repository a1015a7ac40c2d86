# Sourced, from the repository root, by the scripts that run on the GPU machine over a carried
# .devbin/ (scripts/device/pack.sh): $out (the call's $OUT, created), the build's libraries, $KTUNE,
# and a code-object cache seeded with what pack.sh compiled here for the device's arch, so that a
# fresh lease's JIT compiles only what the carried templates do not already cover (entries are
# keyed by everything that changes the binary, the compiler's identity included, which `ktune
# devices` prints (version, options, hash of the library): a seed made with another build of
# NVRTC is never found, and costs nothing but its copy, and the device compiles instead).
out=${OUT:-/tmp/ktune-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devbin/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KTUNE=$PWD/.devbin/ktune KTUNE_CACHE_DIR=/tmp/ktune-cache
if [ -d .devbin/cache ]; then
  mkdir -p "$KTUNE_CACHE_DIR" && cp -r .devbin/cache/. "$KTUNE_CACHE_DIR"/  # same key, same bytes
fi
