/* ropecheck/kernel_abi.h — the versioned C ABI through which ropecheck calls a RoPE kernel.
 *
 * A kernel library (C, C++, Rust, a CUDA host wrapper, ...) is a shared library that exports
 *
 *     const ropecheck_kernel* ropecheck_kernels(uint32_t abi_version, size_t* count);
 *
 * returning an array of *count kernel descriptors that stay valid while the library is loaded
 * (or NULL when it cannot serve `abi_version`). `ropecheck gate --kernel-lib PATH.so` loads it
 * with dlopen and runs the fixtures and the property suite on every kernel it lists.
 *
 * One call rotates Q and K of shape [tokens, heads, head_dim] (any token and head stride, the
 * last dimension contiguous) by RoPE:
 *   pair j = (x[2j], x[2j+1]) for ROPECHECK_PAIRING_ADJACENT, (x[j], x[j + rotary_dim/2]) for
 *   ROPECHECK_PAIRING_HALF, for 0 <= j < rotary_dim/2; angle φ = m·θ_j with m the token's
 *   position (with several position streams: its position in stream pair_streams[j]) and
 *   θ_j = inverse_frequencies[j] (a 2-D vision layout's per-pair θ are already in place);
 *   y_a = A·(x_a·cos φ − x_b·sin φ),  y_b = A·(x_b·cos φ + x_a·sin φ),  A = attention_factor;
 *   ROPECHECK_DIRECTION_INVERSE rotates by −φ. Dims past rotary_dim are copied unchanged
 *   (untouched when output == input). Output == input with equal strides means in place; any
 *   other overlap is an invalid call.
 * The kernel returns ROPECHECK_STATUS_OK or an error code, and writes a message into
 * `message` (at most message_capacity bytes, NUL-terminated) for an error. It must reject an
 * invalid call (null pointers, odd or too large rotary_dim, unsupported dtype, overlapping
 * outputs) rather than crash: the property suite sends some.
 */
#ifndef ROPECHECK_KERNEL_ABI_H
#define ROPECHECK_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 3 appended a domain to ropecheck_kernel (`limits`, `max_position`): what the kernel
 * serves. The call is laid out as in version 2. A v2 library (whose ropecheck_kernels(3, …)
 * returns NULL) is asked for version 2, then 1; its descriptors have the v2 layout (the fields
 * before `limits`), and its kernels serve every call.
 * Version 2 appended position streams (M-RoPE, 2-D vision RoPE) and the fp8 output scale to
 * ropecheck_rope_call. A v1 library (whose ropecheck_kernels(2, …) returns NULL) is still
 * loaded: ropecheck asks it for version 1 and sends it single-stream, unscaled calls only, in
 * the v1 layout (the fields before position_streams). ROPECHECK_KERNEL_ABI_VERSION_1 names that older layout's version. */
#define ROPECHECK_KERNEL_ABI_VERSION 3u
#define ROPECHECK_KERNEL_ABI_VERSION_2 2u
#define ROPECHECK_KERNEL_ABI_VERSION_1 1u

enum ropecheck_dtype {
  ROPECHECK_DTYPE_FLOAT32 = 1,
  ROPECHECK_DTYPE_FLOAT16 = 2,  /* IEEE binary16 bits in uint16_t */
  ROPECHECK_DTYPE_BFLOAT16 = 3, /* bfloat16 bits in uint16_t */
  ROPECHECK_DTYPE_INT32 = 4,    /* positions */
  ROPECHECK_DTYPE_INT64 = 5,    /* positions */
  /* 8-bit floats in uint8_t (OCP OFP8 v1.0). Stores round to nearest even and saturate:
     |y| > max stores ±max (448, 57344), as vLLM's and TransformerEngine's fp8 casts do. */
  ROPECHECK_DTYPE_FLOAT8_E4M3FN = 6, /* S.EEEE.MMM, bias 7, max 448, no inf, NaN S.1111.111 */
  ROPECHECK_DTYPE_FLOAT8_E5M2 = 7    /* S.EEEEE.MM, bias 15, max 57344, IEEE inf/NaN */
};

enum ropecheck_pairing { ROPECHECK_PAIRING_HALF = 1, ROPECHECK_PAIRING_ADJACENT = 2 };

enum ropecheck_direction { ROPECHECK_DIRECTION_FORWARD = 1, ROPECHECK_DIRECTION_INVERSE = 2 };

enum ropecheck_status {
  ROPECHECK_STATUS_OK = 0,
  ROPECHECK_STATUS_INVALID_ARGUMENT = 1, /* malformed call */
  ROPECHECK_STATUS_OUT_OF_RANGE = 2,     /* a position the kernel cannot serve */
  ROPECHECK_STATUS_UNSUPPORTED = 3       /* well-formed, but not this dtype/pairing */
};

