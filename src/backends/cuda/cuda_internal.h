/* Internal contract between the files of the CUDA backend: code generation
 * (codegen*.c), the NVRTC kernel cache (kernel_cache.c), cuBLAS matmul
 * (matmul.c) and the backend object itself (backend.c). Nothing here is
 * visible outside src/backends/cuda. */
#ifndef ND_BACKENDS_CUDA_INTERNAL_H
#define ND_BACKENDS_CUDA_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include <nvtx3/nvToolsExt.h>

#include "backends/backend.h"
#include "backends/cuda/cuda_loader.h" /* the CUDA, NVRTC and cuBLAS headers, loaded at run time */
#include "common/error.h"
#include "common/strbuf.h"
#include "common/profile.h"

/* NVTX ranges (header-only NVTX3: free unless a tool such as Nsight
 * Systems is attached). Every copy, kernel, library call and flush is one. */
#define ND_NVTX_PUSH(name) nvtxRangePushA(name)
#define ND_NVTX_POP() nvtxRangePop()

/* Bump when the generated code changes meaning: it is part of the on-disk
 * cache key, so old binaries are never loaded by a newer codegen. */
/* 16: gathers of up to three index arrays, their fail record with the
 * axis (struct ndk_bad); 15: shape-generic 1-d elementwise kernels (their extent an argument);
 * 10: reduction trees end in warp shuffles, a reduction's draw group serves
 * one call, 32-bit draw counters; 9: sums of bools counted in integers; 8:
 * griddepcontrol.wait first in every kernel, up to 16384 reduction splits,
 * 4-row march kernels; 17: full reductions of generated values grid-stride
 * over the grid the host picks (its block count an argument); 18: the first
 * Philox round's stream half from argument words the host fills; 19: draws
 * of one seed and stream high word share their first round's c3 ^ k1 word
 * (ND_IR_ONE_HIGH_WORD). */
#define ND_CUDA_CODEGEN_VERSION 19u

#define ND_CUDA_BLOCK 256      /* threads per block of every generated kernel */
#define ND_CUDA_MAX_WORDS 480  /* kernel argument words (8 bytes) we allow */
#define ND_CUDA_MAX_SEEDS 4    /* seeds per kernel whose Philox round keys the host computes */
#define ND_CUDA_MAX_STREAMS 8  /* (seed, stream) pairs per kernel whose first Philox round the host computes */
#define ND_CUDA_UNROLL 8       /* rows a thread of a light scalar elementwise kernel loads at once */
#define ND_CUDA_UNROLL_MAX_INSTS 64 /* "light": at most this many IR instructions */
#define ND_CUDA_UNROLL_MIN_POINTS ((int64_t)1 << 23) /* "large": at least this many points */
#define ND_CUDA_MARCH_ROWS 64  /* rows of the strip a block of the march kernel walks down (32: 1.3% slower sweeps, bench/stencil_variants.cu) */
#define ND_CUDA_MARCH_ROWS_MID 4 /* the same below ND_CUDA_UNROLL_MIN_POINTS points (a 1000x1000 grid: 1000 blocks) */
#define ND_CUDA_MARCH_MIN_POINTS ((int64_t)1 << 18) /* no march kernel below this many points */
#define ND_CUDA_MARCH_STEP 4   /* rows of the walk whose loads a thread issues before computing any */
#define ND_CUDA_MARCH_MAX_SPAN 5 /* rows one window of the march kernel spans at most */
#define ND_CUDA_MARCH_MAX_COLS 2 /* columns apart a march kernel passes values between threads */
#define ND_CUDA_MARCH_MAX_LOADS 64 /* loads a march kernel may have */
#define ND_CUDA_MARCH_MAX_SMEM 32768 /* bytes of shared memory a march kernel may use */
#define ND_CUDA_REDUCE_SPLITS 16384 /* thread groups a row reduction with few outputs is split into, at most */
#define ND_CUDA_PERSIST_BLOCKS 8 /* blocks a multiprocessor of a full reduction of generated values (2048 threads: sm_90's resident maximum) */
#define ND_CUDA_ACC_BYTES 16   /* one reduction partial: {value, index} */
#define ND_CUDA_PIN_MIN ((size_t)1 << 20) /* host buffers from this size on are pinned */
#define ND_CUDA_PINNED_MAX_CACHED 128     /* released pinned blocks kept at most (backend.c) */

