#!/usr/bin/env python3
"""PTX and cubin of one mla_decode instance from a template tree, compiled by NVRTC as ktune
compiles it (the rendered mla_decode/mla_decode.hip, -std=c++17 --no-source-include), to find where
two template trees' code parts when code_objects_diff.py says a kernel differs.

  instance_ptx.py TEMPLATES_DIR NAME_EXPRESSION OUT   (writes OUT.ptx and OUT.cubin)
  e.g. instance_ptx.py templates 'ktune::mla_decode_mma<16,32,128,2,1,0,0,0>' /tmp/new
"""
import ctypes
import re
import sys


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


def main():
    root, expr, out_path = sys.argv[1:4]
    out = []
    render(root, "mla_decode/mla_decode.hip", set(), out)
    nvrtc = ctypes.CDLL("libnvrtc.so")
    prog = ctypes.c_void_p()
    assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), "".join(out).encode(), b"k.cu", 0, None, None) == 0
    assert nvrtc.nvrtcAddNameExpression(prog, expr.encode()) == 0
    opts = [b"--gpu-architecture=sm_90a", b"-std=c++17", b"--no-source-include"]
    n = ctypes.c_size_t()
    if nvrtc.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)) != 0:
        nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        nvrtc.nvrtcGetProgramLog(prog, log)
        sys.exit(log.value.decode())
    for kind in ("PTX", "CUBIN"):
        getattr(nvrtc, f"nvrtcGet{kind}Size")(prog, ctypes.byref(n))
        buf = ctypes.create_string_buffer(n.value)
        getattr(nvrtc, f"nvrtcGet{kind}")(prog, buf)
        with open(f"{out_path}.{kind.lower()}", "wb") as f:
            f.write(buf.raw.rstrip(b"\0") if kind == "PTX" else buf.raw)


if __name__ == "__main__":
    main()
