/*
 * nd.h — NumPy-style arrays for C, lazily recorded into a task graph and run
 * fused on the CPU or an NVIDIA GPU.
 *
 * Model
 *   Every operation records a node and returns at once; nothing is computed
 *   until nd_sync()/nd_flush() or a read (nd_to_host, nd_item). Then the
 *   scheduler fuses elementwise chains, views, casts, random draws and a
 *   trailing reduction or region store into generated kernels and runs them.
 *
 * Semantics follow NumPy 2: row-major arrays, broadcasting, NEP 50 type
 * promotion (a weak scalar from nd_scalar/nd_scalar_int does not widen an
 * array's dtype), views share memory, writes into a view are visible through
 * its base.
 *
 * Errors
 *   Functions returning nd_array* return NULL on failure; functions returning
 *   nd_status return the code. Either way nd_last_status()/nd_last_error()
 *   hold the code and a message naming the function, the values and the fix.
 *   A NULL input makes an op return NULL without overwriting the first error,
 *   so a chain of calls is checked once at its end. The error stays until
 *   nd_clear_error(). Device errors surface from nd_sync; arrays whose values
 *   could not be produced report the error when read.
 *
 * Faults (out of memory, a failed compile, a failed backend call)
 *   never give a wrong value. A flush that fails marks exactly the arrays it
 *   could not compute, and those computed from them: reading one (nd_to_host,
 *   nd_item) fails with a message naming the reading function, the array
 *   (shape, dtype, size, the function that computed it), the cause and what
 *   to do. Steps of the flush the failure does not reach still run, so an
 *   unrelated array updated in place (x += 1) gets its new value; an array
 *   the flush does not write keeps its value. A failed array stays failed,
 *   and so does anything computed from it, until a write of the whole array
 *   (nd_fill, nd_assign into all of it) gives it a value again; a write into
 *   part of it leaves it failed. The next flush works as usual. A flush nd
 *   starts on its own (an early flush, or ND_MAX_PENDING reached) runs
 *   inside whichever call recorded the node that triggered it; that call
 *   succeeds, and the flush's error is returned by the next nd_sync or
 *   nd_flush (and set as the thread's last error at once).
 *
 * Threads
 *   Any number of threads may call any function at any time. Calls run as if
 *   one after another in some order: one process-wide lock is held for the
 *   whole of each call, so a long call (nd_sync waiting for the device, a
 *   large nd_to_host) makes the other threads' calls wait. Threads may share
 *   arrays: reading one array from several threads is fine; writes to one
 *   array from several threads (nd_assign, nd_fill) apply in the order the
 *   calls took the lock, and the random draws in the order their calls did
 *   (nd_random_*: a value depends on that order). Per thread: the last error
 *   (nd_last_status/nd_last_error; one thread's error is never seen by
 *   another) and scopes (nd_scope_begin/end/nd_keep act on the calling
 *   thread's scopes only; a handle made in another thread's scope belongs to
 *   that scope). A thread that exits with scopes open has them closed as by
 *   nd_scope_end. nd_shutdown from one thread ends the runtime for all: it
 *   releases the memory of every array, and every handle made before it,
 *   in any thread, is then rejected with ND_ERR_STATE (see nd_shutdown);
 *   it closes the calling thread's scopes, while another thread's scopes
 *   stay open (that thread may be using their handles at that moment) and
 *   release those dead handles at that thread's nd_scope_end or exit. nd's
 *   own threads (the executor, CPU workers) never call back into user code.
 *   Do not call nd from a child after fork() while another thread of the
 *   parent was inside nd.
 *
 * Messages name the function the user called: a failure raised deep inside
 * (a backend's "out of host memory allocating N bytes", a missing CUDA
 * device) is reported as "nd_sync: cpu backend: ...", under the outermost nd
 * function the thread was in.
 */
#ifndef ND_H
#define ND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ND_BUILDING_LIBRARY) && defined(__GNUC__)
#define ND_API __attribute__((visibility("default")))
#else
#define ND_API
#endif

