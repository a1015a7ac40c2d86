# Sourced by the scripts that walk every kernel family (run.sh, sweep_results.sh): the families
# compiled into ktune, in tuner/kernels/registry.cpp's order. KTUNE_FAMILIES="a b" narrows it.
read -r -a families <<<"${KTUNE_FAMILIES:-mla_decode qk_rope_cache}"
