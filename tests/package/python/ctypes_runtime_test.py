#!/usr/bin/env python3
"""Calls ktune_runtime's C API (ktune/runtime.h) from Python with ctypes.

  ctypes_runtime_test.py LIBRARY GAP_DB

GAP_DB is a tuning database for the package's templates with a declared gap of
{heads=16, block_len=2, causal=0, kv_dtype=fp8_e4m3fn, batch=32} whose fallback is block_len 4 in
bf16; the script sets KTUNE_DB to it before the first call. Runs without a GPU: the status paths
(kernel, gap with fallback, unsupported, no device, invalid argument) need none; both families
(mla_decode, qk_rope_cache) are called. Exits 1 with the failed checks listed."""
import ctypes
import os
import sys

OK, OK_FALLBACK, GAP, UNSUPPORTED, NO_DEVICE, NO_CODE_OBJECT, INVALID_ARGUMENT, LAUNCH_FAILED = range(8)


class Key(ctypes.Structure):
    _fields_ = [("heads", ctypes.c_int64), ("block_len", ctypes.c_int64), ("causal", ctypes.c_int64),
                ("kv_dtype", ctypes.c_int64), ("batch", ctypes.c_int64)]


class RopeKey(ctypes.Structure):
    _fields_ = [("heads", ctypes.c_int64), ("kv_dtype", ctypes.c_int64), ("q_dtype", ctypes.c_int64),
                ("rope", ctypes.c_int64), ("is_neox", ctypes.c_int64), ("tokens", ctypes.c_int64)]


class AnyKey(ctypes.Union):
    _fields_ = [("mla_decode", Key), ("qk_rope_cache", RopeKey), ("field", ctypes.c_int64 * 8)]


class RopeArgs(ctypes.Structure):
    _fields_ = [("stream", ctypes.c_void_p), ("q_nope", ctypes.c_void_p), ("q_pe", ctypes.c_void_p),
                ("kv_c", ctypes.c_void_p), ("k_pe", ctypes.c_void_p), ("positions", ctypes.c_void_p),
                ("slot_mapping", ctypes.c_void_p), ("cos_table", ctypes.c_void_p), ("sin_table", ctypes.c_void_p),
                ("kv_cache", ctypes.c_void_p), ("q_out", ctypes.c_void_p), ("workspace", ctypes.c_void_p),
                ("workspace_bytes", ctypes.c_size_t), ("k_scale", ctypes.c_float), ("q_scale", ctypes.c_float),
                ("table_rows", ctypes.c_int64), ("key", RopeKey)]


class Args(ctypes.Structure):
    _fields_ = [("stream", ctypes.c_void_p), ("q", ctypes.c_void_p), ("kv_cache", ctypes.c_void_p),
                ("block_table", ctypes.c_void_p), ("kv_lens", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p), ("workspace", ctypes.c_void_p), ("workspace_bytes", ctypes.c_size_t),
                ("softmax_scale", ctypes.c_float), ("kv_scale", ctypes.c_float), ("max_pages", ctypes.c_int32),
                ("page_size", ctypes.c_int32), ("max_kv_len", ctypes.c_int32), ("key", Key)]


class Result(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("has_fallback_key", ctypes.c_int32), ("fallback_key", AnyKey),
                ("splits", ctypes.c_int32), ("from_override", ctypes.c_int32), ("message", ctypes.c_char * 512)]


