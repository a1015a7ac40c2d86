# Sourced: probe_patch PATCH|NAME prints the probe's patch file: PATCH itself where it is a file,
# else the one experiments/*/NAME.patch (a probe that has run is kept with its experiment).
probe_patch() {
  if [ -f "$1" ]; then realpath "$1"; return; fi
  local found=(experiments/*/"$1".patch)
  if [ ${#found[@]} -ne 1 ] || [ ! -f "${found[0]}" ]; then
    echo "probe: no patch $1, and not exactly one experiments/*/$1.patch" >&2
    return 1
  fi
  realpath "${found[0]}"
}
