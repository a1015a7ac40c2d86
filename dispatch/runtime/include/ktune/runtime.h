/* ktune runtime, C API: launches the kernel that ktune's dispatch table selects for a problem,
 * on the caller's stream, from the code objects of `ktune package`. Two kernel families:
 * mla_decode (paged MLA decode attention) and qk_rope_cache (fused QK-RoPE + KV-cache write +
 * query quantisation). Every call returns a status and never aborts: a gap, an untuned key, a
 * missing device or code object, a refused override database, a call that breaks a kernel's
 * precondition are statuses with a message. Out of memory too: bad arguments keep their status
 * and message, and a launch of a key whose kernels this process has loaded on the device
 * allocates nothing at all. Thread-safe. C89-compatible declarations, so that
 * ctypes (Python) and other languages can call it; ktune/runtime.hpp is the C++ view.
 *
 * Where things come from:
 *  - the compiled-in tables: one package per (family, arch) this library was built with
 *    (ktune_runtime_info() lists them); a call selects from the table of the current device's
 *    arch, and an arch without one is KTUNE_UNSUPPORTED naming the arches the library has;
 *  - code objects of package P ("<family>-<arch>"): $KTUNE_PACKAGE_DIR/P or $KTUNE_PACKAGE_DIR
 *    itself, else the packages installed next to this library (<prefix>/share/ktune/P), else the
 *    build tree's packages; each file is checked against the xxh64 in its name;
 *  - KTUNE_DB: a tuning database read once per family, at its first call, that takes precedence
 *    over the compiled-in table for every key it serves (exact, batch bucket or covering row); it
 *    is checked by codegen's validators (template hash of the package, one device, one compiler).
 *    A refused database is reported by ktune_runtime_override_status() and the compiled-in table
 *    serves instead; a refusal that concerns one arch (e.g. its results are stale) leaves the
 *    database serving the others. A winner of KTUNE_DB that no package holds is compiled at its first launch
 *    (NVRTC on CUDA, hipRTC on HIP, from the templates built into this library), once per
 *    process, and cached like a packaged code object; a compile failure is KTUNE_NO_CODE_OBJECT
 *    with the compiler log's beginning. KTUNE_JIT=0 turns that off (KTUNE_NO_CODE_OBJECT naming
 *    the config to package). */
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
  KTUNE_NO_CODE_OBJECT = 5,   /* nothing launched: no code object for the selected kernel (none packaged,
                                 run-time compile off or failed) */
  KTUNE_INVALID_ARGUMENT = 6, /* nothing launched: inconsistent arguments (e.g. a short workspace), or
                                 arguments that break the selected kernel's precondition */
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

/* One launch of mla_decode (layouts: docs/kernels/mla_decode.md). */
typedef struct ktune_mla_decode_args {
  void* stream;               /* CUstream / hipStream_t of the current context; NULL: the default stream */
  const void* q;              /* [B, L, H, 576] bf16 */
  const void* kv_cache;       /* [pages, page_size, 576] of kv_dtype */
  const int32_t* block_table; /* [B, max_pages] */
  const int32_t* kv_lens;     /* [B], each >= L (includes the block's tokens) */
  void* o;                    /* [B, L, H, 512] bf16 */
  float* lse;                 /* [B, L, H] fp32, or NULL */
  void* workspace;            /* split-KV partials: ktune_mla_decode_workspace_size() bytes */
  size_t workspace_bytes;
  float softmax_scale;
  float kv_scale;    /* fp8 dequantisation scale; 1 for bf16 */
  int32_t max_pages; /* columns of block_table */
  int32_t page_size;
  int32_t max_kv_len; /* the longest kv_len of the batch (host-side; the split policy uses it) */
  ktune_mla_decode_key key;
} ktune_mla_decode_args;

/* Problem key of qk_rope_cache (the arch is the device's). */
typedef struct ktune_qk_rope_cache_key {
  int64_t heads;    /* H */
  int64_t kv_dtype; /* KV cache: 0 bf16, 1 fp8_e4m3fn, 2 fp8_e4m3fnuz */
  int64_t q_dtype;  /* q_out: 0 bf16, 1 fp8_e4m3fn, 2 fp8_e4m3fnuz */
  int64_t rope;     /* 0 full, 1 identity (NoPE: a 1-row table of cos 1, sin 0) */
  int64_t is_neox;  /* 1 NeoX (halves), 0 GPT-J (interleaved pairs) */
  int64_t tokens;   /* T */
} ktune_qk_rope_cache_key;

/* One launch of qk_rope_cache (layouts: docs/kernels/qk_rope_cache.md). A fused winner needs
 * no workspace; the unfused baseline (a winner with fused = 0) writes its intermediates (rotated
 * q_pe and k_pe, and the bf16 concatenation for an fp8 q_out) into the caller's workspace, which
 * ktune_qk_rope_cache_workspace_size() sizes. */
