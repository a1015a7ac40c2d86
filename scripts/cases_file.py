"""The cases files of scripts/bench_table.py and scripts/bench_ab.py: one case a line, its columns
separated by '|', '#' starts a comment; the column named "flags" is split as a shell would.
Standard library only (both scripts run on the GPU machine as it is)."""
import shlex
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