/* ------------------------------------------------------------- code generation */

typedef enum {
    ND_CUDA_ELEMWISE,    /* grid-stride over the whole space */
    ND_CUDA_REDUCE_ROWS, /* innermost axis reduced: a thread group per output */
    ND_CUDA_REDUCE_COLS  /* innermost axis kept: a thread per output column */
} nd_cuda_strategy;

/* Launch geometry and names, a pure function of the kernel's structure (so
 * a reduction's grid, and therefore its bits, never depend on the device),
 * except for `persist` kernels: their grid is the device's multiprocessor
 * count times ND_CUDA_PERSIST_BLOCKS (nd_cuda_persist_grid), so their bits
 * are the same on every run and every device with as many
 * multiprocessors. */
typedef struct {
    nd_cuda_strategy strategy;
    int wide;          /* 64-bit index arithmetic */
    int64_t n;         /* points in the iteration space */
    int64_t n_out;     /* reduction outputs (1 for a full reduction) */
    int64_t n_red;     /* points reduced into each output */
    int64_t splits;    /* partial results per output (1 = single pass; persist: see there) */
    int pass2_tree;    /* pass 2 folds each output's partials with a block */
    int64_t chunk;     /* reduced points per partial */
    int tpr;           /* ROWS: threads per output row (power of two) */
    int unroll;        /* ELEMWISE scalar kernel: rows (along axis 0) a thread loads before storing (1 = one point at a time) */
    int march;         /* ELEMWISE scalar kernel: rows of axis 0 a block walks down, sharing neighbouring loads (0 = off) */
    int vec;           /* elements per thread in the vector variant; 0 = none */
    int vec_group;     /* the vector variant's points are one group (draws share calls) */
    /* Kernels with random draws: a thread evaluates `group` points at a
     * time along axis `group_axis` (the first at a multiple of group on
     * it) so that they share Philox calls (codegen_rng.c); 1 = one point.
     * ELEMWISE: consecutive points of the innermost axis; ROWS and COLS:
     * consecutive reduced points, or for COLS with group_kept, the same
     * reduced point of `group` neighbouring outputs. */
    int group, group_axis, group_kept;
    int64_t items;     /* work items of the main kernel's thread loop (ELEMWISE, COLS) */
    int n_words;       /* kernel argument words: slots, params, [partials], round keys */
    /* Philox round keys the host fills at launch (nd_cuda_fill_round_keys):
     * seed i is argument word seed_word[i], its ten keys start at word
     * key_word + 10 i. */
    int n_seeds, key_word;
    int seed_word[ND_CUDA_MAX_SEEDS];
    /* The first round's stream half, which the host fills at launch after
     * the keys (nd_cuda_fill_round_keys): (seed, stream) pair i is seed
     * stream_seed[i]'s keys and argument word stream_word[i]; its two words
     * start at round0_word + 2 i. n_streams 0: every call runs all ten
     * rounds (no keys, or more pairs than ND_CUDA_MAX_STREAMS). */
    int n_streams, round0_word;
    int stream_seed[ND_CUDA_MAX_STREAMS], stream_word[ND_CUDA_MAX_STREAMS];
    int64_t groups;    /* pass-1 work items: n_out * splits */
    /* Shape-generic (nd_cuda_shape_class >= 0): the extent is argument
     * word extent_word, not a literal, and n, items, groups and n_out above
     * are those of the kernel the entry was compiled for: a launch takes
     * its own from nd_cuda_launch_info. */
    int generic, extent_word;
    /* Kernels that gather (kernel_ir.h's ND_IR_GATHER): argument word
     * bad_word is the address of the launch's bad-index record (struct
     * ndk_bad of nd_cuda_emit_gather, in mapped host memory), else -1. */
    int bad_word;
    /* A full reduction of generated values (ROWS, one output, no loads or
     * gathers: random draws, index arithmetic), bound by arithmetic: its
     * threads grid-stride over the reduced points (groups of `group`) like
     * a hand-written kernel, one partial per block, on the grid of
     * nd_cuda_persist_grid; argument word splits_word holds that block
     * count, which pass 2 folds (none when it is 1: the block writes the
     * output). splits, chunk and groups are then 1, n_red and 1. */
    int persist, splits_word;
    char name[96];     /* main kernel (scalar path) */
    char name_vec[100];/* vector variant, when vec > 0 */
    char name_pass2[100]; /* combines partials, when splits > 1 */
} nd_cuda_kinfo;