#define ND_VERSION_MAJOR 0
#define ND_VERSION_MINOR 1
#define ND_VERSION_PATCH 0

/* ------------------------------------------------------------------ types */

typedef struct nd_array nd_array; /* opaque, reference-counted */

typedef enum {
    ND_BOOL,
    ND_INT8,
    ND_INT16,
    ND_INT32,
    ND_INT64,
    ND_UINT8,
    ND_UINT16,
    ND_UINT32,
    ND_UINT64,
    ND_FLOAT16,
    ND_BFLOAT16,
    ND_FLOAT32,
    ND_FLOAT64,
    ND_NUM_DTYPES
} nd_dtype;

typedef enum {
    ND_OK = 0,
    ND_ERR_ARG,         /* a bad argument: NULL, out of range, malformed */
    ND_ERR_SHAPE,       /* shapes that do not broadcast, match or fit */
    ND_ERR_DTYPE,       /* a dtype the operation does not accept */
    ND_ERR_INDEX,       /* an index string or an index out of range */
    ND_ERR_OOM,         /* out of host or device memory */
    ND_ERR_BACKEND,     /* the backend (driver, BLAS, ...) failed */
    ND_ERR_COMPILE,     /* a generated kernel failed to compile */
    ND_ERR_IO,          /* a file could not be written or read */
    ND_ERR_STATE,       /* called in the wrong state (not initialised, ...) */
    ND_ERR_UNSUPPORTED  /* valid, but not supported by this build/backend */
} nd_status;

#define ND_MAX_DIMS 8

/* ND_SHAPE(3, 4) expands to the two arguments `int ndim, const int64_t *shape`
 * of creation functions: nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4)). */
#define ND_SHAPE(...)                                                        \
    (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),         \
        ((const int64_t[]){__VA_ARGS__})
/* A 0-d (scalar) shape for the same functions. */
#define ND_SCALAR_SHAPE 0, ((const int64_t *)0)

/* Axis value meaning "reduce over every axis". Negative axes count from the
 * end as in NumPy (-1 is the last axis). */
#define ND_ALL_AXES (-1000)

/* Backend names for nd_config.backend and ND_BACKEND. */
typedef enum { ND_BACKEND_AUTO = 0, ND_BACKEND_CPU, ND_BACKEND_CUDA } nd_backend_kind;

/* Settings for nd_init. Zero-initialise, then set what you need; a zero field
 * means "default, or the ND_* environment variable if set". */
typedef struct {
    nd_backend_kind backend; /* ND_BACKEND=auto|cpu|cuda */
    int num_threads;         /* ND_NUM_THREADS: CPU worker threads; 0 = cores */
    const char *devices;     /* ND_DEVICES: comma list of GPU ordinals */
    int log;                 /* ND_LOG: 0 off, 1 warnings, 2 info, 3 debug (stderr) */
    const char *dump_dot;    /* ND_DUMP_DOT: folder; one Graphviz file per flush */
    int profile;             /* ND_PROFILE=1: print a kernel/copy table at exit */
    const char *cache_dir;   /* ND_CACHE_DIR: kernel cache (default ~/.cache/nd) */
    int fusion;              /* ND_FUSION: 1 on (default), -1 off */
    int cuda_graphs;         /* ND_CUDA_GRAPHS: 1 on (default), -1 off */
    int matmul_tf32;         /* ND_MATMUL_TF32: 1 allows TF32 tensor cores, -1 off (default) */
    int64_t max_pending;     /* ND_MAX_PENDING: nodes recorded before an automatic flush */
    int early_flush;         /* ND_EARLY_FLUSH: 1 on (default), -1 off: after an nd_sync,
                                flush small-array work early (12 nodes, then 24, ...) so
                                the device starts while the rest is recorded */
    int64_t device_memory_limit; /* ND_DEVICE_MEMORY_LIMIT: bytes (0 = whole device) */
    const char *trace;       /* ND_TRACE: file; CUDA writes every step's device start and
                                end as a Chrome/Perfetto trace (one row per stream) */
} nd_config;

