# Sourced by the scripts that walk every kernel family (run.sh, sweep_results.sh): the families
# compiled into ktune, in tuner/kernels/registry.cpp's order (tests/cli/family_lists_test.cpp holds
# the two, and the runtime build's list, equal). KTUNE_FAMILIES="a b" narrows it.
read -r -a families <<<"${KTUNE_FAMILIES:-mla_decode qk_rope_cache}"