/* Shape-generic kernels (docs/internals.md): a 1-d elementwise kernel
 * without random draws is generated with its extent as a launch argument,
 * so that one binary serves every length of its size class. Returns the
 * class (1: 64-bit index arithmetic, 0: 32-bit), or -1 when k is generated
 * with literal extents (other kernels, or ND_CUDA_GENERIC=0). */
int nd_cuda_shape_class(const nd_kernel *k);
/* What the kernel cache keys k by: k->hash, or for a shape-generic kernel
 * the hash of everything but its extent and of its class. */
uint64_t nd_cuda_kernel_key(const nd_kernel *k);
/* The geometry of one launch of k with cached entry info `info`, whose
 * argument words are `words`: info itself, or for a shape-generic kernel
 * *tmp, a copy with k's own extent, which also goes into its word. */
const nd_cuda_kinfo *nd_cuda_launch_info(const nd_cuda_kinfo *info, const nd_kernel *k, nd_cuda_kinfo *tmp,
                                         uint64_t *words);
/* Points a thread of k's vector variant takes (16 bytes of its widest
 * unit-stride access; at most 8), or 0 when k cannot have one (not a 1-d
 * elementwise space of unit-stride or broadcast accesses, complex128). */
int nd_cuda_vec_width(const nd_kernel *k);
/* Whether a launch over n points takes the vector variant of width vec on
 * a device of sm_count multiprocessors (besides aligned pointers): only
 * when that still leaves a vector item for every core of the device. A
 * small space (1000 points of a long dependent chain) runs faster one
 * point per thread over more multiprocessors. The kernel cache compiles
 * the variant only where this holds (nd_cuda_kcache_get). */
int nd_cuda_vec_fills(int64_t n, int vec, int sm_count);
/* Validates k and computes its geometry. ND_ERR_ARG for malformed IR,
 * ND_ERR_UNSUPPORTED for kernels this backend cannot express. */
nd_status nd_cuda_kernel_info(const nd_kernel *k, nd_cuda_kinfo *info);
/* Pass 1's blocks of a persist kernel on a device of sm_count
 * multiprocessors: ND_CUDA_PERSIST_BLOCKS a multiprocessor, fewer when
 * that would leave a lane fewer than 16 points. */
unsigned nd_cuda_persist_grid(const nd_cuda_kinfo *info, int sm_count);
/* The argument word of a gathering kernel's bad-index record, and the
 * device function its gathers call (ndk_gather, ndk_bad): a bad index is
 * never read through; the first one met is filed in the record. */
int nd_cuda_bad_word(const nd_kernel *k);
void nd_cuda_emit_gather(nd_strbuf *sb, const nd_kernel *k);
/* CUDA C source for k (malloc'd, NUL-terminated; the caller frees). */
nd_status nd_cuda_codegen(const nd_kernel *k, const nd_cuda_kinfo *info, char **src_out);

/* Shared pieces of the generator (codegen.c), used by codegen_reduce.c. */
const char *nd_cuda_reg_type(nd_dtype t); /* type of a value in registers */
const char *nd_cuda_mem_type(nd_dtype t); /* type of an element in memory */
void nd_cuda_emit_prelude(nd_strbuf *sb);
/* The user functions kernel k calls (common/ufunc_loop.h), as __device__
 * functions, after the prelude. */
void nd_cuda_emit_ufuncs(nd_strbuf *sb, const nd_kernel *k);
/* ufunc_check.c: compiles user loop l with NVRTC for sm_<arch>; ND_ERR_COMPILE
 * naming fn with NVRTC's message otherwise. */