/* Counters of what the engine did, for tests, tuning and curiosity. */
typedef struct {
    uint64_t flushes;          /* flushes that ran something */
    uint64_t plan_cache_hits;  /* flushes whose plan came from the cache */
    uint64_t plan_cache_misses;/* flushes that ran every scheduler pass */
    uint64_t nodes_recorded;   /* operations recorded */
    uint64_t nodes_dropped;    /* dead nodes removed before running */
    uint64_t values_materialised; /* node values written to memory rather than
                                     computed inside the kernels that use them */
    uint64_t kernels_run;      /* fused kernels executed */
    uint64_t kernels_compiled; /* kernels generated/compiled (GPU) */
    uint64_t library_calls;    /* matmul and other library steps executed */
    uint64_t copies;           /* data-movement steps executed */
    uint64_t bytes_allocated;  /* bytes of buffers currently allocated */
    uint64_t temp_allocations; /* plan-internal temporaries allocated */
} nd_stats;

/* ------------------------------------------------------------ lifecycle */

/* Starts the runtime. Optional: the first call of any other function starts it
 * with defaults. NULL = defaults + ND_* environment variables. Calling it
 * again after nd_shutdown restarts. Threads racing to start it (nd_init or
 * any first call) start it once; a losing nd_init gets ND_ERR_STATE.
 * Every ND_* variable follows one rule:
 * unset or empty means the default; any other value must be valid, or
 * nd_init fails with ND_ERR_ARG naming the variable, its value and the
 * accepted values, whichever backend starts and even where nd_config sets
 * the field (a variable of the other backend, such as ND_PINNED_CACHE on
 * the CPU, is checked too). A successful nd_init leaves no error behind.
 * Errors: ND_ERR_ARG for bad settings (an nd_config field or an ND_*
 * variable; with ND_BACKEND=auto a bad ND_DEVICES fails rather than fall
 * back to the CPU), ND_ERR_BACKEND/ND_ERR_UNSUPPORTED when the requested
 * backend is missing, ND_ERR_STATE if already running. */
ND_API nd_status nd_init(const nd_config *cfg);
/* Waits for pending work and frees every resource: the calling thread's
 * scopes are closed (their handles released), and the memory of every array
 * still alive, in any thread, is released. A handle that outlives the
 * shutdown (also one in another thread's open scope) keeps only its
 * small descriptor: nd_free (and nd_retain) still work on it and nd_free
 * releases it, its shape and dtype can still be read, and every other
 * function rejects it with ND_ERR_STATE ("... was created before
 * nd_shutdown ..."), also after nd_init restarts the runtime. So a program
 * that frees its handles after nd_shutdown does not leak. */
ND_API void nd_shutdown(void);
/* Runs everything pending and waits for it. Returns the first error of the
 * flushes since the last nd_sync (out of memory, a failed compile or backend
 * call); the arrays it kept from being computed carry it and report it when
 * read, every other array has its value (see "Faults" above). */
ND_API nd_status nd_sync(void);
/* Submits everything pending without waiting (the CPU backend runs it). */
ND_API nd_status nd_flush(void);
/* The code and message of the last failure on this thread (sticky). */
ND_API nd_status nd_last_status(void);
ND_API const char *nd_last_error(void);
ND_API void nd_clear_error(void);
/* Name of the backend in use: "cpu" or "cuda". */
ND_API const char *nd_backend_name(void);
ND_API void nd_get_stats(nd_stats *out);
ND_API const char *nd_dtype_name(nd_dtype t);   /* "float32"; "?" if invalid */
ND_API size_t nd_dtype_size(nd_dtype t);        /* bytes; 0 if invalid */
ND_API const char *nd_status_name(nd_status s); /* "ND_ERR_SHAPE" */

/* ------------------------------------------------------------- lifetime */

/* +1 reference; returns a (NULL for NULL). A freed handle: NULL and
 * ND_ERR_ARG. */
