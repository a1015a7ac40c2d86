/* ktune runtime, C API: launches the kernel that ktune's dispatch table selects for a problem,
 * on the caller's stream, from the code objects of a `ktune package`. Every call returns a
 * status and never aborts: a gap, an untuned key, a missing device or code object, a refused
 * override database are statuses with a message. Thread-safe. C89-compatible declarations, so
 * that ctypes (Python) and other languages can call it; ktune/runtime.hpp is the C++ view.
 *
 * Where things come from:
 *  - the compiled-in table: the package this library was built with (ktune_runtime_info());
 *  - code objects: $KTUNE_PACKAGE_DIR, else the package installed next to this library
 *    (<prefix>/share/ktune/<family>-<arch>), else the build tree's package;
 *  - KTUNE_DB: a tuning database read once, at the first call, that takes precedence over the
 *    compiled-in table for every key it serves (exact, batch bucket or covering row); it is checked by codegen's validators (template
 *    hash of the package, one device, one compiler). A refused database is reported by
 *    ktune_runtime_override_status() and the compiled-in table serves instead. */
#ifndef KTUNE_RUNTIME_H
#define KTUNE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ktune_status {
  KTUNE_OK = 0,               /* launched the kernel of the key (exact or nearest batch bucket) */
  KTUNE_OK_FALLBACK = 1,      /* launched the kernel of a covering key (larger heads / block_len) */
  KTUNE_GAP = 2,              /* nothing launched: a known gap; fallback_key says what to use instead */
  KTUNE_UNSUPPORTED = 3,      /* nothing launched: arch or key not in the table, or out of range */
  KTUNE_NO_DEVICE = 4,        /* nothing launched: no GPU driver, device or current context */
  KTUNE_NO_CODE_OBJECT = 5,   /* nothing launched: the package lacks the selected code object */
  KTUNE_INVALID_ARGUMENT = 6, /* nothing launched: inconsistent arguments (e.g. a short workspace) */
  KTUNE_LAUNCH_FAILED = 7     /* the driver refused the load or the launch */
} ktune_status;

/* Problem key of mla_decode, as the dispatch table switches on it (the arch is the device's). */
typedef struct ktune_mla_decode_key {
  int64_t heads;     /* H */
  int64_t block_len; /* L: 1 decode, 2..16 draft / verify blocks */
  int64_t causal;    /* 0 or 1 */
  int64_t kv_dtype;  /* 0 bf16, 1 fp8_e4m3fn, 2 fp8_e4m3fnuz */
  int64_t batch;     /* B */
} ktune_mla_decode_key;

/* One launch of mla_decode (layouts in ktune's DESIGN.md). */
typedef struct ktune_mla_decode_args {
  void* stream;             /* CUstream / hipStream_t of the current context; NULL: the default stream */
  const void* q;            /* [B, L, H, 576] bf16 */
  const void* kv_cache;     /* [pages, page_size, 576] of kv_dtype */
  const int32_t* block_table; /* [B, max_pages] */
  const int32_t* kv_lens;   /* [B], each >= L (includes the block's tokens) */
  void* o;                  /* [B, L, H, 512] bf16 */
  float* lse;               /* [B, L, H] fp32, or NULL */
  void* workspace;          /* split-KV partials: ktune_mla_decode_workspace_size() bytes */
  size_t workspace_bytes;
  float softmax_scale;
  float kv_scale;           /* fp8 dequantisation scale; 1 for bf16 */
  int32_t max_pages;        /* columns of block_table */
  int32_t page_size;
  int32_t max_kv_len;       /* the longest kv_len of the batch (host-side; the split policy uses it) */
  ktune_mla_decode_key key;
} ktune_mla_decode_args;

/* What a call did. `message` is NUL-terminated (truncated to fit). */
typedef struct ktune_result {
  ktune_status status;
  int32_t has_fallback_key;         /* KTUNE_GAP with a declared fallback, KTUNE_OK_FALLBACK */
  ktune_mla_decode_key fallback_key;
  int32_t splits;                   /* split-KV chunks of the launch (1: no combine pass) */
  int32_t from_override;            /* 1 when the KTUNE_DB table answered */
  char message[512];                /* why: the table's reason, the driver's error, ... */
} ktune_result;

/* Launches mla_decode on args->stream. Never aborts; `out` may be NULL. */
ktune_status ktune_mla_decode(const ktune_mla_decode_args* args, ktune_result* out);

/* Bytes of workspace ktune_mla_decode() needs for these arguments (0 when it does not split),
 * in *bytes; the other fields of args (pointers) are not read. */
ktune_status ktune_mla_decode_workspace_size(const ktune_mla_decode_args* args, size_t* bytes, ktune_result* out);

/* Which kernel the current device would run for `key`, without launching (status as above). */
ktune_status ktune_mla_decode_select(const ktune_mla_decode_key* key, ktune_result* out);
/* The same for an arch ("sm_90a", "gfx942"), without a device. */
ktune_status ktune_mla_decode_select_for_arch(const char* arch, const ktune_mla_decode_key* key, ktune_result* out);

/* State of the KTUNE_DB override: KTUNE_OK with the database in use, KTUNE_UNSUPPORTED when
 * KTUNE_DB is unset, KTUNE_INVALID_ARGUMENT when it was refused (message says why). Reads the
 * database on the first call of any function. */
ktune_status ktune_runtime_override_status(ktune_result* out);

/* "ktune <version>, mla_decode package for <arch> (compiler, template hash)". */
const char* ktune_runtime_info(void);

const char* ktune_status_name(ktune_status status);

#ifdef __cplusplus
}
#endif

#endif /* KTUNE_RUNTIME_H */
