#!/usr/bin/env python3
"""Whether a template change changes the machine code: compares, kernel by kernel, the code of two
ktune code-object caches (`ktune [--templates DIR] compile ... --cache-dir DIR`, one per template
tree). A kernel's code is the bytes of its function symbol in the ELF code object that each cache
entry holds (an NVRTC cubin or a hipRTC code object); kernels are matched by symbol name, which
the template instance's parameters make unique. A refactor that should change nothing is proven
so without a GPU when every kernel is identical; the kernels that differ are the ones whose GPU
tests and timings must run again.

  scripts/code_objects_diff.py OLD_CACHE_DIR NEW_CACHE_DIR
Exit status: 0 every kernel identical, 1 some differ or are only in one cache, 2 unreadable input.
"""
import argparse
import glob
import hashlib
import os
import struct
import sys

SHT_SYMTAB, SHT_NOBITS, STT_FUNC = 2, 8, 2
MACHINES = {190: "cuda", 224: "amdgpu"}


def fail(message):
    print(f"code_objects_diff: {message}", file=sys.stderr)
    sys.exit(2)


def kernels(path):
    """{(target, symbol): (size, sha256)} of the function symbols of the ELF code object in a cache
    entry; target names the ELF's machine and flags (the arch), since both vendors' compilers give
    an instance the same symbol."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    start = blob.find(b"\x7fELF")
    if start < 0 or blob[start + 4] != 2 or blob[start + 5] != 1:
        fail(f"{path} holds no 64-bit little-endian ELF code object")
    elf = blob[start:]
    try:
        machine, = struct.unpack_from("<H", elf, 0x12)
        flags, = struct.unpack_from("<I", elf, 0x30)
        target = f"{MACHINES.get(machine, f'machine {machine}')} e_flags {flags:#x}"
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
        sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize) for k in range(shnum)]
        out = {}
        for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
            if sh_type != SHT_SYMTAB:
                continue
            strtab = sections[link]
            for k in range(size // entsize):
                name, info, _, shndx, value, sym_size = struct.unpack_from("<IBBHQQ", elf, offset + k * entsize)
                if info & 0xF != STT_FUNC or sym_size == 0 or shndx >= len(sections):
                    continue
                text = sections[shndx]
                if text[1] == SHT_NOBITS:
                    continue
                name_at = strtab[4] + name
                symbol = elf[name_at:elf.index(b"\0", name_at)].decode()
                begin = text[4] + value - text[3]  # file offset + (symbol address - section address)
                out[(target, symbol)] = (sym_size, hashlib.sha256(elf[begin:begin + sym_size]).hexdigest())
        return out
    except (struct.error, IndexError, ValueError, UnicodeDecodeError) as e:
        fail(f"{path}: malformed ELF code object ({e})")


def cache(directory):
    if not os.path.isdir(directory):
        fail(f"{directory} is no directory (a cache of `ktune compile --cache-dir`)")
    entries = sorted(glob.glob(os.path.join(directory, "*", "*.kco")))
    if not entries:
        fail(f"{directory} holds no code objects (*/*.kco: fill it with `ktune compile --cache-dir`)")
    code = {}  # (target, symbol) -> every (size, sha256) it has (a kernel can be in several programs)
    for entry in entries:
        for kernel, body in kernels(entry).items():
            code.setdefault(kernel, set()).add(body)
    return code


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old")
    ap.add_argument("new")
    a = ap.parse_args()
    old, new = cache(a.old), cache(a.new)
    differ = sorted(s for s in old.keys() & new.keys() if old[s] != new[s])
    only_old, only_new = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    for k in differ:
        sizes = [", ".join(str(n) for n in sorted({size for size, _ in side[k]})) for side in (old, new)]
        print(f"differs: {k[0]} {k[1]} ({sizes[0]} -> {sizes[1]} bytes)")
    for k in only_old:
        print(f"only in {a.old}: {k[0]} {k[1]}")
    for k in only_new:
        print(f"only in {a.new}: {k[0]} {k[1]}")
    same = len(old.keys() & new.keys()) - len(differ)
    print(f"{same} kernels identical, {len(differ)} differ, {len(only_old)} only in the old cache, "
          f"{len(only_new)} only in the new")
    sys.exit(1 if differ or only_old or only_new else 0)


if __name__ == "__main__":
    main()
