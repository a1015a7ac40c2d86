#!/usr/bin/env bash
# Test of scripts/lint_stamps.sh: in a temporary git repository, every planted stamp (one a line,
# each rule in each place it applies) must be reported as `file:line: rule`, nothing else may be,
# and a repository of clean files must pass. The clean lines are the false positives the rules
# are written to avoid (instruction shapes, "2x", timeouts, data in string literals, evidence in
# experiments/).
#   tests/scripts/lint_stamps_test.sh    (ctest: lint_stamps)
set -euo pipefail
lint=$(cd "$(dirname "$0")/../.." && pwd)/scripts/lint_stamps.sh
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
cd "$repo"
git init -q .
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# plant FILE RULE LINE: appends LINE to FILE and expects `FILE:<its line number>: RULE`.
# clean FILE LINE: appends LINE to FILE and expects no report of it.
: >expected
plant() {
  mkdir -p "$(dirname "$1")"
  printf '%s\n' "$3" >>"$1"
  echo "$1:$(wc -l <"$1"): $2" >>expected
}
clean() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >>"$1"; }

# Everywhere: issue numbers and lending words.
plant README.md issue "The targets of issue 6 are met."
plant README.md issue "Closes issues 6 and 7."
plant README.md issue "See #12 for the history."
plant README.md issue "Merged as PR 31."
plant tests/unit/x_test.cpp issue "TEST(Targets, Issue6TargetsAreMet) {}"
plant tests/unit/x_test.cpp issue "// what the issue 5 benchmark measures"
plant tests/unit/x_test.cpp issue "// fixed in #41"
plant scripts/run.sh lending "# one lease's share of the sweep"
plant scripts/run.sh lending "# the device tool brings back 8 files"
plant scripts/run.sh lending "cp build/ktune .devbin/"
plant scripts/run.sh lending "# what one session should produce"
plant scripts/run.sh lending "# the device budget left"
plant experiments/2026-12-07-probe/README.md issue "Issue 6's targets, measured again."
plant experiments/2026-12-07-probe/README.md lending "Run over a leased H200."
plant results/old.md lending "carried with the device tool"
# In the code: dates, hashes and timings.
plant cli/run.cpp date "// Chosen on 2026-12-07."
plant cli/run.cpp date 'const char* when = "2026-12-07";'
plant db/store.cpp hash "// introduced by 58591d8 to fix the key"
plant db/store.cpp hash "/* templates a9fc882d3b6cef5f */"
clean db/store.cpp "/* A comment over lines,"
plant db/store.cpp hash "   of 4d1c635e9 (the block comment goes on) */"
plant dispatch/pick.hpp timing "// ran in 434 us with it"
plant dispatch/pick.hpp timing "// 8.7 µs at B=32"
plant dispatch/pick.hpp timing "// 30 ns a lookup"
plant dispatch/pick.hpp timing "// about 30 ms to read"
plant dispatch/pick.hpp timing "// 0.33 s for the cache"
plant dispatch/pick.hpp timing "// read 3828 GB/s"
plant dispatch/pick.hpp timing "// 3.3 TB/s of HBM"
plant dispatch/pick.hpp timing "// 507 TFLOP/s on the roof"
plant dispatch/pick.hpp timing "// 12 GFLOP/s"
plant dispatch/pick.hpp timing "// 0.96x the time"
plant dispatch/pick.hpp timing "// the layout that won on the H200"
plant dispatch/pick.hpp timing "// slower on an H100"
plant tuner/kernels/k/spaces/default.toml date "# compiled in 6 minutes (2026-12-07)"
plant tuner/kernels/k/spaces/default.toml timing "# lost by 2.5x to the matrix cores"
plant templates/k/kernel.hip timing "// 1.08x on the smoke keys"
plant templates/k/kernel.hip issue "// issue 6's 64-row targets"
plant tuner/CMakeLists.txt hash "# pinned at 7e2ee4ac3a021caf"
plant db/schema.sql timing "-- a lookup takes 30 ns"
plant dispatch/table.cpp.in hash "// generated like 58591d8's"

# Clean: the same words and numbers where they are not stamps.
clean cli/run.cpp "// A 16x16x32 instruction shape; 2x the registers; --timeout 30 s by default."
clean cli/run.cpp 'const char* kHash = "a9fc882d3b6cef5f";  // the template hash a test compares with'
clean cli/run.cpp 'fmt::print("{:.1f} us, {} GB/s\n", t, bw);'
clean dispatch/table.cpp.in 'const char* kHash = "@TEMPLATE_HASH@ 58591d8";'
clean cli/run.cpp 'expect("[configs #2]");'
clean cli/run.cpp "char q = '\"'; const char* kLine = \"// 58591d8 ran 434 us on the H200 (#12)\";"
clean cli/run.cpp '// Works around marzer/tomlplusplus#190; 0xdeadbeef1 is a constant, 1234567 a count.'
clean cli/run.cpp '// Each release of the lock; the decimal digits of the budget of a sweep.'
clean tuner/k/spaces/smoke.toml '# Two CTAs an SM lost to one: experiments/2026-12-02-mla-decode-two-ctas.'
clean tuner/k/spaces/smoke.toml 'rows = [16, 32]  # rows of a tile'
clean scripts/x.sh 'echo "$# arguments"; n=${#list[@]}'
clean experiments/2026-12-07-probe/README.md "On the H200, 0.96x the time (2026-12-07, 58591d8): 434 us against 452 us."
clean results/old.md "Measured 3828 GB/s on an H200 on 2026-12-05."
clean README.md "Measured 3828 GB/s on an H200; the colour #fff and &#38; are no numbers."

git add -A
if out=$("$lint" "$repo"); then fail "exit 0 with planted stamps"; fi
got=$(printf '%s\n' "$out" | sed -E 's/^([^:]+:[0-9]+: [a-z]+): .*/\1/' | sort)
want=$(sort expected)
if [ "$got" != "$want" ]; then
  fail "reports differ from the planted stamps (< missed, > reported but clean):"
  diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | grep '^[<>]' || true
fi
printf '%s\n' "$out" | grep -qE '^dispatch/pick\.hpp:[0-9]+: timing: // ran in 434 us with it$' ||
  fail "a report is not \`file:line: rule: text\`"

# Only the clean lines: passes, silently.
while read -r file _; do sed -i "$(cut -d: -f2 <<<"$file")s/.*/planted stamp removed/" "$(cut -d: -f1 <<<"$file")"; done < <(sed 's/: / /' expected)
git add -A
if ! out=$("$lint" "$repo"); then fail "a clean repository fails:"; printf '%s\n' "$out"; fi
[ -z "$out" ] || fail "a clean repository prints: $out"

# Untracked files are not checked.
echo "issue 9" >untracked.md
"$lint" "$repo" >/dev/null || fail "an untracked file is checked"

[ "$failed" = 0 ] && echo "lint_stamps_test: all planted stamps reported, clean files pass"
exit "$failed"