nd_status nd_cuda_check_ufunc(int arch, const char *fn, const nd_ufunc_loop *l);
/* The helpers' text the prelude starts with (for the kernel cache's key). */
const char *nd_cuda_prelude_text(void);
void nd_cuda_emit_args_struct(nd_strbuf *sb, const nd_cuda_kinfo *info);
/* Opens a kernel entry point `name(const ndk_args A)`: its first statement
 * waits for the kernel before it (programmatic dependent launch). */
void nd_cuda_emit_kernel_open(nd_strbuf *sb, const char *name);
/* The body function of a group of G points along axis gax (G = 1: one
 * point, `ndk_body`; else `ndk_body_g<G>`). */
void nd_cuda_emit_body_fn(nd_strbuf *sb, const nd_kernel *k, int G, int gax);
/* Decomposes the linear index `lin` over the axes in `mask` (row-major, last
 * fastest) into variables i<axis> of type `at`. */
void nd_cuda_emit_unravel(nd_strbuf *sb, const nd_kernel *k, uint32_t mask, const char *lin,
                          const char *at, const char *indent);
/* Emits the address expression offset + sum strides*i for an access. */
void nd_cuda_emit_addr(nd_strbuf *sb, const nd_ir_access *a, int ndim, int wide);
/* Emits loads into l<j>, indices into x<j>, declares stores s<j>, calls the
 * body (rv = reduced value when k has one), then writes the stores. G > 1:
 * the G points i<gax> + e of a group, names suffixed _<e> (rv_<e>). */
void nd_cuda_emit_point(nd_strbuf *sb, const nd_kernel *k, int wide, const char *indent, int G, int gax);
void nd_cuda_emit_reduce_kernels(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info);
void nd_cuda_emit_elementwise_kernels(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info);
int nd_cuda_mem_size(nd_dtype t); /* bytes of an element in memory */
/* Names in generated code: <base><j> for one point (G = 1), else
 * <base><j>_<e> for point e of a group; the reduced value rv / rv_<e>; the
 * body function ndk_body / ndk_body_g<G>. */
void nd_cuda_point_name(char *out, size_t cap, const char *base, int j, int e, int G);
void nd_cuda_rv_name(char *out, size_t cap, int e, int G);
/* The instruction whose value the body hands out as rv: the reduced value,
 * or for a sum of a bool cast to a number the bool itself (the reduction
 * casts it, or counts it: codegen_reduce.c). */
int nd_cuda_reduce_rv(const nd_kernel *k);
void nd_cuda_body_name(char *out, size_t cap, int G);
/* Expression converting register value `x` of dtype `from` to dtype `to`. */
void nd_cuda_emit_cast(nd_strbuf *sb, nd_dtype from, nd_dtype to, const char *x);

/* Random draws (codegen_rng.c). Points per group in elementwise kernels
 * with draws: the most points one Philox call serves (W = 4, float32
 * uniform); reductions group nd_cuda_rng_call_share points instead. */
#define ND_CUDA_RNG_GROUP 4
#define ND_CUDA_MAX_GROUP 8  /* the vector variant's widest group */
#define ND_CUDA_WORD_EXPR 128 /* room for one word's expression */
/* Largest |element index| access a reaches over the space shape (codegen.c). */
int64_t nd_cuda_access_extent(const nd_ir_access *a, int ndim, const int64_t *shape);
/* The most points one Philox call of k's draws serves (4 / words a draw:
 * 4 for float32 uniforms, 2 for float64 ones); 1 without draws. */
int nd_cuda_rng_call_share(const nd_kernel *k);
/* Round keys (codegen_rng.c): the distinct seed parameters of k's draws in
 * params (at most ND_CUDA_MAX_SEEDS; 0 when there are more: the kernel then
 * computes its keys itself), the first argument word of the keys, and the
 * host's filling of them, at each launch, from the seed words already in
 * `words` (which seeds and where: kinfo, computed once per kernel). */
