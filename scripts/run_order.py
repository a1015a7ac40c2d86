#!/usr/bin/env python3
"""How close a key's first candidate comes to its best under two run orders, from a complete
sweep's ok medians: the sweep runs a key's configs fastest first on a reference key measured
before it (tuner/sweep/runner.cpp), and the closer that first candidate is to the key's best, the
tighter the screening cutoff and the more slow candidates are abandoned after one launch.

  previous  the reference is the previous key of the plan (the shard's plan with --shard I/N)
  ranked    the earlier key most similar by --fields (equal in the first field, then the next,
            ...; of equals the nearest in the plan), as Family::ranking_fields orders them

The plan order is the database's (each key's first row id); a key's first candidate is the
reference's fastest config that the key also timed. Prints, per rule, the keys compared, the
geometric mean of first / best and how many keys' first took more than 1.25x their best.

  scripts/run_order.py DB --fields F1,F2,... [--shard I/N]
"""
import argparse
import math
import sqlite3
import sys


def parse_key(key):
    return dict(part.split("=", 1) for part in key.split(","))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--fields", required=True, help="ranking fields, strongest first")
    ap.add_argument("--shard", default="0/1", help="I/N: the keys of the plan with index %% N == I")
    a = ap.parse_args()
    fields = a.fields.split(",")
    index, count = (int(x) for x in a.shard.split("/"))
    medians, first_row = {}, {}
    with sqlite3.connect(a.db) as c:
        query = "SELECT key, config, median_us, id FROM measurements WHERE status = 'ok' AND median_us > 0"
        for key, config, median, row in c.execute(query):
            medians.setdefault(key, {})[config] = median
            first_row[key] = min(first_row.get(key, row), row)
    if not medians:
        sys.exit(f"run_order: {a.db} has no ok measurements")
    plan = sorted(medians, key=first_row.get)
    parsed = {k: parse_key(k) for k in plan}
    for name in fields:
        if name not in parsed[plan[0]]:
            sys.exit(f"run_order: key '{plan[0]}' has no field '{name}'")
    plan = [k for i, k in enumerate(plan) if i % count == index]

    def similarity(a_key, b_key):
        return tuple(parsed[a_key][f] == parsed[b_key][f] for f in fields)

    def ranked(i):
        best = None
        for j in range(i - 1, -1, -1):  # nearest first: a later equal does not replace it
            if best is None or similarity(plan[i], plan[j]) > similarity(plan[i], best):
                best = plan[j]
        return best

    rules = {"previous": lambda i: plan[i - 1], "ranked": ranked}
    print("| rule | keys | first / best (geometric mean) | keys over 1.25x |")
    print("|---|---|---|---|")
    for name, reference in rules.items():
        ratios = []
        for i in range(1, len(plan)):
            ref = medians[reference(i)]
            shared = [cfg for cfg in sorted(ref, key=ref.get) if cfg in medians[plan[i]]]
            if shared:
                ratios.append(medians[plan[i]][shared[0]] / min(medians[plan[i]].values()))
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
        print(f"| {name} | {len(ratios)} | {mean:.3f} | {sum(r > 1.25 for r in ratios)} |")


if __name__ == "__main__":
    main()