ND_API nd_array *nd_retain(nd_array *a);
/* -1 reference; the last one frees the handle (its array's memory goes when
 * no pending work needs it). NULL is a no-op. Freeing a handle whose last
 * reference is already gone (a second nd_free, or one after the nd_scope_end
 * that released it) is ND_ERR_ARG naming nd_free, and so is passing it to
 * any function: a freed handle is marked, and its memory is not reused
 * before 256 more handles were freed. After that it may belong to a new
 * array, and a stale pointer to it can no longer be told apart from that
 * array's handle: the check catches the common mistakes, not every one. */
ND_API void nd_free(nd_array *a);
/* Handles made after nd_scope_begin are released at the matching
 * nd_scope_end, unless nd_keep moved them to the enclosing scope (or, at the
 * outermost scope, to the caller). Scopes nest and are per thread: each
 * thread has its own (see "Threads"). nd_scope_end without an open scope on
 * this thread is ND_ERR_STATE. nd_keep of a handle not in this thread's
 * innermost scope returns it unchanged. */
ND_API void nd_scope_begin(void);
ND_API void nd_scope_end(void);
ND_API nd_array *nd_keep(nd_array *a);

/* ------------------------------------------------------------- creation */

ND_API nd_array *nd_empty(nd_dtype dtype, int ndim, const int64_t *shape);
ND_API nd_array *nd_zeros(nd_dtype dtype, int ndim, const int64_t *shape);
ND_API nd_array *nd_ones(nd_dtype dtype, int ndim, const int64_t *shape);
/* value into an integer dtype must be finite and fit once truncated toward
 * zero (as NumPy's np.full with a Python int, a.fill and a[...] = v; np.full
 * with a Python float would wrap instead, but a C double often means an
 * int): nd_full(ND_UINT8, ..., 300) or (..., -1) is ND_ERR_DTYPE, never 44
 * or 255. Bool and float dtypes take any value. */
ND_API nd_array *nd_full(nd_dtype dtype, int ndim, const int64_t *shape, double value);
ND_API nd_array *nd_arange(nd_dtype dtype, double start, double stop, double step);
ND_API nd_array *nd_linspace(nd_dtype dtype, double start, double stop, int64_t num);
/* Copies `data` (row-major, dtype elements) at once; the caller keeps it. */
ND_API nd_array *nd_from_host(const void *data, nd_dtype dtype, int ndim, const int64_t *shape);
/* Copies a's elements row-major into dst (runs pending work first). Errors:
 * ND_ERR_ARG for NULL dst or dst_bytes < size*itemsize; the error (ND_ERR_OOM,
 * ND_ERR_COMPILE, ND_ERR_BACKEND) that kept a's value from being computed,
 * in this read's flush or an earlier one, naming a's shape, dtype, size,
 * the function that computed it and the cause; or the error of copying it
 * to the host (then a keeps its value: read it again). An error of another
 * array in the same flush does not fail this read. */
ND_API nd_status nd_to_host(nd_array *a, void *dst, size_t dst_bytes);
/* A size-1 array's value as double; NaN and an error otherwise (ND_ERR_SHAPE
 * for another size, or nd_to_host's errors, naming nd_item). */
ND_API double nd_item(nd_array *a);
/* Weakly typed 0-d arrays (NEP 50): nd_scalar behaves like a Python float
 * (float32 arrays stay float32, integer arrays become float64); nd_scalar_int
 * like a Python int (int8 arrays stay int8; a value that does not fit the
 * array's dtype is an ND_ERR_DTYPE error). A weak scalar and every view of
 * it are read-only: nd_assign/nd_fill into one is ND_ERR_ARG (make a
 * writable 0-d array with nd_full, or nd_copy the scalar). */
ND_API nd_array *nd_scalar(double v);
ND_API nd_array *nd_scalar_int(int64_t v);
ND_API nd_array *nd_astype(nd_array *a, nd_dtype dtype);
ND_API nd_array *nd_copy(nd_array *a);

/* --------------------------------------------------------------- random */

/* Counter-based Philox4x32-10: a value depends only on the seed, the order of
 * random calls since nd_random_seed and its element index, never on the
 * backend, thread count or tiling. */