int nd_cuda_seed_params(const nd_kernel *k, int32_t *params);
int nd_cuda_round_key_word(const nd_kernel *k);
/* The distinct (seed, stream) pairs of k's draws whose first round the
 * host computes: seed index (into nd_cuda_seed_params's list) and stream
 * parameter of each (at most ND_CUDA_MAX_STREAMS; 0 when there are more,
 * or no round keys). */
int nd_cuda_stream_params(const nd_kernel *k, int32_t *seed_index, int32_t *stream_param);
/* The first argument word of the first rounds' words (after the keys),
 * and the first after them: where the words that follow the random
 * draws' (bad_word, extent_word) go. */
int nd_cuda_round0_word(const nd_kernel *k);
int nd_cuda_rng_words_end(const nd_kernel *k);
void nd_cuda_fill_round_keys(const nd_cuda_kinfo *info, uint64_t *words);
/* Whether a group of G points along gax (its first at a multiple of G)
 * computes fewer Philox calls than points for some draw of k. */
int nd_cuda_rng_shares(const nd_kernel *k, int G, int gax);
/* Whether some load of k reads what another reads a few columns (and
 * rows) away (a stencil's west and east of its centre): the march kernel
 * passes those between threads (codegen_points.c). */
int nd_cuda_march_shares(const nd_kernel *k);
/* Emits the Philox calls draw instruction j needs for a group of G points
 * along gax, whose index values are named idx[e]; words[e][i] receives the
 * expression of word i of point e's draw. */
void nd_cuda_emit_draw_words(nd_strbuf *sb, const nd_kernel *k, int j, int G, int gax,
                             char (*idx)[32], char (*words)[4][ND_CUDA_WORD_EXPR]);

/* ----------------------------------------------------------- kernel cache */

/* The cuBLAS workspace (matmul.c): what Hopper's kernels ask for at most. */
#define ND_CUDA_BLAS_WORKSPACE ((size_t)32 << 20)

typedef struct nd_cuda_kcache nd_cuda_kcache;

typedef struct {
    cudaLibrary_t lib;
    cudaKernel_t main, vec, pass2; /* vec/pass2 NULL when absent */
    nd_cuda_kinfo info;
} nd_cuda_kentry;

/* cache_dir NULL: ~/.cache/nd. arch = 10*major + minor; sm_count the
 * device's multiprocessors (whether a kernel gets its vector variant:
 * nd_cuda_kcache_get). */
nd_status nd_cuda_kcache_create(const char *cache_dir, int arch, int sm_count, nd_cuda_kcache **out);
void nd_cuda_kcache_destroy(nd_cuda_kcache *c);
/* The loaded kernel for k: from memory, else from disk, else compiled. */
nd_status nd_cuda_kcache_get(nd_cuda_kcache *c, const nd_kernel *k, const nd_cuda_kentry **out);
/* Compiles the kernels of ks[0..n) that neither memory nor disk holds on
 * several threads at once (at most 8, and the cores), and adds them to c:
 * a plan of new kernels (a program's first run) waits for its slowest
 * compile rather than for the sum. Best effort: a kernel whose compile
 * fails here is left to nd_cuda_kcache_get, which compiles it again and
 * reports the error on the caller's thread; with fault injection on it
 * does nothing. Called before the plan's nd_cuda_kcache_get calls. */
void nd_cuda_kcache_prefetch(nd_cuda_kcache *c, const nd_kernel *const *ks, int n);
/* Compiles (or loads from cache) a fixed source under `key`; returns its
 * library. Used for the hand-written kernels (integer matmul). */
nd_status nd_cuda_kcache_get_source(nd_cuda_kcache *c, uint64_t key, const char *what,
                                    const char *src, cudaLibrary_t *out);
/* Compiles src for sm_<arch> into a CUBIN (malloc'd). On a compile error
 * the source and log are saved and ND_ERR_COMPILE names the file. */
/* "-I<dir>" of the toolkit headers the kernels include (kernel_cache.c), or
 * "" when none was found (NVRTC then names the missing header). */
const char *nd_cuda_include_option(void);
nd_status nd_cuda_nvrtc_compile(const char *src, const char *what, int arch, const char *save_dir,
                                void **cubin, size_t *cubin_len);

/* ------------------------------------------------------------- the backend */

