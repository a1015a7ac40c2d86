#!/usr/bin/env python3
"""Calls ktune_runtime's C API (ktune/runtime.h) from Python with ctypes.

  ctypes_runtime_test.py LIBRARY GAP_DB

GAP_DB is a tuning database for the package's templates with a declared gap of
{heads=16, block_len=2, causal=0, kv_dtype=fp8_e4m3fn, batch=32} whose fallback is block_len 4 in
bf16; the script sets KTUNE_DB to it before the first call. Runs without a GPU: the status paths
(kernel, gap with fallback, unsupported, no device, invalid argument) need none. Exits 1 with the
failed checks listed."""
import ctypes
import os
import sys

OK, OK_FALLBACK, GAP, UNSUPPORTED, NO_DEVICE, NO_CODE_OBJECT, INVALID_ARGUMENT, LAUNCH_FAILED = range(8)


class Key(ctypes.Structure):
    _fields_ = [("heads", ctypes.c_int64), ("block_len", ctypes.c_int64), ("causal", ctypes.c_int64),
                ("kv_dtype", ctypes.c_int64), ("batch", ctypes.c_int64)]


class Args(ctypes.Structure):
    _fields_ = [("stream", ctypes.c_void_p), ("q", ctypes.c_void_p), ("kv_cache", ctypes.c_void_p),
                ("block_table", ctypes.c_void_p), ("kv_lens", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p), ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
                ("softmax_scale", ctypes.c_float), ("kv_scale", ctypes.c_float), ("max_pages", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("max_kv_len", ctypes.c_int32), ("key", Key)]


class Result(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("has_fallback_key", ctypes.c_int32), ("fallback_key", Key),
                ("splits", ctypes.c_int32), ("from_override", ctypes.c_int32), ("message", ctypes.c_char * 512)]


def main():
    library, gap_db = sys.argv[1], sys.argv[2]
    os.environ["KTUNE_DB"] = gap_db  # read by the runtime at its first call
    os.environ.pop("KTUNE_PACKAGE_DIR", None)
    lib = ctypes.CDLL(library)
    lib.ktune_runtime_info.restype = ctypes.c_char_p
    lib.ktune_status_name.restype = ctypes.c_char_p
    for f in ("ktune_mla_decode", "ktune_mla_decode_select_for_arch", "ktune_runtime_override_status"):
        getattr(lib, f).restype = ctypes.c_int

    failures = []

    def check(what, condition, detail=""):
        print(("ok    " if condition else "FAIL  ") + what + (f": {detail}" if detail and not condition else ""))
        if not condition:
            failures.append(what)

    info = lib.ktune_runtime_info().decode()
    check("info names the package", "mla_decode package for sm_90a" in info, info)
    check("status names", lib.ktune_status_name(GAP) == b"gap" and lib.ktune_status_name(NO_DEVICE) == b"no_device")

    r = Result()
    status = lib.ktune_runtime_override_status(ctypes.byref(r))
    check("KTUNE_DB is in use", status == OK and r.status == OK, r.message.decode())

    status = lib.ktune_mla_decode_select_for_arch(b"sm_90a", ctypes.byref(Key(16, 1, 1, 0, 32)), ctypes.byref(r))
    check("tuned key: kernel from the compiled table", status == OK and r.from_override == 0 and
          r.message == b"exact match", f"{status} {r.message.decode()}")

    status = lib.ktune_mla_decode_select_for_arch(b"sm_90a", ctypes.byref(Key(16, 2, 0, 1, 32)), ctypes.byref(r))
    fallback = (r.fallback_key.heads, r.fallback_key.block_len, r.fallback_key.causal, r.fallback_key.kv_dtype,
                r.fallback_key.batch)
    check("declared gap: status gap with its fallback key", status == GAP and r.has_fallback_key == 1 and
          fallback == (16, 4, 0, 0, 32) and r.from_override == 1 and b"aiter" in r.message,
          f"{status} {fallback} {r.message.decode()}")

    status = lib.ktune_mla_decode_select_for_arch(b"gfx942", ctypes.byref(Key(16, 1, 1, 0, 32)), ctypes.byref(r))
    check("unknown arch: unsupported", status == UNSUPPORTED and b"unknown arch" in r.message, r.message.decode())

    buffer = ctypes.create_string_buffer(64)
    address = ctypes.addressof(buffer)
    args = Args(None, address, address, address, address, address, None, None, 0, 0.07, 1.0, 64, 64, 4096,
                Key(16, 1, 1, 0, 32))
    status = lib.ktune_mla_decode(ctypes.byref(args), ctypes.byref(r))
    check("launch without a current device: no_device", status == NO_DEVICE, f"{status} {r.message.decode()}")

    status = lib.ktune_mla_decode(None, ctypes.byref(r))
    check("NULL arguments: invalid_argument", status == INVALID_ARGUMENT, r.message.decode())
    status = lib.ktune_mla_decode(None, None)
    check("NULL result pointer is allowed", status == INVALID_ARGUMENT)

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