typedef struct ktune_qk_rope_cache_args {
  void* stream;                /* CUstream / hipStream_t of the current context; NULL: the default stream */
  const void* q_nope;          /* [T, H, 512] bf16 */
  const void* q_pe;            /* [T, H, 64] bf16 */
  const void* kv_c;            /* [T, 512] bf16 */
  const void* k_pe;            /* [T, 64] bf16 */
  const int64_t* positions;    /* [T]: row of the cos / sin tables */
  const int64_t* slot_mapping; /* [T]: cache row; negative: padded token, nothing written */
  const float* cos_table;      /* [table_rows, 32] fp32 */
  const float* sin_table;      /* [table_rows, 32] fp32 */
  void* kv_cache;              /* [slots, 576] of kv_dtype: slot s is row s */
  void* q_out;                 /* [T, H, 576] of q_dtype */
  void* workspace;             /* the unfused baseline's intermediates: ktune_qk_rope_cache_workspace_size() */
  size_t workspace_bytes;
  float k_scale;               /* fp8 cache: value = code * k_scale; 1 for bf16 */
  float q_scale;               /* fp8 q_out: value = code * q_scale; 1 for bf16 */
  int64_t table_rows;          /* rows of cos_table / sin_table (identity rope: 1) */
  ktune_qk_rope_cache_key key; /* key.tokens is T, the tokens of this launch */
} ktune_qk_rope_cache_args;

/* The key of either family, as the result reports it: `field` holds the key's fields in the
 * order of its struct. */
typedef union ktune_key {
  ktune_mla_decode_key mla_decode;
  ktune_qk_rope_cache_key qk_rope_cache;
  int64_t field[8];
} ktune_key;

/* What a call did. `message` is NUL-terminated; one cut to fit ends in "...". */
typedef struct ktune_result {
  ktune_status status;
  int32_t has_fallback_key; /* KTUNE_GAP with a declared fallback, KTUNE_OK_FALLBACK */
  ktune_key fallback_key;   /* of the call's family */
  int32_t splits;           /* mla_decode: split-KV chunks of the launch (1: no combine pass) */
  int32_t from_override;    /* 1 when the KTUNE_DB table answered */
  char message[512];        /* why: the table's reason, the driver's error, ... */
} ktune_result;

/* Launches mla_decode on args->stream. Never aborts; `out` may be NULL. A split launch is two
 * kernels; on CUDA the second (the combine) is a programmatic dependent launch of the first: it
 * may start as the first one's blocks exit and waits for it itself (under stream capture, a
 * programmatic edge between the two nodes). The first waits for the stream's earlier work as any
 * launch does. */
ktune_status ktune_mla_decode(const ktune_mla_decode_args* args, ktune_result* out);

/* Bytes of workspace ktune_mla_decode() needs for these arguments (0 when it does not split),
 * in *bytes; the other fields of args (pointers) are not read. */
ktune_status ktune_mla_decode_workspace_size(const ktune_mla_decode_args* args, size_t* bytes, ktune_result* out);

/* Which kernel the current device would run for `key`, without launching (status as above). */
ktune_status ktune_mla_decode_select(const ktune_mla_decode_key* key, ktune_result* out);
/* The same for an arch ("sm_90a", "gfx942"), without a device. */
ktune_status ktune_mla_decode_select_for_arch(const char* arch, const ktune_mla_decode_key* key, ktune_result* out);

/* Launches qk_rope_cache on args->stream: the fused kernel, or the unfused baseline's kernels in
 * order. Refused (KTUNE_INVALID_ARGUMENT, nothing launched) when the call breaks the selected
 * kernel's precondition: a 1-row table (an identity rope) needs a kernel that clamps positions.
 * Never aborts; `out` may be NULL. */
ktune_status ktune_qk_rope_cache(const ktune_qk_rope_cache_args* args, ktune_result* out);

/* Bytes of workspace ktune_qk_rope_cache() needs for these arguments (0 for a fused kernel), in
 * *bytes; the pointers of args are not read. */
ktune_status ktune_qk_rope_cache_workspace_size(const ktune_qk_rope_cache_args* args, size_t* bytes, ktune_result* out);

/* Which kernel the current device would run for `key` / for an arch, without launching. */
ktune_status ktune_qk_rope_cache_select(const ktune_qk_rope_cache_key* key, ktune_result* out);
ktune_status ktune_qk_rope_cache_select_for_arch(const char* arch, const ktune_qk_rope_cache_key* key,
                                                 ktune_result* out);

/* State of the KTUNE_DB override of every family: KTUNE_OK with the database in use (for at least
 * one family), KTUNE_UNSUPPORTED when KTUNE_DB is unset or serves no family, KTUNE_INVALID_ARGUMENT
 * when it was refused for a family or an arch of one (message says why, and what it serves
 * nonetheless). Reads the database. */
ktune_status ktune_runtime_override_status(ktune_result* out);

/* "ktune <version>: mla_decode for sm_90a (compiler, template hash), qk_rope_cache for ...". */
const char* ktune_runtime_info(void);

const char* ktune_status_name(ktune_status status);

#ifdef __cplusplus
}
#endif

#endif /* KTUNE_RUNTIME_H */