typedef struct nd_cuda_plan_state nd_cuda_plan_state;

/* A pinned host block (cudaMallocHost) the backend made: handed out, or
 * kept in the pinned cache after its release (backend.c, "pinned host
 * memory"). */
typedef struct {
    void *ptr;
    size_t bytes;      /* as allocated: a reused block may be larger than asked */
    cudaEvent_t done;  /* recorded on `stream` at release (NULL until the first) */
    int pending;       /* `done` is recorded and not yet waited for */
    uint64_t released; /* 0: in use; else the release tick (cached) */
} nd_cuda_pinned;

/* Logical devices (ND_DEVICES=0,1 or 0,0; backend.c "several devices").
 * Logical device 0 is the backend's own device: its streams are `stream`
 * and `aux`, its pool `pool`. Every other one has streams of its own on
 * its GPU (created when a plan first runs a step there) and the pool of
 * its GPU (shared with the logical devices on the same GPU). */
#define ND_CUDA_MAX_LDEV 16
typedef struct {
    int ordinal;                          /* the GPU it runs on */
    cudaStream_t streams[ND_PLAN_STREAMS];/* logical device > 0: plan stream s (NULL until used) */
    cudaMemPool_t pool;                   /* its GPU's pool (NULL: cudaMalloc) */
    int owns_pool;                        /* made here (the first logical device on a GPU other than device 0's) */
    /* logical device > 0: its own cuBLAS handle, made on its GPU and bound
     * to its plan stream 0, and that handle's workspace (device 0's are
     * nd_cuda's blas and blas_workspace): a matmul step runs where its rows
     * live, and GEMMs of two devices may run at once */
    cublasHandle_t blas;
    void *blas_workspace;
} nd_cuda_ldev;

typedef struct nd_cuda {
    int device;
    /* Logical devices (1: ND_DEVICES names one GPU); multi_gpu: they span
     * more than one GPU (copies between them are peer copies, plans are
     * not captured as graphs). */
    int n_ldev, multi_gpu;
    int share_streams; /* ND_CUDA_SHARE_STREAMS=1: logical devices on `device`'s GPU use its streams */
    nd_cuda_ldev ldev[ND_CUDA_MAX_LDEV];
    int arch; /* 10*major + minor */
    int sm_count;
    /* Plan stream 0 and everything outside plans (allocation, host reads,
     * single kernels) run on `stream`; plans fork onto aux[1..] and join
     * back, so from outside all work is ordered on `stream`. */
    cudaStream_t stream;
    cudaStream_t aux[ND_PLAN_STREAMS];
    void *blas_workspace; /* ours (ND_CUDA_BLAS_WORKSPACE bytes), so cuBLAS allocates nothing during capture */
    cudaMemPool_t pool;
    cublasHandle_t blas;
    int tf32;
    int64_t mem_limit; /* 0 = none */
    size_t in_use;     /* device bytes we hold */
    nd_cuda_kcache *cache;
    cudaLibrary_t imatmul_lib; /* the fixed integer/fallback matmul kernels */
    /* the small batched solves' kernels by dtype (float32, float64,
     * complex64, complex128) and n (lib_small_solve.c), NULL until used */
    cudaKernel_t small_solve[4][33];
    /* Cholesky's pack pass (lib_cholesky.c): its library, and its
     * kernel by dtype as small_solve, NULL until used */
    cudaLibrary_t chol_lib;
    cudaKernel_t chol_kernels[4][3]; /* lib_cholesky.c's CHOL_PACK, CHOL_ZEROS, CHOL_PACK1 */
    /* ND_CUDA_CHOL_SIDE_ZEROS=1: the zeros on chol_side, a low-priority
     * stream made on first use, between two events (lib_cholesky.c) */
    int chol_side_zeros;
    cudaStream_t chol_side;
    cudaEvent_t chol_events[2];
    /* The workspace of routines run as a step of their own (a plan run step
     * by step: nd_cuda_run_lib_step), kept from one to the next, grown when
     * one needs more; nd_trim, a failed allocation and shutdown give it
     * back (lib_calls.c says why). */
    void *step_ws;
    size_t step_ws_bytes;
    int graphs;        /* capture plans as CUDA Graphs and replay them */
    nd_cuda_plan_state *plans; /* every plan's state, for graph eviction */
    int32_t n_execs;   /* instantiated graphs held, all plans */
    uint64_t tick;     /* plan runs, for least-recently-used eviction */
    nd_profile *profile; /* ND_PROFILE: per-step device times (else NULL) */
    FILE *trace;         /* ND_TRACE: Chrome trace of every step (else NULL) */
    cudaEvent_t trace_base; /* time zero of the trace */
    uint64_t trace_flush;   /* plan runs written to the trace */
    /* Every pinned host block we made, in use or cached; the cache holds at
     * most pinned_cache_max bytes (ND_PINNED_CACHE; 0 = no cache). */
    nd_cuda_pinned *pinned;
    uint32_t n_pinned, cap_pinned, n_pinned_cached;
    size_t pinned_cached;    /* bytes of the cached blocks */
    size_t pinned_cache_max;
    uint64_t pinned_tick;    /* releases so far, for least-recently-released eviction */
    uint64_t pinned_hits, pinned_misses; /* host allocations served from the cache or not */
    /* The program's stream (nd_set_cuda_stream; NULL: none) and the events
     * that order the two streams both ways (app_stream.c). */
    cudaStream_t app;
    cudaEvent_t app_ready; /* recorded on app: what the program queued so far */
    cudaEvent_t nd_done;   /* recorded on stream: what nd enqueued so far */
    /* Serialises the entry points (they only enqueue work, so holding it is
     * brief) for executors that call the backend from several threads. */
    pthread_mutex_t lock;
    int lock_ok;
    /* The fail record (kernel_ir.h's nd_ir_fail; codegen's struct ndk_bad)
     * of kernels that gather when run on their own (run_kernel): pinned
     * host memory, which the device writes through unified addressing;
     * allocated at the first such kernel, read after it (backend.c,
     * gather_check). Plans have their own, per kernel that gathers, in
     * device memory (plan_runner.c). */
    void *gather_bad;
    /* Under mpirun, the NCCL communicator and its scratch (rank_link.c);
     * NULL where the ranks carry their bytes through host buffers. */
    struct nd_cuda_link *link;
} nd_cuda;