def main():
    library, gap_db = sys.argv[1], sys.argv[2]
    os.environ["KTUNE_DB"] = gap_db  # read by the runtime at its first call
    os.environ.pop("KTUNE_PACKAGE_DIR", None)
    lib = ctypes.CDLL(library)
    lib.ktune_runtime_info.restype = ctypes.c_char_p
    lib.ktune_status_name.restype = ctypes.c_char_p
    for f in ("ktune_mla_decode", "ktune_mla_decode_select_for_arch", "ktune_runtime_override_status",
              "ktune_qk_rope_cache", "ktune_qk_rope_cache_select", "ktune_qk_rope_cache_select_for_arch",
              "ktune_qk_rope_cache_workspace_size"):
        getattr(lib, f).restype = ctypes.c_int

    failures = []

    def check(what, condition, detail=""):
        print(("ok    " if condition else "FAIL  ") + what + (f": {detail}" if detail and not condition else ""))
        if not condition:
            failures.append(what)

    info = lib.ktune_runtime_info().decode()
    check("info names the packages", "mla_decode package for sm_90a" in info and
          "qk_rope_cache package for sm_90a" in info, info)
    check("status names", lib.ktune_status_name(GAP) == b"gap" and lib.ktune_status_name(NO_DEVICE) == b"no_device")

    r = Result()
    status = lib.ktune_runtime_override_status(ctypes.byref(r))
    check("KTUNE_DB is in use", status == OK and r.status == OK, r.message.decode())

    status = lib.ktune_mla_decode_select_for_arch(b"sm_90a", ctypes.byref(Key(16, 1, 1, 0, 32)), ctypes.byref(r))
    check("tuned key: kernel from the compiled table", status == OK and r.from_override == 0 and
          r.message == b"exact match", f"{status} {r.message.decode()}")

    status = lib.ktune_mla_decode_select_for_arch(b"sm_90a", ctypes.byref(Key(16, 2, 0, 1, 32)), ctypes.byref(r))
    k = r.fallback_key.mla_decode
    fallback = (k.heads, k.block_len, k.causal, k.kv_dtype, k.batch)
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

    # qk_rope_cache: heads 16, fp8 cache, bf16 q_out, full NeoX rope, 64 tokens is tuned on sm_90a.
    tuned = RopeKey(16, 1, 0, 0, 1, 64)
    status = lib.ktune_qk_rope_cache_select_for_arch(b"sm_90a", ctypes.byref(tuned), ctypes.byref(r))
    check("qk_rope_cache tuned key: kernel from the compiled table", status == OK and r.message == b"exact match",
          f"{status} {r.message.decode()}")
    status = lib.ktune_qk_rope_cache_select_for_arch(b"sm_90a", ctypes.byref(RopeKey(12, 1, 0, 0, 1, 64)),
                                                     ctypes.byref(r))
    k = r.fallback_key.qk_rope_cache
    check("qk_rope_cache covered heads: fallback to 16 heads", status == OK_FALLBACK and r.has_fallback_key == 1 and
          (k.heads, k.kv_dtype, k.tokens) == (16, 1, 64), f"{status} {r.message.decode()}")
    status = lib.ktune_qk_rope_cache_select_for_arch(b"gfx90a", ctypes.byref(tuned), ctypes.byref(r))
    check("qk_rope_cache unknown arch: unsupported, naming the arches there are",
          status == UNSUPPORTED and b"qk_rope_cache tables for sm_90a" in r.message, r.message.decode())
    status = lib.ktune_qk_rope_cache_select(ctypes.byref(tuned), ctypes.byref(r))
    check("qk_rope_cache select without a device: no_device", status == NO_DEVICE, r.message.decode())
    rope = RopeArgs(None, *([address] * 10), None, 0, 1.0, 1.0, 4096, tuned)
    status = lib.ktune_qk_rope_cache(ctypes.byref(rope), ctypes.byref(r))
    check("qk_rope_cache launch without a current device: no_device", status == NO_DEVICE, r.message.decode())
    rope.cos_table = None
    status = lib.ktune_qk_rope_cache(ctypes.byref(rope), ctypes.byref(r))
    check("qk_rope_cache without a cos table: invalid_argument", status == INVALID_ARGUMENT, r.message.decode())
    size = ctypes.c_size_t(7)
    status = lib.ktune_qk_rope_cache_workspace_size(ctypes.byref(rope), ctypes.byref(size), ctypes.byref(r))
    check("qk_rope_cache workspace without a device: no_device, 0 bytes", status == NO_DEVICE and size.value == 0,
          f"{status} {size.value}")

    if failures:
        print(f"{len(failures)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
