#!/usr/bin/env python3
"""On the GPU machine: an A/B of `ktune bench` cases, run in rounds that alternate the cases (each
round runs every case once, in order), so that drift of the clocks or of the machine falls on all
of them alike. Prints a Markdown table (each case's medians of every round, and their median);
writes every `ktune bench --json` object to --json-out. Standard library only.

  scripts/bench_ab.py CASES [--rounds N] [--ktune PATH] [--json-out F]

CASES lines: `label | bench flags` ('#' starts a comment); a case whose bench fails counts as
failed in its round (its error on stderr) and the rounds go on.
"""
import argparse
import json
import shlex
import statistics
import sys

from ktune_bench import read_cases, run_bench


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ktune", default="build/ktune")
    ap.add_argument("--json-out")
    args = ap.parse_args()
    cases = [(c["label"], c["flags"]) for c in read_cases(args.cases, ("label", "flags"))]
    medians = {label: [] for label, _ in cases}
    records = []
    for r in range(args.rounds):
        for label, flags in cases:
            cmd = [args.ktune, "bench", *flags, "--json"]
            result, error = run_bench(cmd)
            if error:
                print(f"ab: {shlex.join(cmd)}: {error}", file=sys.stderr)
            records.append({"round": r, "label": label, "flags": shlex.join(flags), "result": result})
            medians[label].append(None if result is None else result["median_us"])
    if args.json_out:
        with open(args.json_out, "w") as f:
            f.writelines(json.dumps(record) + "\n" for record in records)
    print(f"{args.rounds} rounds, `{args.ktune} bench FLAGS --json`, cases in order each round\n")
    print("| case | median of rounds (µs) | each round (µs) | flags |")
    print("|---|---|---|---|")
    for label, flags in cases:
        ok = [m for m in medians[label] if m is not None]
        each = ", ".join("failed" if m is None else f"{m:.1f}" for m in medians[label])
        mid = f"{statistics.median(ok):.1f}" if ok else "failed"
        print(f"| {label} | {mid} | {each} | `{shlex.join(flags)}` |")
    return 0 if all(m is not None for ms in medians.values() for m in ms) else 1


if __name__ == "__main__":
    sys.exit(main())