ND_API void nd_random_seed(uint64_t seed);
ND_API nd_array *nd_random_uniform(nd_dtype dtype, int ndim, const int64_t *shape, double lo, double hi);
ND_API nd_array *nd_random_normal(nd_dtype dtype, int ndim, const int64_t *shape, double mean, double sd);

/* ---------------------------------------------------------- elementwise */

/* Binary ops broadcast and promote as NumPy 2. nd_div is true division (an
 * integer pair gives float64). Comparisons give bool. Integer overflow wraps.
 * Errors: ND_ERR_SHAPE (no broadcast), ND_ERR_DTYPE (e.g. bool for nd_sub). */
ND_API nd_array *nd_add(nd_array *a, nd_array *b);
ND_API nd_array *nd_sub(nd_array *a, nd_array *b);
ND_API nd_array *nd_mul(nd_array *a, nd_array *b);
ND_API nd_array *nd_div(nd_array *a, nd_array *b);
ND_API nd_array *nd_pow(nd_array *a, nd_array *b);
ND_API nd_array *nd_maximum(nd_array *a, nd_array *b); /* NaN propagates */
ND_API nd_array *nd_minimum(nd_array *a, nd_array *b);
ND_API nd_array *nd_eq(nd_array *a, nd_array *b);
ND_API nd_array *nd_ne(nd_array *a, nd_array *b);
ND_API nd_array *nd_lt(nd_array *a, nd_array *b);
ND_API nd_array *nd_le(nd_array *a, nd_array *b);
ND_API nd_array *nd_gt(nd_array *a, nd_array *b);
ND_API nd_array *nd_ge(nd_array *a, nd_array *b);

/* Binary float math (NumPy's names; integer and bool operands give NumPy's
 * float dtype, e.g. int8 -> float16, and take any Python int). arctan2(a,
 * b) is the angle of (b, a); arctan2 and hypot are within 3 ulp on every
 * backend; copysign is exact (the sign of b, a NaN's sign bit too). Errors:
 * ND_ERR_SHAPE (no broadcast), ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_arctan2(nd_array *a, nd_array *b);
ND_API nd_array *nd_hypot(nd_array *a, nd_array *b);
ND_API nd_array *nd_copysign(nd_array *a, nd_array *b);
/* heaviside(x, h0): 0 where x < 0, h0 where x is +-0, 1 where x > 0, NaN
 * where x is NaN (float dtypes as above; exact). */
ND_API nd_array *nd_heaviside(nd_array *a, nd_array *b);
/* fmax/fmin ignore NaN (NaN only where both are; of +0 and -0 the first),
 * integers as nd_maximum/nd_minimum, bool as or/and. */
ND_API nd_array *nd_fmax(nd_array *a, nd_array *b);
ND_API nd_array *nd_fmin(nd_array *a, nd_array *b);

/* Integer division family, NumPy semantics without its warnings and never a
 * trap: nd_floor_divide (//) rounds toward -inf; nd_remainder (%, also
 * nd_mod) takes the sign of the divisor, nd_fmod that of the dividend.
 * Integers: x // 0, x % 0 and fmod(x, 0) are 0, MIN // -1 is MIN, MIN % -1
 * is 0. Floats: NumPy's divmod (x // 0.0 is x / 0.0, x % 0.0 NaN,
 * -0.5 % inf is inf as NumPy). bool computes in int8. Exact on every
 * backend. Errors: ND_ERR_DTYPE (a Python int out of the array's range),
 * ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_floor_divide(nd_array *a, nd_array *b);
ND_API nd_array *nd_remainder(nd_array *a, nd_array *b);
ND_API nd_array *nd_mod(nd_array *a, nd_array *b);
ND_API nd_array *nd_fmod(nd_array *a, nd_array *b);

/* Logical ops of any dtypes (each operand != 0, NaN is true), result bool. */
ND_API nd_array *nd_logical_and(nd_array *a, nd_array *b);
ND_API nd_array *nd_logical_or(nd_array *a, nd_array *b);
ND_API nd_array *nd_logical_xor(nd_array *a, nd_array *b);
/* Bitwise ops of integers in their promoted dtype; of bool they are the
 * logical ops. Errors: ND_ERR_DTYPE (a float operand, or a Python int out of
 * range), ND_ERR_SHAPE, ND_ERR_ARG. */
