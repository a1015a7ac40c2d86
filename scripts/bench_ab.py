#!/usr/bin/env python3
"""On the GPU machine: an A/B of `ktune bench` cases, run in rounds that alternate the cases (each
round runs every case once, in order), so that drift of the clocks or of the machine falls on all
of them alike. Prints a Markdown table (each case's medians of every round, and their median);
writes every `ktune bench --json` object to --json-out as it comes. Standard library only.

  scripts/bench_ab.py CASES [--rounds N] [--ktune PATH] [--json-out F] [--timeout S]
                            [--probe PATH [--probe-cases FILE]]

CASES lines: `label | bench flags` ('#' starts a comment); a case whose bench fails, or times
without verifying (--no-verify), counts as failed in its round (its error on stderr) and the
rounds go on.

--probe: a second ktune (a probe's build) against --ktune's ("main"). Each round runs main's
cases, then the probe's (--probe-cases, or CASES again) with the probe's ktune; the table gives
each probe case against main's case of the same label, or else of the label's first word (so
"h12 keys=32" is set against main's "h12").
"""
import argparse
import json
import shlex
import statistics
import sys

from ktune_bench import read_cases, run_bench


def read_side(path):
    return [(c["label"], c["flags"]) for c in read_cases(path, ("label", "flags"))]


def counterparts(main_cases, probe_cases, probe_path):
    """Each probe label's main label; exits naming a probe case that has none."""
    labels = {label for label, _ in main_cases}
    pairs = {}
    for label, _ in probe_cases:
        base = label if label in labels else label.split()[0]
        if base not in labels:
            sys.exit(f"{probe_path}: the probe's case {label!r} has no case of main's named {label!r} or {base!r}")
        pairs[label] = base
    return pairs


def cell(times):
    return ", ".join("failed" if t is None else f"{t:.1f}" for t in times)


def median(times):
    return None if not times or None in times else statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ktune", default="build/ktune")
    ap.add_argument("--json-out")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one bench may take")
    ap.add_argument("--probe", help="a second ktune, timed against --ktune's")
    ap.add_argument("--probe-cases", help="the probe's cases (default: CASES)")
    args = ap.parse_args()
    if args.probe_cases and not args.probe:
        ap.error("--probe-cases needs --probe")
    sides = [("main", args.ktune, read_side(args.cases))]
    if args.probe:
        probe_path = args.probe_cases or args.cases
        sides.append(("probe", args.probe, read_side(probe_path)))
        pairs = counterparts(sides[0][2], sides[1][2], probe_path)
    times = {(side, label): [] for side, _, cases in sides for label, _ in cases}
    out = open(args.json_out, "w") if args.json_out else None
    for r in range(args.rounds):
        for side, ktune, cases in sides:
            for label, flags in cases:
                cmd = [ktune, "bench", *flags, "--json"]
                result, error = run_bench(cmd, args.timeout)
                if result is not None and result.get("verified") is False:
                    error = "not verified (--no-verify): its time says nothing"
                if error:
                    print(f"ab: {shlex.join(cmd)}: {error}", file=sys.stderr)
                times[(side, label)].append(None if error else result["median_us"])
                record = {"round": r, **({"side": side} if args.probe else {}), "label": label,
                          "flags": shlex.join(flags), "result": result}
                if out:
                    out.write(json.dumps(record) + "\n")
                    out.flush()
    if out:
        out.close()
    if args.probe:
        print(f"{args.rounds} rounds, `{args.ktune} bench FLAGS --json` (main) then `{args.probe} bench FLAGS --json` "
              "(probe), cases in order each round; µs, median of the rounds\n")
        print("| case | main | probe | probe / main | main's rounds | probe's rounds | probe's flags |")
        print("|---|---|---|---|---|---|---|")
        for label, flags in sides[1][2]:
            a, b = times[("main", pairs[label])], times[("probe", label)]
            ma, mb = median(a), median(b)
            figures = "failed | | " if ma is None or mb is None else f"{ma:.1f} | {mb:.1f} | {mb / ma:.3f} "
            print(f"| {label} | {figures}| {cell(a)} | {cell(b)} | `{shlex.join(flags)}` |")
    else:
        print(f"{args.rounds} rounds, `{args.ktune} bench FLAGS --json`, cases in order each round\n")
        print("| case | median of rounds (µs) | each round (µs) | flags |")
        print("|---|---|---|---|")
        for label, flags in sides[0][2]:
            ok = [t for t in times[("main", label)] if t is not None]
            mid = f"{statistics.median(ok):.1f}" if ok else "failed"
            print(f"| {label} | {mid} | {cell(times[('main', label)])} | `{shlex.join(flags)}` |")
    return 0 if all(t is not None for ts in times.values() for t in ts) else 1


if __name__ == "__main__":
    sys.exit(main())