/* Q or K; heads == 0 means absent. Strides count elements of the storage dtype. */
typedef struct ropecheck_tensor {
  const void* input;
  void* output;
  int64_t heads;
  int64_t input_token_stride;
  int64_t input_head_stride;
  int64_t output_token_stride;
  int64_t output_head_stride;
} ropecheck_tensor;

typedef struct ropecheck_rope_call {
  uint32_t abi_version; /* ROPECHECK_KERNEL_ABI_VERSION */
  int32_t dtype;        /* ropecheck_dtype of Q and K: FLOAT32, FLOAT16, BFLOAT16, FLOAT8_* */
  int32_t pairing;      /* ropecheck_pairing */
  int32_t direction;    /* ropecheck_direction */
  int64_t head_dim;
  int64_t rotary_dim;   /* even, 2 <= rotary_dim <= head_dim */
  int64_t tokens;
  ropecheck_tensor q;
  ropecheck_tensor k;
  const void* positions;         /* one per token */
  int32_t position_dtype;        /* INT32 or INT64 */
  const double* inverse_frequencies; /* rotary_dim/2 entries θ_j (already scaled, if any) */
  double attention_factor;       /* multiplies cos and sin; 1 for plain RoPE */
  char* message;                 /* error message out, may be NULL */
  size_t message_capacity;
  /* Version 2 (absent from a v1 call: read them only when abi_version >= 2). */
  int32_t position_streams;      /* 1: 1-D RoPE; M-RoPE 3 (t, h, w); 2-D vision 2 (row, col) */
  int64_t position_stream_stride; /* elements between streams: token i of stream s is
                                     positions[s * position_stream_stride + i] */
  const int32_t* pair_streams;   /* rotary_dim/2 entries: pair j turns by the position of stream
                                    pair_streams[j]; may be NULL when position_streams == 1 */
  float output_scale;            /* finite, > 0: outputs are stored as round(y / output_scale),
                                    y/output_scale computed in float32 as vLLM's fp8 store does
                                    (a / scale). 1 unless dtype is FLOAT8_*: a scale != 1 with
                                    any other dtype must be refused (UNSUPPORTED). A v1 library
                                    never gets a scale != 1: ropecheck refuses such a call for it. */
} ropecheck_rope_call;

/* Version 3: the calls a kernel does not serve (bits of ropecheck_kernel.limits). ropecheck never
 * sends a kernel such a call: it draws its cases and golden vectors inside the declared domain,
 * and reports the properties that need what is missing as skipped, with the reason. A refusal of
 * a call inside the domain is still a failure. 0 (no bit) serves every call, as a v2 kernel does. */
enum ropecheck_limit {
  ROPECHECK_LIMIT_NONNEGATIVE_POSITIONS = 1u << 0, /* positions m >= 0 only (e.g. a cos/sin cache
                                                      of rows [0, N)) */
  ROPECHECK_LIMIT_NO_INVERSE = 1u << 1,            /* no ROPECHECK_DIRECTION_INVERSE */
  ROPECHECK_LIMIT_NO_ATTENTION_FACTOR = 1u << 2,   /* attention_factor is always 1 */
  ROPECHECK_LIMIT_NO_PARTIAL_ROTARY = 1u << 3,     /* rotary_dim == head_dim always */
  ROPECHECK_LIMIT_NO_ABSENT_TENSOR = 1u << 4       /* Q and K both present (heads >= 1) */
};
#define ROPECHECK_KNOWN_LIMITS 0x1fu /* every ropecheck_limit bit; others are refused at load */

typedef struct ropecheck_kernel {
  const char* name;        /* unique within the library, [A-Za-z0-9_.-] */
  const char* description; /* one line */
  uint32_t dtypes;         /* bit (1u << ropecheck_dtype) for each storage dtype served */
  uint32_t pairings;       /* bit (1u << ropecheck_pairing) for each pairing served */
  int (*apply)(const ropecheck_rope_call* call); /* returns a ropecheck_status */
  /* Version 3 (a zero-initialised descriptor serves every call, as in version 2; a positional
     initialiser of the five fields above should add `0, 0`, which -Wextra's
     -Wmissing-field-initializers asks for). */
  uint32_t limits;         /* ropecheck_limit bits: the calls the kernel does not serve */
  int64_t max_position;    /* 0: no bound; > 0: the largest |m| served (positions beyond it are
                              never sent; as `ropecheck gate --max-position`) */
} ropecheck_kernel;

typedef const ropecheck_kernel* (*ropecheck_kernels_fn)(uint32_t abi_version, size_t* count);

#define ROPECHECK_KERNELS_SYMBOL "ropecheck_kernels"

#ifdef __cplusplus
}
#endif

#endif /* ROPECHECK_KERNEL_ABI_H */
