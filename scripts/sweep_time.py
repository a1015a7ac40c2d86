#!/usr/bin/env python3
"""How long a sweep spent on its keys, from the measured_at stamps of its database: a sweep commits
each result as it arrives, so the gap before a row is the time its candidate took (for the first
candidate of a key, the key's set-up too: inputs, CPU references, uploads). Gaps longer than
--max-gap are pauses between resumed calls and are left out, as is the database's first row.

Per group of keys (--by FIELD, a key field such as batch): keys, candidates, the first candidate
of a key (median, sum) and the others (median, sum), in seconds; a Markdown table. --keys-of
OTHER.db keeps only the keys that OTHER.db measured: to compare a shard swept by one build with
the same keys of an earlier sweep. Standard library only (the GPU machine has no sqlite3 shell).

  scripts/sweep_time.py DB [--by FIELD] [--keys-of OTHER.db] [--max-gap S]
"""
import argparse
import collections
import datetime
import sqlite3
import statistics
import sys


def stamp(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def keys_of(path):
    with sqlite3.connect(path) as c:
        return {k for (k,) in c.execute("SELECT DISTINCT key FROM measurements")}


def field(key, name):
    for part in key.split(","):
        k, _, v = part.partition("=")
        if k == name:
            return v
    sys.exit(f"sweep_time: key '{key}' has no field '{name}'")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--by", help="a key field to group by (default: all keys together)")
    ap.add_argument("--keys-of", help="only the keys this other database measured")
    ap.add_argument("--max-gap", type=float, default=60.0)
    args = ap.parse_args()
    with sqlite3.connect(args.db) as c:
        rows = c.execute("SELECT key, measured_at FROM measurements ORDER BY id").fetchall()
    if not rows:
        sys.exit(f"sweep_time: {args.db} has no measurements")
    wanted = keys_of(args.keys_of) if args.keys_of else None
    seen = set()
    first, other, keys = (collections.defaultdict(list) for _ in range(3))
    previous = None
    for key, at in rows:
        now = stamp(at)
        gap = None if previous is None else now - previous
        previous = now
        is_first = key not in seen
        seen.add(key)
        if gap is None or gap > args.max_gap or (wanted is not None and key not in wanted):
            continue
        group = field(key, args.by) if args.by else "all"
        (first if is_first else other)[group].append(gap)
        keys[group].append(key)
    if not keys:
        sys.exit("sweep_time: no candidate to account for (no key in common, or every gap a pause)")

    def order(g):
        return (0, int(g)) if g.lstrip("-").isdigit() else (1, g)

    print(f"| {args.by or 'group'} | keys | candidates | first of a key: median s | sum s "
          "| others: median s | sum s | total s |")
    print("|---|---|---|---|---|---|---|---|")
    for g in sorted(keys, key=order):
        f, o = first[g], other[g]
        med = lambda xs: f"{statistics.median(xs):.4f}" if xs else "-"
        print(f"| {g} | {len(set(keys[g]))} | {len(f) + len(o)} | {med(f)} | {sum(f):.1f} | {med(o)} | {sum(o):.1f} "
              f"| {sum(f) + sum(o):.1f} |")


if __name__ == "__main__":
    main()
