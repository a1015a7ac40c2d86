#!/usr/bin/env bash
# Stamp lint: the tracked files of the repository speak of ktune itself, not of when, on which
# machine or under which issue a change was made. Prints `file:line: rule: text` for every hit and
# exits 1 if there is one (0 if none, 2 on a usage error).
#   scripts/lint_stamps.sh [DIR]    (DIR: the root of a git work tree; default: this repository)
#
# Rules, over the files `git ls-files` lists (files with a NUL byte in their first 8 KiB are
# skipped as binary):
#   Everywhere:
#     issue     an issue or pull-request number: "issue 6", "issues 6 and 7", "Issue6" inside an
#               identifier, "PR 12", and "#12" in prose: a '#' right before digits, not after a
#               word character, '/', '$', '&' or another '#' and not followed by a letter (an
#               upstream project's owner/repo#12, shell's $#, HTML entities and colours are not
#               ours); in C-like sources "#12" counts only in comments, since string literals are
#               data there ("[configs #2]" is how ktune names the second [[configs]] table).
#     lending   words of how GPU machines are borrowed: lease/leased/leasing, "device tool",
#               ".devbin", "session" (ktune has no sessions: the word only ever meant a borrowed
#               machine's), "device budget" / "budget of device time".
#   In the code (cli/ db/ dispatch/ tuner/ templates/), also:
#     date      a date 20YY-MM-DD, anywhere in the line, except as the start of the name of an
#               experiment cited as evidence (experiments/2026-12-07-<slug>).
#     hash      a commit or template hash in a comment: a word of 7 to 40 characters of [0-9a-f]
#               with at least one digit and one letter. Inside string literals it is data (a
#               template hash a test compares with) and allowed.
#     timing    a measurement in a comment: a number with ns, us, µs or ms; a number with a
#               decimal point and s ("2.5 s"; "30 s" is a timeout or a limit, not a measurement);
#               a number with GB/s, TB/s, TFLOP/s, GFLOP/s, TFLOPS or GFLOPS; a ratio with a
#               decimal point ("0.96x", "1.2x"; "2x" reads as "twice" and 16x16x32 is an
#               instruction shape); "on the H100", "on an H200", "on H100", "on the MI250X".
#   Comments are found per file type (of FILE for FILE.in): // and /* */ in C, C++, CUDA and HIP
#   sources (string and character literals, raw strings included, are skipped), '#' at a word's
#   start in shell, Python, TOML, CMake, YAML and text files, and the whole line in Markdown, SQL
#   and any other file.
# Not checked: this script and its test (they spell out what they look for).
set -euo pipefail
root=${1:-$(dirname "$0")/..}
[ -d "$root" ] || { echo "usage: $0 [DIR]" >&2; exit 2; }
cd "$root"
git ls-files -z | python3 -c '
import re, sys

EXEMPT = {"scripts/lint_stamps.sh", "tests/scripts/lint_stamps_test.sh"}
CODE_DIRS = ("cli/", "db/", "dispatch/", "tuner/", "templates/")
C_EXT = (".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh", ".hip", ".inl")
HASH_EXT = (".sh", ".py", ".toml", ".cmake", ".txt", ".yml", ".yaml")

ISSUE_REF = re.compile(r"(?<![\w$&#/])#\d+(?![\w])")
EVERYWHERE = [
    ("issue", re.compile(r"(?:\b[Ii]ssues?|(?<=[a-z0-9_])Issues?)[ _-]*#?\d+"
                         r"|\b(?:PR|[Pp]ull [Rr]equest)[ _-]*#?\d+")),
    ("lending", re.compile(r"\b(?:[Ll]eas(?:e[ds]?|ing))\b|\b[Dd]evice (?:tool|budget)\b"
                           r"|\.devbin\b|\b[Ss]ession(?:s|\x27s)?\b|\bbudget of device time\b")),
]
DATE = re.compile(r"(?<!experiments/)\b20\d\d-[01]\d-[0-3]\d\b")
HASH = re.compile(r"(?<![\w.])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w])")
TIMING = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:ns|us|µs|ms|[GT]B/s|[GT]FLOP/s|[GT]FLOPS)(?![\w])"
                    r"|(?<![\w.])\d+\.\d+\s*s\b"
                    r"|(?<![\w.])\d+\.\d+x\b"
                    r"|\bon (?:the |an? )?(?:H100|H200|MI\d{3}X?)\b")

def comments_c(lines):
    """The comment text of each line of a C-like source; literals are blanked."""
    out, in_block, raw_end = [], False, None
    for line in lines:
        i, n, text = 0, len(line), []
        while i < n:
            if raw_end is not None:
                j = line.find(raw_end, i)
                if j < 0: i = n; break
                i, raw_end = j + len(raw_end), None
            elif in_block:
                j = line.find("*/", i)
                if j < 0: text.append(line[i:]); i = n; break
                text.append(line[i:j]); i, in_block = j + 2, False
            elif line.startswith("//", i):
                text.append(line[i + 2:]); break
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            elif line[i] == "R" and line.startswith("\"", i + 1) and (i == 0 or not (line[i-1].isalnum() or line[i-1] == "_")):
                k = line.find("(", i + 2)
                if k < 0: i += 1; continue
                raw_end, i = ")" + line[i + 2:k] + "\"", k + 1
            elif line[i] in "\"\x27":
                q, i = line[i], i + 1
                if q == "\x27" and i > 1 and line[i - 2].isalnum():  # digit separator 1\x27000
                    continue
                while i < n and line[i] != q:
                    i += 2 if line[i] == "\\" else 1
                i += 1
            else:
                i += 1
        out.append(" ".join(text))
    return out

def comments_hash(lines):
    out = []
    for line in lines:
        i, n, q, text = 0, len(line), None, ""
        while i < n:
            c = line[i]
            if q:
                if c == "\\": i += 1
                elif c == q: q = None
            elif c in "\"\x27": q = c
            elif c == "#" and (i == 0 or line[i - 1].isspace()):
                text = line[i + 1:]; break
            i += 1
        out.append(text)
    return out

hits = set()
def report(path, no, rule, line):
    if (path, no, rule) in hits: return
    hits.add((path, no, rule))
    print(f"{path}:{no}: {rule}: {line.strip()[:200]}")

for path in sys.stdin.buffer.read().decode().split("\0"):
    if not path or path in EXEMPT: continue
    try:
        with open(path, "rb") as f: data = f.read()
    except OSError: continue
    if b"\0" in data[:8192]: continue
    lines = data.decode("utf-8", "replace").split("\n")
    code = path.startswith(CODE_DIRS)
    name = path[:-3] if path.endswith(".in") else path  # a configured file is of its type
    c_like = name.endswith(C_EXT)
    if c_like: comments = comments_c(lines)
    elif name.endswith(HASH_EXT): comments = comments_hash(lines)
    else: comments = lines
    for no, line in enumerate(lines, 1):
        for rule, rx in EVERYWHERE:
            if rx.search(line): report(path, no, rule, line)
        if ISSUE_REF.search(comments[no - 1] if c_like else line): report(path, no, "issue", line)
        if not code: continue
        if DATE.search(line): report(path, no, "date", line)
        if comments[no - 1]:
            if HASH.search(comments[no - 1]): report(path, no, "hash", line)
            if TIMING.search(comments[no - 1]): report(path, no, "timing", line)
sys.exit(1 if hits else 0)
'
