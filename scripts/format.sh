#!/usr/bin/env bash
# Lays out ktune's C++ in the style of .clang-format, with Debian's clang-format-14 (other major
# versions format some lines differently, so the version is pinned; scripts/deps.sh installs it).
#   scripts/format.sh          rewrites the files in place
#   scripts/format.sh --check  changes nothing; lists the files that differ and exits 1 if any do
# The files: the tracked *.cpp, *.hpp and *.h under cli/ db/ dispatch/ tuner/ tests/. Left alone:
#   templates/        the kernel template sources' text is hashed into the template hash stored
#                     with every tuning result, so reformatting them is a template change (the
#                     results measured under the old hash no longer match), made deliberately and
#                     on its own, never by this script;
#   tests/fuzz/corpus fuzzing inputs, whose bytes are the test;
#   *.in              configure_file sources (dispatch/runtime/package_table.cpp.in): clang-format
#                     would split their @NAME@ placeholders.
# Generated C++ (the dispatch headers under results/, what a build writes) is outside these
# folders or untracked, so it is never formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=clang-format-14
if ! command -v "$clang_format" > /dev/null; then
  echo "format: $clang_format not found (scripts/deps.sh installs it)" >&2
  exit 2
fi
check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: scripts/format.sh [--check]" >&2; exit 2 ;;
esac

if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "format: not a git checkout: the files to format are the tracked ones" >&2
  exit 2
fi
files=()
while IFS= read -r f; do
  [ -f "$f" ] && files+=("$f")
done < <(git ls-files -- cli db dispatch tuner tests | grep -E '\.(cpp|hpp|h)$' | grep -v '^tests/fuzz/corpus/')

if ! $check; then
  printf '%s\0' "${files[@]}" | xargs -0 "$clang_format" -i --style=file
  echo "format: ${#files[@]} files formatted"
  exit 0
fi

formatted=$(mktemp)
trap 'rm -f "$formatted"' EXIT
differ=()
for f in "${files[@]}"; do
  "$clang_format" --style=file "$f" > "$formatted"
  cmp -s "$formatted" "$f" || differ+=("$f")
done
if [ ${#differ[@]} -gt 0 ]; then
  printf '%s\n' "${differ[@]}"
  echo "format: ${#differ[@]} of ${#files[@]} files differ from .clang-format's layout: scripts/format.sh rewrites them" >&2
  exit 1
fi
echo "format: ${#files[@]} files match .clang-format"
