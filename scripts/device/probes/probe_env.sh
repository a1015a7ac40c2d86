# Sourced by the probes' scripts on the GPU machine, from the repository root: $out (the call's
# $OUT), the environment of the carried .devbin/ build (scripts/device/pack.sh), and, for
# `probe_templates NAME`, $probe/templates: main's templates with probes/NAME.patch applied, for
# `ktune ... --templates $probe/templates` over main's build (a probe that changes no host code).
out=${OUT:-/tmp/ktune-out}; mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.devbin/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export KTUNE=$PWD/.devbin/ktune KTUNE_CACHE_DIR=/tmp/ktune-cache

probe_templates() {
  probe=$(mktemp -d)
  cp -r templates "$probe/"
  patch -s -p1 -d "$probe" <"scripts/device/probes/$1.patch"
}