ND_API nd_array *nd_bitwise_and(nd_array *a, nd_array *b);
ND_API nd_array *nd_bitwise_or(nd_array *a, nd_array *b);
ND_API nd_array *nd_bitwise_xor(nd_array *a, nd_array *b);

/* Unary ops. Transcendentals of integer inputs give floats as NumPy
 * (int8 -> float16, int16 -> float32, int32/int64 -> float64). */
ND_API nd_array *nd_neg(nd_array *a);
ND_API nd_array *nd_abs(nd_array *a);
ND_API nd_array *nd_sqrt(nd_array *a);
ND_API nd_array *nd_exp(nd_array *a);
ND_API nd_array *nd_log(nd_array *a);
ND_API nd_array *nd_sin(nd_array *a);
ND_API nd_array *nd_cos(nd_array *a);
ND_API nd_array *nd_tanh(nd_array *a);
ND_API nd_array *nd_tan(nd_array *a); /* NumPy tan */
ND_API nd_array *nd_floor(nd_array *a);
ND_API nd_array *nd_ceil(nd_array *a);
ND_API nd_array *nd_square(nd_array *a);
ND_API nd_array *nd_logical_not(nd_array *a);

/* Unary float math, NumPy's names and rules: integer and bool inputs give
 * the float dtype of the note above (bool and int8 -> float16), float16 and
 * bfloat16 compute in float32. Out-of-domain inputs give NaN (arcsin(2),
 * arccosh(0.5), log2(-1)) and poles give +-inf (arctanh(1), log1p(-1)), as
 * NumPy without its warnings. Results are within 4 ulp of the correctly
 * rounded value on every backend (the largest documented error of CUDA's and
 * glibc's functions for these); NaN, +-inf and +-0 inputs give exact
 * results. nd_rint rounds half to even and is exact. Errors: ND_ERR_ARG
 * (NULL input). */
ND_API nd_array *nd_arcsin(nd_array *a);
ND_API nd_array *nd_arccos(nd_array *a);
ND_API nd_array *nd_arctan(nd_array *a);
ND_API nd_array *nd_sinh(nd_array *a);
ND_API nd_array *nd_cosh(nd_array *a);
ND_API nd_array *nd_arcsinh(nd_array *a);
ND_API nd_array *nd_arccosh(nd_array *a);
ND_API nd_array *nd_arctanh(nd_array *a);
ND_API nd_array *nd_exp2(nd_array *a);
ND_API nd_array *nd_expm1(nd_array *a);  /* exp(x) - 1, accurate near 0 */
ND_API nd_array *nd_log2(nd_array *a);
ND_API nd_array *nd_log10(nd_array *a);
ND_API nd_array *nd_log1p(nd_array *a);  /* log(1 + x), accurate near 0 */
ND_API nd_array *nd_cbrt(nd_array *a);
ND_API nd_array *nd_rint(nd_array *a);
/* a * (pi / 180) and a * (180 / pi) with NumPy's constant of the compute
 * dtype: one rounded multiply, exact on every backend. */
ND_API nd_array *nd_deg2rad(nd_array *a);
ND_API nd_array *nd_rad2deg(nd_array *a);

