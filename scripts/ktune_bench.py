"""What scripts/bench_table.py and scripts/bench_ab.py share: their cases files (one case a line,
columns separated by '|', '#' starts a comment; the column named "flags" is split as a shell
would) and one `ktune bench --json` run. Standard library only (both scripts run on the GPU
machine as it is)."""
import json
import shlex
import subprocess
import sys


def read_cases(path, columns):
    """The cases of `path` as dicts keyed by `columns`; exits naming the line that has another
    number of columns, or an empty one, or when the file has no case."""
    cases = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != len(columns) or not all(parts):
                sys.exit(f"{path}:{n}: expected '{' | '.join(columns)}', got {line!r}")
            case = dict(zip(columns, parts))
            if "flags" in case:
                case["flags"] = shlex.split(case["flags"])
            cases.append(case)
    if not cases:
        sys.exit(f"{path}: no cases")
    return cases


def run_bench(cmd, timeout=300):
    """(the bench object, None) of `cmd` (a `ktune bench ... --json` command line), or (None, the
    last line of its error) where it fails or outlasts `timeout` seconds."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"no result in {timeout} s"
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or [f"exit {done.returncode}, no message"])[-1]
    return json.loads(done.stdout.strip().splitlines()[-1]), None
