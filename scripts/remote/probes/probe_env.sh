# Sourced by the probes' scripts on the GPU machine, from the repository root: the environment of
# the packed .gpu-bundle/ build (../env.sh: $out, $KTUNE, the seeded code-object cache), and, for
# `probe_templates PATCH|NAME`, $probe/templates: main's templates with the patch applied, for
# `ktune ... --templates $probe/templates` over main's build (a probe that changes no host code the
# kernels' launch depends on; the patch's other files, tests say, are left out here).
source scripts/remote/env.sh
source scripts/remote/probes/patch_path.sh

probe_templates() {
  local patch
  patch=$(probe_patch "$1") || return 1
  probe=$(mktemp -d)
  cp -r templates "$probe/"
  # The patch's files under templates/ only (python3 and patch(1): what the GPU machine is known to
  # have).
  python3 -c 'import re, sys
parts = re.split(r"(?m)^(?=diff --git )", open(sys.argv[1]).read())
sys.stdout.write("".join(p for p in parts if p.startswith("diff --git a/templates/")))' \
    "$patch" | patch -s -p1 -d "$probe"
}

# bench_ab.py cases from lines "NAME|BENCH FLAGS" on stdin: "NAME main" with main's templates, then
# "NAME probe" with those under $1 (`ktune --templates`).
ab_cases() {
  while IFS='|' read -r name flags; do
    echo "$name main | $flags"
    echo "$name probe | $flags --templates $1"
  done
}
