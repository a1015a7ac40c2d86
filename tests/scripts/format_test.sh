#!/usr/bin/env bash
# Test of scripts/format.sh: in a temporary git repository holding the project's .clang-format and
# the script, `--check` must fail and name a C++ file laid out against the style, leave alone the
# files it does not cover (templates/, *.in, untracked files), pass once `scripts/format.sh` has
# rewritten the file, and pass on a file already in style.
#   tests/scripts/format_test.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
mkdir -p "$repo/scripts" "$repo/db" "$repo/cli" "$repo/templates/x" "$repo/dispatch"
cp "$top/.clang-format" "$repo/"
cp "$top/scripts/format.sh" "$repo/scripts/"
cd "$repo"
git init -q .
failed=0
fail() { echo "FAIL: $*"; failed=1; }

printf 'namespace ktune::db {\n\nint answer() { return 42; }\n\n}  // namespace ktune::db\n' >db/in_style.cpp
printf 'namespace ktune::cli   {\nint  answer( ) {return 42;}\n}\n' >cli/off_style.cpp
printf 'int  kernel( ) {return 1;}\n' >templates/x/kernel.hpp
printf 'int  @NAME@( ) {return 1;}\n' >dispatch/table.cpp.in
git add .
printf 'int  untracked( ) {return 1;}\n' >db/untracked.cpp

if out=$(scripts/format.sh --check 2>&1); then
  fail "--check passed with cli/off_style.cpp out of style"
fi
grep -qx 'cli/off_style.cpp' <<<"$out" || fail "--check did not name cli/off_style.cpp: $out"
for f in db/in_style.cpp templates/x/kernel.hpp dispatch/table.cpp.in db/untracked.cpp; do
  grep -q "$f" <<<"$out" && fail "--check named $f, which it must leave alone"
done

scripts/format.sh >/dev/null
scripts/format.sh --check >/dev/null 2>&1 || fail "--check failed after scripts/format.sh rewrote the files"
cmp -s templates/x/kernel.hpp <(printf 'int  kernel( ) {return 1;}\n') || fail "scripts/format.sh rewrote a template"
cmp -s dispatch/table.cpp.in <(printf 'int  @NAME@( ) {return 1;}\n') || fail "scripts/format.sh rewrote a .in file"

[ "$failed" = 0 ] && echo "format_test: passed"
exit "$failed"
