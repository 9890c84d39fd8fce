/* Private interfaces of the CPU backend: the per-(op, dtype) tile loops, the
 * kernel interpreter, the worker pool and matmul. */
#ifndef ND_BACKENDS_CPU_INTERNAL_H
#define ND_BACKENDS_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "common/dtype.h"
#include "common/ops.h"
#include "backends/cpu/cpu_scalar.h" /* element types BOOL_T .. F64_T */

/* Elements per tile: 1024 keeps a tile of the widest dtype (8 KiB) in L1 and
 * amortises the interpreter's dispatch over enough elements. */
#define ND_CPU_TILE 1024

/* One vectorisable loop over n elements of a tile. `out` never aliases an
 * operand (the register allocator guarantees it). */
typedef void (*nd_cpu_fn)(void *restrict out, const void *a, const void *b, const void *c,
                          int64_t n);

size_t nd_cpu_dtype_size(int dtype);

/* The native loop for op computed in dtype `t` (operands and result of dtype
 * t; comparisons: operands t, result bool; WHERE: a bool), or NULL when the op
 * has no native loop in t (the interpreter then computes via another dtype:
 * nd_cpu_compute_dtype). */
nd_cpu_fn nd_cpu_op_fn(int op, int t);
/* dtype in which op is computed for instruction dtype t (float16/bfloat16 ->
 * float32, bool arithmetic -> int8, transcendental ops on ints -> float64). */
int nd_cpu_compute_dtype(int op, int t);
/* 1 when op's loop in dtype t is a vectorised whole-array function of
 * cpu_sleef.c instead of a loop over its element function (common/
 * element_fns.h); the JIT calls those on strips. */
int nd_cpu_op_is_array_fn(int op, int t);
/* Cast loop src -> dst (NumPy unsafe casting; float -> int truncates toward
 * zero through int64 and wraps, NaN/out of range -> bits 2^63 as on x86). */
nd_cpu_fn nd_cpu_cast_fn(int src, int dst);

/* The SLEEF tile loop of a float32/float64 transcendental (cpu_sleef.c),
 * or NULL when op in dtype t has none (then op_table's libm loop runs). */
nd_cpu_fn nd_cpu_vmath_fn(int op, int t);

/* The random draws at logical indices ix[0..n) (common/philox.h), uniform
 * in [0, 1) or standard normal, computed in float64 (`wide`) or float32,
 * into out. `consecutive`: the caller knows ix[i] = ix[0] + i (else it is
 * checked). s0, s1, s2: scratch of ND_CPU_REG_BYTES each. */
void nd_cpu_rand_tile(int normal, int wide, uint64_t seed, uint64_t stream, const int64_t *ix,
                      int consecutive, void *out, int64_t n, char *s0, char *s1, char *s2);
/* The integer draws in [0, range) at ix[0..n) (common/philox.h's Lemire
 * draws), uint64 (`wide`) or uint32, into out; scratch as above. */
void nd_cpu_rand_int_tile(int wide, uint64_t range, uint64_t seed, uint64_t stream, const int64_t *ix,
                          int consecutive, void *out, int64_t n, char *s0, char *s1);
/* The same by the pair form (two elements a word; uint16 out): `rt` is the
 * IR's r | t << 32. */
void nd_cpu_rand_pair_tile(uint64_t rt, uint64_t seed, uint64_t stream, const int64_t *ix, int consecutive,
                           uint16_t *out, int64_t n, char *s0, char *s1);

/* The worker pool: runs fn(arg, worker) on the caller (worker 0) and on
 * those of the other n - 1 workers (numbered 1.. in the order they join)
 * that start before the caller's fn returns, and returns when all of those
 * are done. So fn must claim its work as it goes (an atomic counter), never
 * count on a given worker running. */
typedef struct nd_cpu_pool nd_cpu_pool;
nd_status nd_cpu_pool_create(int num_threads, nd_cpu_pool **out);
void nd_cpu_pool_destroy(nd_cpu_pool *p);
int nd_cpu_pool_size(const nd_cpu_pool *p);
void nd_cpu_pool_run(nd_cpu_pool *p, int n, void (*fn)(void *arg, int worker), void *arg);

