#!/usr/bin/env python3
"""Compiles mla_decode_mma instances for an AMD target with Debian's clang (no ROCm, no GPU) and
reports what the assembly holds: the MFMA instructions by name, VGPRs, AGPRs, SGPRs, spills and
scratch bytes. The source is rendered as ktune renders it (tuner/jit/templates.cpp: each quoted #include
inlined once), with hip_runtime.h first (hipRTC pre-includes it) and an explicit instantiation per
instance (hipRTC instantiates through name expressions).

  compile_isa.py --arch gfx942 --instance 16,64,256,5,5,2,1 [--instance ...] [--templates DIR]
                 [--clang clang-19] [--asm-dir DIR]

An instance is ROWS,KEYS,THREADS,STAGES,MATH,KV_DTYPE,CAUSAL (MASK_SHIFT 0). The clang command is
printed before each compile; the exit status is 1 where a compile fails.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SIGNATURE = ("(const ktune::u16*, const ktune::u8*, const ktune::i32*, const ktune::i32*, ktune::u16*, float*, "
             "float*, float*, float, float, int, int, int, int, int)")


def render(root, path, done, out):
    if path in done:
        return
    done.add(path)
    with open(os.path.join(root, path)) as f:
        for line in f:
            m = INCLUDE.match(line)
            if m:
                render(root, m.group(1), done, out)
            else:
                out.append(line)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", required=True)
    ap.add_argument("--instance", action="append", required=True)
    ap.add_argument("--templates", default=os.path.join(here, "..", "..", "templates"))
    ap.add_argument("--clang", default="clang-22")
    ap.add_argument("--asm-dir")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    lines = []
    render(args.templates, "mla_decode/mla_decode.hip", set(), lines)
    resource = subprocess.run([args.clang, "-print-resource-dir"], check=True, capture_output=True,
                              text=True).stdout.strip()
    failed = False
    for inst in args.instance:
        params = [int(v) for v in inst.split(",")] + [0]
        if len(params) != 8:
            sys.exit(f"--instance {inst}: ROWS,KEYS,THREADS,STAGES,MATH,KV_DTYPE,CAUSAL")
        name = "ktune::mla_decode_mma<" + ", ".join(map(str, params)) + ">"
        source = "#include <hip/hip_runtime.h>\n" + "".join(lines) + f"\ntemplate __global__ void {name}{SIGNATURE};\n"
        with tempfile.NamedTemporaryFile("w", suffix=".hip", delete=False) as f:
            f.write(source)
        cmd = [args.clang, "-x", "hip", f"--offload-arch={args.arch}", "-nogpulib", "--cuda-device-only", "-O3",
               "-std=c++20", "-D__AMDGCN_WAVEFRONT_SIZE=64", f"-I{resource}/include/cuda_wrappers",
               "-I/usr/include/hip", "-Wno-unused-command-line-argument", "-S", "-o", "-", f.name]
        print("$", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, capture_output=True, text=True)
        os.unlink(f.name)
        if r.returncode != 0:
            print(f"{name} {args.arch}: compile failed\n{r.stderr}")
            failed = True
            continue
        asm = r.stdout
        if args.asm_dir:
            os.makedirs(args.asm_dir, exist_ok=True)
            with open(os.path.join(args.asm_dir, f"{args.arch}_{inst.replace(',', '_')}.s"), "w") as out:
                out.write(asm)
        mfma = collections.Counter(re.findall(r"^\s*(v_mfma\w+)", asm, re.M))
        # The code object's metadata (amdhsa.kernels): registers (vgpr_count: architectural and
        # accumulation VGPRs together), spills, scratch bytes a lane.
        meta = {k: re.search(rf"^\s*\.{k}:\s*(\S+)", asm, re.M) for k in
                ("vgpr_count", "sgpr_count", "vgpr_spill_count", "sgpr_spill_count",
                 "private_segment_fixed_size")}
        meta = {k: (v.group(1) if v else "?") for k, v in meta.items()}
        agprs = re.search(r"^\s*; NumAgprs:\s*(\d+)", asm, re.M)  # clang 19 prints it as a number
        if agprs:
            meta["agprs"] = agprs.group(1)
        print(f"{name} {args.arch}: " + " ".join(f"{k}={v}" for k, v in meta.items()))
        for op, n in sorted(mfma.items()):
            print(f"  {op}: {n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