/* The link between GPU ranks (rank_link.c, built with NCCL: ND_CUDA_NCCL):
 * installs backend.h's rank_link_* and rank_xfer; destroy closes it,
 * before the stream and the context go. */
void nd_cuda_link_install(nd_backend *be);
void nd_cuda_link_destroy(nd_backend *be);

/* Stream-ordered device scratch memory (reduction partials, ...). */
nd_status nd_cuda_device_alloc(nd_cuda *cu, size_t bytes, void **out, const char *what);
/* The same on logical device `ldev`'s GPU (its pool), still ordered on
 * `stream` (a pool may serve a stream of another device). */
nd_status nd_cuda_device_alloc_on(nd_cuda *cu, int ldev, size_t bytes, void **out, const char *what);
/* Logical device `ldev`'s plan stream s: `stream`/`aux` for logical device
 * 0, else its own, created on its GPU at the first use. */
nd_status nd_cuda_ldev_stream(nd_cuda *cu, int ldev, int s, cudaStream_t *out);
/* Makes `ordinal` the calling thread's current device when the logical
 * devices span several GPUs (a no-op otherwise). */
void nd_cuda_use_device(nd_cuda *cu, int ordinal);
void nd_cuda_device_free(nd_cuda *cu, void *p, size_t bytes);

/* Turns a failed CUDA runtime call into ND_ERR_BACKEND (ND_ERR_OOM for
 * cudaErrorMemoryAllocation) naming the call and the driver's reason. */
nd_status nd_cuda_fail(cudaError_t e, const char *what);
#define ND_CUDA_TRY(call, what)                                      \
    do {                                                             \
        cudaError_t nd_cuda_e_ = (call);                             \
        if (nd_cuda_e_ != cudaSuccess) return nd_cuda_fail(nd_cuda_e_, what); \
    } while (0)