/* Unary ops that keep the dtype (exact on every backend):
 * nd_reciprocal: 1/x; of integers NumPy's integer 1/x: 1 and -1 give
 *   themselves, every other value (0 included) gives 0; bool gives int8.
 * nd_trunc: toward zero; integers and bool are returned as they are.
 * nd_sign: -1, 0 or 1 (NaN gives NaN, -0.0 gives +0.0); unsigned: 0 or 1.
 * nd_positive: a copy (+a).
 * Errors: ND_ERR_DTYPE for bool in nd_sign and nd_positive (NumPy has no
 * boolean loop for them), ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_reciprocal(nd_array *a);
ND_API nd_array *nd_trunc(nd_array *a);
ND_API nd_array *nd_sign(nd_array *a);
ND_API nd_array *nd_positive(nd_array *a);

/* Predicates, result bool, every dtype (NumPy's names): integers and bool
 * are finite and never NaN; nd_signbit is the sign bit of a float (of a NaN
 * too, as NumPy: signbit(-nan) is true) and x < 0 of an integer. Exact on
 * every backend. Errors: ND_ERR_ARG (NULL input). */
ND_API nd_array *nd_isnan(nd_array *a);
ND_API nd_array *nd_isinf(nd_array *a);
ND_API nd_array *nd_isfinite(nd_array *a);
ND_API nd_array *nd_signbit(nd_array *a);
ND_API nd_array *nd_isposinf(nd_array *a);
ND_API nd_array *nd_isneginf(nd_array *a);

/* Bitwise not (~a) of an integer array, keeping its dtype; of bool it is
 * logical not (NumPy). nd_bitwise_not is the same function under NumPy's
 * other name. Errors: ND_ERR_DTYPE (float input), ND_ERR_ARG (NULL). */
ND_API nd_array *nd_invert(nd_array *a);
ND_API nd_array *nd_bitwise_not(nd_array *a);

/* where(cond, a, b): cond is read as bool; the result promotes a and b. A
 * Python-int scalar that does not fit the other operand's integer dtype is
 * ND_ERR_DTYPE (NumPy 2 would wrap it: np.where(c, uint8_array, -1) gives
 * 255). */
ND_API nd_array *nd_where(nd_array *cond, nd_array *a, nd_array *b);
/* clip(a, lo, hi) = minimum(maximum(a, lo), hi). As NumPy 2, a Python-int
 * bound beyond an integer a's range on its own side cannot bind and is left
 * out (clip(uint8, -1, 300) is a copy of a); lo above a's maximum or hi
 * below its minimum is ND_ERR_DTYPE. */
ND_API nd_array *nd_clip(nd_array *a, nd_array *lo, nd_array *hi);

/* ----------------------------------------------------------- reductions */

/* Reduce over one axis (negative counts from the end) or ND_ALL_AXES. Result
 * dtypes as NumPy: sum/prod of bool and signed ints -> int64, unsigned ->
 * uint64; mean/std/var of bool and ints -> float64, accumulated in float64
 * as NumPy (so int64 timestamps near 1.7e18 or uint64 values near 2^64 do
 * not wrap); argmin/argmax -> int64; any/all -> bool. std/var use ddof = 0. min/max/argmin/argmax of an empty
 * extent are ND_ERR_SHAPE. */
ND_API nd_array *nd_sum(nd_array *a, int axis);
ND_API nd_array *nd_prod(nd_array *a, int axis);
ND_API nd_array *nd_mean(nd_array *a, int axis);
ND_API nd_array *nd_min(nd_array *a, int axis);
ND_API nd_array *nd_max(nd_array *a, int axis);
ND_API nd_array *nd_argmin(nd_array *a, int axis);
ND_API nd_array *nd_argmax(nd_array *a, int axis);
ND_API nd_array *nd_std(nd_array *a, int axis);
ND_API nd_array *nd_var(nd_array *a, int axis);
ND_API nd_array *nd_any(nd_array *a, int axis);
ND_API nd_array *nd_all(nd_array *a, int axis);

/* ---------------------------------------------------------- linear algebra */

/* NumPy matmul: 1-d x 1-d is a dot product (0-d result); 2-d x 2-d a matrix
 * product; >2-d batched with broadcast batch dimensions. Errors: ND_ERR_SHAPE
 * for mismatched inner dimensions or 0-d operands. */
ND_API nd_array *nd_matmul(nd_array *a, nd_array *b);
ND_API nd_array *nd_dot(nd_array *a, nd_array *b); /* = nd_matmul for 1-d/2-d */

/* ------------------------------------------------------------- shaping */