/* cpu_blas_threads.c: the BLAS library's thread count, through the control
 * of whichever known BLAS (OpenBLAS, BLIS, MKL) the process has, found at
 * run time. init sets it to `threads` (unless the library's own variable,
 * e.g. OPENBLAS_NUM_THREADS, is set and nd's count was not explicit) and
 * logs the library at ND_LOG=2. get: -1 when there is no control. set:
 * the count before, or -1. name/corename: NULL when unknown. */
void nd_cpu_blas_threads_init(int explicit_count, int threads);
int nd_cpu_blas_threads_get(void);
int nd_cpu_blas_threads_set(int n);
const char *nd_cpu_blas_name(void);
const char *nd_cpu_blas_corename(void);
/* The BLAS's own function or variable `name` (dlsym in the library that
 * gives nd its sgemm, then the global scope); NULL when it has none. */
void *nd_cpu_blas_symbol(const char *name);

/* cpu_blas_core.c: OpenBLAS's kernels. init (at the backend's start)
 * switches an OpenBLAS that fell back to pre-AVX2 kernels on an AVX2 CPU to
 * the core the CPU's features call for, unless OPENBLAS_CORETYPE is set.
 * better: that core for OpenBLAS's `core` on a CPU with features f, or NULL
 * to keep it. switch: asks OpenBLAS to choose `core` (0 when it did). */
typedef struct {
    int avx2_fma, avx512, amd;
} nd_cpu_blas_features;
void nd_cpu_blas_core_init(void);
int nd_cpu_blas_core_fix(void); /* init's work, each call: 1 switched, 0 kept, -1 could not */
const char *nd_cpu_blas_core_better(const char *core, nd_cpu_blas_features f);
nd_cpu_blas_features nd_cpu_blas_features_here(void);
int nd_cpu_blas_core_switch(const char *core);

typedef struct {
    /* Steps may be submitted from several executor threads; kernels are
     * parallel inside, so they run one at a time (scratch is per worker). */
    void *lock; /* uv_mutex_t */
    nd_cpu_pool *pool;
    int num_threads;
    /* per-worker scratch, grown on demand (index = worker) */
    void **scratch;
    size_t *scratch_bytes;
    struct nd_cpu_block_cache *blocks; /* freed large blocks kept for reuse */
    struct nd_cpu_jit *jit;            /* compiled kernels; NULL when ND_CPU_JIT=0 */
    struct nd_fft_cache *fft_plans;    /* nd's FFT plans by length and precision (fft_plan.h) */
    char ufunc_dir[1024];              /* <cache dir>/cpu: user loops' tile objects */
    /* ND_RANK_LINK=1 under mpirun: MPI's transfers, and the test link over
     * them once the ranks opened it (cpu_link.c). */
    const nd_rank_wire *link_wire;
    struct nd_cpu_link *link;
} nd_cpu_state;

/* cpu_link.c: the test link between CPU ranks (ND_RANK_LINK=1): installs
 * backend.h's rank_link_* and rank_xfer over `wire`; destroy closes it. */
void nd_cpu_link_install(nd_backend *be, const nd_rank_wire *wire);
void nd_cpu_link_destroy(nd_backend *be);

/* cpu_memory.c: host blocks with a bounded cache of large freed ones. */
typedef struct nd_cpu_block_cache nd_cpu_block_cache;
nd_cpu_block_cache *nd_cpu_block_cache_new(void);
void nd_cpu_block_cache_free(nd_cpu_block_cache *c);
nd_status nd_cpu_host_alloc(nd_cpu_block_cache *c, size_t bytes, void **out);
void nd_cpu_host_release(nd_cpu_block_cache *c, void *ptr, size_t bytes);
/* The bytes the cache holds, and emptying it (nd_trim). */
size_t nd_cpu_block_cache_bytes(nd_cpu_block_cache *c);
void nd_cpu_block_cache_trim(nd_cpu_block_cache *c);

nd_status nd_cpu_run_kernel(nd_cpu_state *st, const nd_kernel *k, void *const *slots,
                            const nd_scalar_bits *params);
