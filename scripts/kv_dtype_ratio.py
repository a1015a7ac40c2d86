#!/usr/bin/env python3
"""What one KV cache type costs against another, per key, from a sweep's winners: for every key
timed with both (equal in every key field but kv_dtype, in the same run), the winner's time with
--other over the winner's time with --base. Prints a Markdown table of the geometric mean, range
and count of those ratios by rows per request (heads x block_len, in powers of two) and batch,
then the keys where --other is slower and the largest ratio.

  ktune query --db DB --kernel mla_decode --winners --format json > winners.json
  scripts/kv_dtype_ratio.py winners.json [--base bf16] [--other fp8_e4m3fn]   (- reads stdin)
"""
import argparse
import json
import math
import sys


def fail(message):
    sys.exit(f"kv_dtype_ratio: {message}")


def load(path):
    try:
        text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
        rows = json.loads(text)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"cannot read the winners {path}: {e} (write them with `ktune query --winners --format json`)")
    if not isinstance(rows, list):
        fail(f"{path} holds no list of measurements (`ktune query --winners --format json` writes one)")
    return rows


def rows_bucket(rows_per_request):
    bucket = 1
    while bucket < rows_per_request:
        bucket *= 2
    return bucket


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("winners", help="`ktune query --winners --format json` output, or - for stdin")
    ap.add_argument("--base", default="bf16", help="the kv_dtype divided by (default bf16)")
    ap.add_argument("--other", default="fp8_e4m3fn", help="the kv_dtype compared (default fp8_e4m3fn)")
    a = ap.parse_args()
    times = {}  # (run, key fields but kv_dtype) -> ((rows bucket, batch), {kv_dtype: median_us})
    for i, m in enumerate(load(a.winners)):
        try:
            key = dict(m["key"])
            dtype = key.pop("kv_dtype")
            median = float(m["median_us"])
            rows, batch = int(key["heads"]) * int(key["block_len"]), int(key["batch"])
            rest = (m["run"], tuple(key.items()))
        except (KeyError, TypeError, ValueError) as e:
            fail(f"measurement {i} is not a winner of mla_decode's keys (heads, block_len, kv_dtype, batch): {e!r}")
        times.setdefault(rest, ((rows_bucket(rows), batch), {}))[1][dtype] = median
    cells = {}  # (rows bucket, batch) -> [(ratio, run, key)]
    for (run, key), (cell, by_dtype) in times.items():
        if a.base in by_dtype and a.other in by_dtype:
            cells.setdefault(cell, []).append((by_dtype[a.other] / by_dtype[a.base], run, key))
    if not cells:
        fail(f"no key was timed with both kv_dtype {a.base} and {a.other}")
    buckets = sorted({b for b, _ in cells})
    batches = sorted({n for _, n in cells})
    print(f"{a.other} winner / {a.base} winner, per key: geometric mean [min, max] (keys)\n")
    print("| rows per request | " + " | ".join(f"batch {n}" for n in batches) + " |")
    print("|---" * (len(batches) + 1) + "|")
    for b in buckets:
        out = []
        for n in batches:
            ratios = [r for r, _, _ in cells.get((b, n), [])]
            out.append(f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} "
                       f"[{min(ratios):.2f}, {max(ratios):.2f}] ({len(ratios)})" if ratios else "")
        low = b // 2 + 1 if b > 1 else 1
        print(f"| {low}-{b} | " + " | ".join(out) + " |")
    pairs = [p for c in cells.values() for p in c]
    slower = sum(1 for r, _, _ in pairs if r > 1)
    worst = max(pairs, key=lambda p: p[0])
    geomean = math.exp(sum(math.log(r) for r, _, _ in pairs) / len(pairs))
    print(f"\n{len(pairs)} keys; {a.other} slower than {a.base} on {slower}; geometric mean {geomean:.3f}; "
          f"largest {worst[0]:.2f} (run {worst[1]}, "
          + ",".join(f"{f}={v}" for f, v in worst[2]) + ")")


if __name__ == "__main__":
    main()