/* A view by a NumPy index string: comma-separated items, each a slice
 * "start:stop:step" (any part may be omitted; negative values count from the
 * end), an integer (drops the axis), "..." (at most once) or "None" (new axis
 * of length 1). Example: nd_view(a, "1:-1, ::2, ..., None"). Errors:
 * ND_ERR_INDEX for malformed strings, a zero step, too many indices or an
 * integer out of range. */
ND_API nd_array *nd_view(nd_array *a, const char *index);
/* Reshape to `shape` (one entry may be -1). As NumPy: a view when the
 * strides allow it (writes through either are visible in both; a reshape of
 * a broadcast that keeps its layout stays a read-only view), otherwise a
 * copy (lazy, fused into its consumers like nd_copy). */
ND_API nd_array *nd_reshape(nd_array *a, int ndim, const int64_t *shape);
/* Permute axes; perm NULL reverses them. Always a view. */
ND_API nd_array *nd_transpose(nd_array *a, const int *perm);
/* A read-only broadcast view. */
ND_API nd_array *nd_broadcast_to(nd_array *a, int ndim, const int64_t *shape);
/* Join along an existing axis; dtypes promote. */
ND_API nd_array *nd_concatenate(int n, nd_array *const *arrays, int axis);
/* Join along a new axis; every input must have the same shape. */
ND_API nd_array *nd_stack(int n, nd_array *const *arrays, int axis);
/* a as 1-d. As NumPy: a view when a is C-contiguous, otherwise a copy (a
 * strided view such as x[::2], a transpose or a broadcast gives a new,
 * writable array that later writes to a do not change). */
ND_API nd_array *nd_ravel(nd_array *a);

/* ---------------------------------------------------------------- writes */

/* dst[...] = src: src broadcasts to dst's shape and is cast to dst's dtype
 * (unsafe casting, as NumPy's setitem). dst may be a view; the write is
 * visible through every array sharing its memory. NumPy order: the whole
 * right-hand side is computed before anything is written. A weak scalar src
 * is a Python number, checked as NumPy 2 does: into an integer dtype it
 * must fit (a float once truncated toward zero; NaN and infinities never
 * do), so uint8 <- nd_scalar_int(-1) or int8 <- nd_scalar(300.0) is
 * ND_ERR_DTYPE rather than 255 or 44; bool and float dtypes take any value.
 * Errors: ND_ERR_SHAPE (no broadcast), ND_ERR_DTYPE (a weak scalar out of
 * range), ND_ERR_ARG (dst is a broadcast view, a weak scalar or a view of
 * one). On error nothing is written. */
ND_API nd_status nd_assign(nd_array *dst, nd_array *src);
/* dst[...] = value, as NumPy's a.fill(value): into an integer dtype the
 * value must be finite and fit once truncated toward zero (else
 * ND_ERR_DTYPE, nothing written). Other errors as nd_assign. */
ND_API nd_status nd_fill(nd_array *dst, double value);

/* ------------------------------------------------------------ inspection */

/* Also valid on a handle that outlived nd_shutdown; a freed handle gives
 * the NULL value and ND_ERR_ARG. */
ND_API int nd_ndim(const nd_array *a);                /* -1 for NULL */
ND_API const int64_t *nd_shape(const nd_array *a);    /* NULL for NULL */
ND_API int64_t nd_size(const nd_array *a);            /* -1 for NULL */
ND_API nd_dtype nd_dtype_of(const nd_array *a);       /* ND_NUM_DTYPES for NULL */
/* Strides in elements (NumPy's strides divided by the item size). */
ND_API const int64_t *nd_strides(const nd_array *a);

/* -------------------------------------------------------- observability */

/* Writes the pending graph, as the scheduler would plan it, as Graphviz:
 * one node per API call (op, shape, dtype), fused kernels as clusters,
 * inserted copies in their own colour, a legend. Does not run anything. */
ND_API nd_status nd_graph_dump_dot(const char *path);

#ifdef __cplusplus
}
#endif
#endif /* ND_H */
