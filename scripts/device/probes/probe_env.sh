# Sourced by the probes' scripts on the GPU machine, from the repository root: the environment of
# the carried .devbin/ build (../env.sh: $out, $KTUNE, the seeded code-object cache), and, for
# `probe_templates NAME`, $probe/templates: main's templates with probes/NAME.patch applied, for
# `ktune ... --templates $probe/templates` over main's build (a probe that changes no host code the
# kernels' launch depends on; the patch's other files, tests say, are left out here).
source scripts/device/env.sh

probe_templates() {
  probe=$(mktemp -d)
  cp -r templates "$probe/"
  # git apply outside a repository: plain files, as patch(1), but it can take part of a patch.
  git -C "$probe" apply --include='templates/*' <"scripts/device/probes/$1.patch"
}