/* A matmul on logical device ldev (its cuBLAS handle; the fixed kernels
 * launched on `stream`, which must be that device's plan stream 0, the
 * stream its handle is bound to); the caller made its GPU current. */
nd_status nd_cuda_run_matmul(nd_backend *be, const nd_matmul_desc *mm, void *const *slots, int ldev,
                             cudaStream_t stream);

/* user_kernel.c: a user kernel's function for this device (its source
 * compiled through the cache, or the program's), and one launch of it. */
nd_status nd_cuda_user_resolve(nd_cuda *cu, const struct nd_user_kernel *k, const void **fn);
nd_status nd_cuda_issue_user(const void *fn, const nd_user_desc *u, void *const *slots, cudaStream_t stream);

/* lib_calls.c: nd's library routines (common/lib_calls.h). Prepare, when a
 * plan is first run (before any capture): loads the plugin the routine
 * needs and stores the device workspace it needs in *workspace_bytes.
 * Issue: enqueues it on stream with that workspace. */
nd_status nd_cuda_lib_prepare(nd_cuda *cu, const nd_user_desc *u, size_t *workspace_bytes);
/* lib_cholesky.c: its side stream and events, at shutdown. */
void nd_cuda_chol_release(nd_cuda *cu);
/* A routine run as a step on its own (the executor's step-by-step path):
 * its workspace taken from the stream-ordered pool for the call. */
nd_status nd_cuda_run_lib_step(nd_cuda *cu, const nd_user_desc *u, void *const *slots);
/* Gives the kept step workspace back (stream-ordered; the lock held). */
void nd_cuda_release_step_workspace(nd_cuda *cu);
/* fail: where a routine that files a bad index (common/lib_calls.h's
 * nd_lib_files_fails: gather, scatter) files it, device-visible memory in
 * prims.h's ndp_fail layout (an nd_ir_fail); NULL for the others. */
nd_status nd_cuda_issue_lib(nd_cuda *cu, const nd_user_desc *u, void *const *slots, void *workspace,
                            size_t workspace_bytes, void *fail, cudaStream_t stream);

/* Enqueue work on `stream` (backend lock held). A reduction with several
 * splits per output needs nd_cuda_kernel_scratch_bytes of `partials`; a
 * kernel that gathers, its fail record (nd_ir_fail, device-writable,
 * zero). */
nd_status nd_cuda_issue_kernel(nd_cuda *cu, const nd_cuda_kentry *ke, const nd_kernel *k, void *const *slots,
                               const nd_scalar_bits *params, cudaStream_t stream, void *partials, void *fail);
size_t nd_cuda_kernel_scratch_bytes(const nd_cuda *cu, const nd_cuda_kentry *ke);
nd_status nd_cuda_issue_copy(nd_cuda *cu, void *dst, int dst_memory, const void *src, int src_memory, size_t bytes,
                             cudaStream_t stream);

/* app_stream.c: the program's stream. nd_cuda_app_join (lock held, at
 * every entry point that enqueues work on `stream`) makes `stream` wait
 * for what the program queued on its stream so far; ND_OK at once when
 * none is set. The hooks are the backend's set_app_stream,
 * app_stream_wait and device_usage. */
nd_status nd_cuda_app_join(nd_cuda *cu);
/* The backend lock (backend.c), for the hooks outside it. */
void nd_cuda_lock(nd_cuda *cu);
void nd_cuda_unlock(nd_cuda *cu);
void nd_cuda_app_install(nd_backend *be);
void nd_cuda_app_destroy(nd_cuda *cu);

/* plan_runner.c: the backend's run_plan (streams, events, graph capture and
 * replay), with the backend lock held; and the per-plan state's release. */
nd_status nd_cuda_run_plan_locked(nd_backend *be, nd_plan *plan, const nd_bound_plan *bound);
/* The backend's plan_fails (backend.h), with the lock held. */
nd_status nd_cuda_plan_fails_locked(nd_backend *be, nd_plan *plan, nd_ir_fail *out);
/* Releases every plan state still registered (at backend destruction). */
void nd_cuda_plan_states_release_all(nd_cuda *cu);

#endif