/* cpu_ufunc.c: compiles user loop l into its tile function with the system
 * C compiler (backend.h's prepare_ufunc). */
nd_status nd_cpu_prepare_ufunc(nd_backend *be, const char *fn, const nd_ufunc_loop *l);

nd_status nd_cpu_run_matmul(nd_cpu_state *st, const nd_matmul_desc *mm, void *const *slots);

/* cpu_lib.c: one of nd's library routines (common/lib_calls.h), its
 * arguments bound (args[0..n_in) inputs, then outputs). An implementation
 * has this type and may use the pool (st->pool) and per-worker scratch. */
typedef nd_status (*nd_cpu_lib_fn)(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_run_lib(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);

/* The implementations, one per routine (cpu_lib.c's table lists them). */
nd_status nd_cpu_lib_cumulate(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
/* cpu_gather.c */
nd_status nd_cpu_lib_gather(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_scatter(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_select(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_select_index(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
/* sorting and searching: cpu_sort.c, cpu_search.c */
nd_status nd_cpu_lib_sort(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_take_rows(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_searchsorted(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_quantile(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_histogram(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_bin_index(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
/* cpu_linalg.c: dense linear algebra through LAPACK (common/lib_linalg.h) */
nd_status nd_cpu_lib_la_cholesky(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_la_lu(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_la_solve(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_la_qr(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_la_svd(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_la_eigh(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
nd_status nd_cpu_lib_la_eig(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);
/* cpu_fft.c: numpy.fft's transforms with nd's own FFT (common/lib_fft.h) */
nd_status nd_cpu_lib_fft(nd_cpu_state *st, const nd_user_desc *u, const nd_kernel_arg *args);

/* cpu_eigh_panels.c: eigh with vectors of one real symmetric n x n matrix
 * (float64 when f64, else float32; column-major upper triangle a, as
 * dsyevd reads it) into w (n eigenvalues, ascending) and v (n x n,
 * column-major eigenvectors): dsyevd's phases with the back-transformation
 * over the pool. Returns LAPACK's info (0, or > 0 when dstedc failed), or
 * ND_EIGH_PANELS_NOT_TAKEN where dsyevd would scale the matrix (the
 * caller runs dsyevd), or ND_EIGH_PANELS_OOM. */
enum { ND_EIGH_PANELS_NOT_TAKEN = -1000000, ND_EIGH_PANELS_OOM = -1000001 }; /* below LAPACK's -k */
int nd_cpu_eigh_panels(nd_cpu_state *st, int f64, int64_t n, const void *a, void *w, void *v);

/* cpu_stedc.c: the eigenvalues (d, ascending on return) and eigenvectors
 * (z, n x n column-major) of the symmetric tridiagonal matrix with
 * diagonal d and off-diagonal e (destroyed), as LAPACK's stedc with
 * compz = 'I', over the pool. Returns LAPACK's info (0, or > 0 when a
 * subproblem did not converge), or ND_EIGH_PANELS_OOM (below LAPACK's
 * infos) out of memory. */
int nd_cpu_stedc(nd_cpu_state *st, int f64, int64_t n, void *d, void *e, void *z);

/* Runs fn(arg, begin, end) over [0, n) split into contiguous ranges of at
 * least `grain` items on the pool's workers (on the caller alone when n <
 * 2 * grain). */
void nd_cpu_parallel_for(nd_cpu_state *st, int64_t n, int64_t grain, void (*fn)(void *arg, int64_t begin, int64_t end),
                         void *arg);
/* Runs fn(arg, part) once for every part in [0, parts), on whichever of
 * the pool's workers get there (a part index is not a worker index: use
 * it for per-part data, never for per-worker scratch). */
void nd_cpu_run_parts(nd_cpu_state *st, int parts, void (*fn)(void *arg, int part), void *arg);
/* The element offset (from a->data) of row r of view a: r is the flat
 * row-major index over every axis but the last; 0-d and 1-d have row 0. */
int64_t nd_cpu_row_offset(const nd_kernel_arg *a, int64_t r);

#endif
