#!/usr/bin/env python3
"""The instruction mix of one kernel from an Nsight Compute SASS export, as a Markdown table.

Input: the CSV that `ncu --section SourceCounters --page source --print-source sass --csv` prints
(lines before its header, such as the profiled program's own output, are skipped). Output: per
opcode, its share of the executed warp instructions and of the warp-stall samples, largest
first; a kernel whose time goes to bookkeeping rather than to its matrix products shows it here.

  scripts/ncu_opcode_mix.py EXPORT.csv [--top N] [--variants]
"""
import argparse
import collections
import csv
import re
import sys


def read_rows(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    header = next((i for i, line in enumerate(lines) if line.startswith('"Address"')), None)
    if header is None:
        sys.exit(f"ncu_opcode_mix: {path} has no SASS table (a line starting with \"Address\")")
    return list(csv.DictReader(lines[header:]))


def opcode(source, variants):
    text = re.sub(r"^@!?U?P\w+\s+", "", source.strip())  # drop the guard predicate
    op = text.split(" ")[0]
    return op if variants else op.split(".")[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("export")
    ap.add_argument("--top", type=int, default=20, help="rows of the table (default 20)")
    ap.add_argument("--variants", action="store_true", help="IMAD.MOV.U32 rather than IMAD")
    args = ap.parse_args()
    rows = read_rows(args.export)
    executed, stalls = collections.Counter(), collections.Counter()
    for r in rows:
        op = opcode(r["Source"], args.variants)
        executed[op] += int(r["Instructions Executed"] or 0)
        stalls[op] += int(r["Warp Stall Sampling (All Samples)"] or 0)
    total, samples = sum(executed.values()), sum(stalls.values())
    if total == 0:
        sys.exit(f"ncu_opcode_mix: {args.export} counts no executed instructions")
    print(f"{total / 1e6:.1f} M warp instructions executed, {len(rows)} SASS instructions, "
          f"{samples} stall samples\n")
    print("| opcode | % of instructions | % of stall samples |\n|---|---|---|")
    for op, n in executed.most_common(args.top):
        print(f"| {op} | {100 * n / total:.1f} | {100 * stalls[op] / max(samples, 1):.1f} |")


if __name__ == "__main__":
    main()
