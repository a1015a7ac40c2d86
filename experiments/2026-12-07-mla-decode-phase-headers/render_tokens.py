#!/usr/bin/env python3
"""Where two template trees' code parts, token by token: renders mla_decode/mla_decode.hip of each
(quoted includes inlined once, as tuner/jit/templates.cpp does, #pragma once dropped), drops the
comments, splits the rest into C++ tokens and prints each edit between the two streams with a few
tokens of context, then the counts. No edit: the compiler sees the same tokens (line numbers
aside), which is what cutting a kernel into included phases should leave.

  render_tokens.py OLD_TEMPLATES NEW_TEMPLATES
"""
import difflib
import re
import sys

TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|//[^\n]*|/\*.*?\*/|#\s*pragma[^\n]*|[A-Za-z_]\w*|\d[\w.]*'
                   r'|::|->|<<|>>|&&|\|\||[<>=!+\-*/%&|^]=|\+\+|--|\S', re.S)


def render(root, path, done, out):
    if path in done:
        return
    done.add(path)
    for line in open(f"{root}/{path}"):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            render(root, m.group(1), done, out)
        elif not line.strip().startswith("#pragma once"):
            out.append(line)


def tokens(root):
    out = []
    render(root, "mla_decode/mla_decode.hip", set(), out)
    return [" ".join(t.split()) if t.startswith("#") else t for t in TOKEN.findall("".join(out))
            if not t.startswith("//") and not t.startswith("/*")]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = tokens(sys.argv[1]), tokens(sys.argv[2])
    edits = 0
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op != "equal":
            edits += 1
            print(f"{op}: ... {' '.join(a[max(0, i1 - 6):i1])} [{' '.join(a[i1:i2])}] -> [{' '.join(b[j1:j2])}]")
    print(f"{len(a)} and {len(b)} tokens, {edits} edit(s)")


if __name__ == "__main__":
    main()
