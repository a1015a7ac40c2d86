#!/usr/bin/env python3
"""Runs `ktune bench --json` for every case of a cases file and prints a Markdown table with the
measured figures, each target and whether it is met. Standard library only (runs on the GPU
machine as it is).

  scripts/bench_table.py CASES --kernel K (--db DB | --config CONFIG) [--ktune PATH] [--json-out F]
  scripts/bench_table.py --from-jsonl F    the table of bench objects written earlier by --json-out
                                           (re-renders measurements on a machine without a GPU)

CASES lines: `label | bench flags | target`, '#' starts a comment. Targets:
  ">= P% copy bandwidth", ">= T TFLOP/s", "<= R x LABEL" (median time relative to row LABEL),
  each optionally followed by "on DEVICE" (a device name as `ktune devices` prints it): a target
  set for one GPU is judged only on that GPU; elsewhere its figure is shown and its verdict is
  "n/a".
"""
import argparse
import json
import re
import shlex
import sys

from ktune_bench import read_cases, run_bench


def target_device(target):
    """(the target without its "on DEVICE", DEVICE or None)."""
    m = re.fullmatch(r"(.*?)\s+on\s+(\S.*)", target)
    return (m[1], m[2]) if m else (target, None)


def judge(target, row, by_label):
    """(value text, met) of `target` for `row`; met is None where the target cannot be evaluated
    or is another device's."""
    bare, device = target_device(target)
    if device is not None:
        value, met = judge(bare, row, by_label)
        return (value, met) if row["device"]["name"] == device else (f"{value} (the target is the {device}'s)", None)
    if m := re.fullmatch(r">=\s*([\d.]+)%\s*copy bandwidth", target):
        return f"{100 * row['frac_copy_bw']:.1f}%", 100 * row["frac_copy_bw"] >= float(m[1])
    if m := re.fullmatch(r">=\s*([\d.]+)\s*TFLOP/s", target):
        return f"{row['tflops']:.1f} TFLOP/s", row["tflops"] >= float(m[1])
    if m := re.fullmatch(r"<=\s*([\d.]+)\s*x\s*(\w+)", target):
        base = by_label.get(m[2])
        if base is None or "median_us" not in base:
            return f"no row {m[2]}", None
        ratio = row["median_us"] / base["median_us"]
        return f"{ratio:.3f} x", ratio <= float(m[1])
    sys.exit(f"unknown target {target!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cases", nargs="?")
    ap.add_argument("--kernel")
    ap.add_argument("--from-jsonl", help="print the table of these bench objects instead of running ktune")
    ap.add_argument("--db")
    ap.add_argument("--config")
    ap.add_argument("--ktune", default="build/ktune")
    ap.add_argument("--json-out", help="also write every bench JSON object, one per line, here")
    a = ap.parse_args()
    if a.from_jsonl:
        with open(a.from_jsonl) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        print_table(rows, {r["label"]: r for r in rows})
        return
    if a.cases is None or a.kernel is None:
        sys.exit("give CASES and --kernel (or --from-jsonl)")
    if (a.db is None) == (a.config is None):
        sys.exit("give exactly one of --db and --config")
    source = ["--db", a.db] if a.db else ["--config", a.config]
    rows, by_label = [], {}
    for case in read_cases(a.cases, ("label", "flags", "target")):
        cmd = [a.ktune, "bench", "--kernel", a.kernel, *case["flags"], *source, "--json"]
        print("+ " + shlex.join(cmd), file=sys.stderr)
        result, error = run_bench(cmd)
        row = {"label": case["label"], "target": case["target"], "command": shlex.join(cmd)}
        if error:
            row["error"] = error
        else:
            row.update(result)
        rows.append(row)
        by_label[case["label"]] = row
    if a.json_out:
        with open(a.json_out, "w") as f:
            for row in rows:
                f.write(json.dumps(row) + "\n")
    print_table(rows, by_label)


def print_table(rows, by_label):
    device = next((r["device"]["name"] for r in rows if "device" in r), "no device")
    copy = next((r["copy_gbps"] for r in rows if "copy_gbps" in r), None)
    probe = next((r["matrix_probe"] for r in rows if r.get("matrix_probe")), None)
    # The probe's instruction ("wgmma m64n256k16 bf16"); records of ktune builds before 2026-12-06
    # have " peak" after it.
    probe = probe and probe.removesuffix(" peak")
    print(f"Device: {device}; copy bandwidth measured in each run (first: {copy:.0f} GB/s)." if copy else
          f"Device: {device}.")
    matrix = next((r["matrix_tflops"] for r in rows if r.get("matrix_tflops")), None)
    if probe:
        print(f"Matrix-core roof: the {probe} peak, measured in each run (first: {matrix:.0f} TFLOP/s)." if matrix else
              f"Matrix-core roof: the {probe} peak, not measured.")
    others = sorted({d for r in rows if (d := target_device(r["target"])[1]) not in (None, device)})
    if others:
        print(f"Targets set for {', '.join(others)} are not judged on this device.")
    print()
    print("| case | config | median µs | p10 | p90 | GB/s | % copy BW | TFLOP/s | % matrix | target | measured | met |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            verdict = "n/a" if target_device(r["target"])[1] not in (None, device) else "no"
            print(f"| {r['label']} | | | | | | | | | {r['target']} | error: {r['error']} | {verdict} |")
            continue
        matrix = f"{100 * r['frac_matrix']:.1f}%" if r.get("frac_matrix") else "n/a"
        cfg = " ".join(f"{k}={v}" for k, v in r["config"].items())
        value, met = judge(r["target"], r, by_label)
        verdict = {True: "yes", False: "**no**", None: "n/a"}[met]
        print(f"| {r['label']} | {cfg} | {r['median_us']:.1f} | {r['p10_us']:.1f} | {r['p90_us']:.1f} | "
              f"{r['gbps']:.0f} | {100 * r['frac_copy_bw']:.1f}% | {r['tflops']:.1f} | {matrix} | {r['target']} | {value} | "
              f"{verdict} |")
    print()
    print("Commands:")
    print()
    print("```")
    for r in rows:
        print(r["command"])
    print("```")


if __name__ == "__main__":
    main()
