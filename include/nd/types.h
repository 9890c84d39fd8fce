/*
 * nd/types.h — Types: dtypes, status codes, configuration and statistics.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_TYPES_H
#define ND_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if defined(ND_BUILDING_LIBRARY) && defined(__GNUC__)
#define ND_API __attribute__((visibility("default")))
#else
#define ND_API
#endif

/* The version of this header; nd_version() and nd_version_number() give
 * the library's at run time (they differ when a program runs with another
 * build of the shared library than it was compiled against). */
#define ND_VERSION_MAJOR 0
#define ND_VERSION_MINOR 1
#define ND_VERSION_PATCH 0
#define ND_VERSION_STRING "0.1.0"
/* major * 10000 + minor * 100 + patch: 0.1.0 is 100. */
#define ND_VERSION_NUMBER (ND_VERSION_MAJOR * 10000 + ND_VERSION_MINOR * 100 + ND_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

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
    ND_COMPLEX64,  /* two float32, real then imaginary (NumPy's complex64, '<c8') */
    ND_COMPLEX128, /* two float64 (NumPy's complex128, '<c16') */
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
    ND_ERR_UNSUPPORTED, /* valid, but not supported by this build/backend */
    ND_ERR_LINALG       /* a singular or not positive definite matrix, a factorisation that did not converge */
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
 * means "default, or the ND_* environment variable if set".
 *
 * struct_size lets fields be added at the end without breaking programs
 * built against an older nd.h: nd_init reads only the first struct_size
 * bytes and takes every later field as zero (its default). 0 means this
 * version's layout (every field up to `trace`), so `nd_config c = {0};` and
 * designated initialisers keep working; ND_CONFIG_INIT sets it to
 * sizeof(nd_config), which a program using a field added after `trace`
 * must do. A struct_size larger than the library's nd_config (a program
 * built against a newer nd.h) is accepted when the unknown fields are all
 * zero; else nd_init fails with ND_ERR_ARG. */
typedef struct {
    size_t struct_size;      /* sizeof(nd_config) (ND_CONFIG_INIT), or 0 */
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
    const char *trace;       /* ND_TRACE: file; every step's start and end as a
                                Chrome/Perfetto trace (one row per stream; device times on
                                CUDA, host times on the CPU) */
    /* Added after `trace`: read only when struct_size covers it (use
     * ND_CONFIG_INIT; with struct_size 0 it is ignored). */
    void *cuda_stream;       /* the program's cudaStream_t: nd orders its work after what
                                the program queued there before (include/nd/devices.h,
                                nd_set_cuda_stream). NULL: nd's own stream only. With
                                devices unset, nd runs on the stream's device. The CUDA
                                backend only: set on the CPU backend, nd_init fails with
                                ND_ERR_UNSUPPORTED */
    int dump_dot_plan;       /* ND_DUMP_DOT_PLAN=1: with dump_dot, also draw each flush's
                                plan (flush-N-plan.dot: kernels, library calls, copies,
                                streams; nd_plan_dump_dot) */
    int scope_replay;        /* ND_SCOPE_REPLAY: 1 on (default), -1 off: a scope whose calls
                                repeat those of the last time its nd_scope_begin call site
                                ran (a loop body) is recorded as one call of a body traced
                                from them (include/nd/body.h): same values, a fraction of
                                the recording (README, "Loops: scope replay") */
    int body_loops;          /* ND_BODY_LOOPS: 1 on (default), -1 off: a call of a traced body
                                (or a replayed scope) whose input is the result of the call
                                of the same body just before it, freed at once (x = f(x) in a
                                loop), joins that call: n iterations become one node and
                                one kernel loop (README, "Loops: loop calls") */
    /* New fields go here, at the end (see struct_size). */
} nd_config;

/* A config with struct_size set and every other field at its default:
 * `nd_config c = ND_CONFIG_INIT; c.log = 2; nd_init(&c);` */
#define ND_CONFIG_INIT {.struct_size = sizeof(nd_config)}

/* Memories nd_stats reports on: host memory and up to three devices. */
#define ND_STATS_MEMORIES 4

/* Counters of what the engine did, for tests, tuning and curiosity.
 * nd_get_stats(&s) passes sizeof s along (it is a macro), so a program
 * built against an older, smaller nd_stats gets its fields filled and
 * nothing after them written; struct_size says how many bytes the library
 * filled (fewer than sizeof s when the library is older than the header:
 * the rest is zeroed). New fields go at the end. */
typedef struct {
    size_t struct_size;        /* set by nd_get_stats: bytes it filled */
    uint64_t flushes;          /* flushes that ran something */
    uint64_t plan_cache_hits;  /* flushes whose plan came from the cache */
    uint64_t plan_cache_misses;/* flushes that ran every scheduler pass */
    uint64_t nodes_recorded;   /* operations recorded */
    uint64_t nodes_dropped;    /* dead nodes removed before running */
    uint64_t values_materialised; /* node values written to memory rather than
                                     computed inside the kernels that use them */
    uint64_t kernels_run;      /* fused kernels executed */
    uint64_t kernels_compiled; /* kernels compiled: by NVRTC (CUDA) or the C compiler
                                  (the CPU JIT), not those found in the kernel cache */
    uint64_t library_calls;    /* matmul and other library steps executed */
    uint64_t copies;           /* data-movement steps executed */
    uint64_t bytes_allocated;  /* bytes in use now, every memory: the sum of bytes_in_use */
    uint64_t temp_allocations; /* plan-internal temporaries allocated */
    uint64_t bytes_copied;     /* bytes moved between memories (host <-> device
                                  copies, staging of wrapped host memory) */
    /* Memory, in bytes, when nd_get_stats is called. In the arrays, index 0
     * is host memory and 1.. the devices (the CUDA backend's GPU is 1; the
     * CPU backend uses only 0). */
    uint64_t bytes_in_use[ND_STATS_MEMORIES]; /* allocated by nd and not given back: arrays,
                                                 temporaries (also those pooled for the next
                                                 flush), twins, a backend's staging and
                                                 workspace memory */
    uint64_t bytes_peak[ND_STATS_MEMORIES];   /* the highest bytes_in_use since nd_init or
                                                 nd_reset_peak */
    uint64_t bytes_cached[ND_STATS_MEMORIES]; /* freed by nd but kept by the backend for
                                                 reuse (not in bytes_in_use); nd_trim gives
                                                 it back to the system */
    uint64_t bytes_block_cache;  /* part of bytes_cached: the CPU backend's cache of large host
                                    blocks, the CUDA backend's device memory pool */
    uint64_t bytes_pinned_cache; /* part of bytes_cached: the CUDA backend's pinned host blocks */
    uint64_t bytes_temporaries;  /* part of bytes_in_use: free temporaries pooled for the next
                                    flush (nd_trim releases them) */
    uint64_t bytes_twins;        /* part of bytes_in_use: the second copies that in-place
                                    sweeps over one array (a stencil loop) alternate with,
                                    their pieces included where the array is split */
    /* Several devices (ND_DEVICES=cpu:N); all 0 on one device. */
    uint64_t device_kernels;     /* part of kernels_run: kernels over the rows of one device,
                                    and the kernels folding their partial reductions */
    uint64_t kernels_split;      /* the one-device kernels those stand for: kernels_run -
                                    device_kernels + kernels_split is what one device runs */
    uint64_t halo_copies;        /* part of copies: ghost rows filled from a neighbour */
    uint64_t piece_copies;       /* part of copies: whole arrays scattered into pieces and
                                    gathered back */
    uint64_t arrays_scattered;   /* whole arrays split into per-device pieces (one per array,
                                    whatever the device count); pieces outlive the flush, so a
                                    loop that keeps splitting an array the same way scatters it
                                    once */
    uint64_t arrays_gathered;    /* arrays whose pieces were gathered back whole: read from the
                                    host (nd_to_host, nd_item, nd_data), read whole by a step
                                    that does not split (a matmul, a transpose), or split
                                    another way */
    uint64_t piece_allocations;  /* part of temp_allocations: the pieces and partial
                                    reductions of split arrays */
    uint64_t arrays_whole;       /* arrays of at least ND_SPLIT_MIN_BYTES that a flush kept
                                    whole (a step moves axis 0 or does not partition yet);
                                    ND_LOG=2 says which */
    uint64_t plans_read_back;    /* flushes whose plan holds a library routine that reads its
                                    status back at its step (a linear algebra routine that may
                                    find a singular matrix): such a plan runs step by step, never
                                    as one CUDA graph. Gathers and scatters do not: their bad
                                    indices are read once after the whole plan */
    uint64_t device_matmuls;     /* part of library_calls: matmuls over the rows of one device
                                    (a ring of B blocks runs one per block) */
    uint64_t ring_copies;        /* part of copies: row blocks of a large matmul B copied to the
                                    device that multiplies by them next (the ring) */
    uint64_t matmul_replicas;    /* part of copies: a small matmul B copied whole to one device;
                                    a replica is kept while B's version is unchanged, so a loop
                                    multiplying by one B replicates it once per device */
    uint64_t rank_bytes_staged;  /* under mpirun: bytes this rank sent or received between ranks
                                    through host buffers (GPU ranks: copied out of device memory
                                    before a send, into it after a receive; ND_RANK_STAGING=1 on
                                    the CPU); 0 where MPI reads and writes host memory in place */
    uint64_t rank_bytes_nccl;    /* under mpirun: bytes this rank sent or received between GPU ranks
                                    over the NCCL link, device to device (ND_RANK_TRANSPORT; on one
                                    machine its copy engines), or between CPU
                                    ranks over the CPU backend's test link (ND_RANK_LINK=1); such
                                    bytes are not in rank_bytes_staged */
    uint64_t handles_alive;      /* array handles made and not yet freed (nd_free, or the scope
                                    that owns them); nd_shutdown names their origins at
                                    ND_LOG >= 1 */
    uint64_t scopes_replayed;    /* scopes recorded as one call of the body learnt at their
                                    nd_scope_begin call site (ND_SCOPE_REPLAY=1) */
    uint64_t scope_replays_undone; /* replays whose calls turned out to differ from the
                                      learnt ones (or that another call interrupted): their
                                      ops were then recorded one by one */
    uint64_t body_calls_merged;  /* body calls that joined the loop call before them
                                    (ND_BODY_LOOPS=1): nodes that were not recorded */
} nd_stats;

/* A memory space a program's pointer lives in (nd_wrap, nd_data, DLPack):
 * host memory, or the memory of CUDA device `device` (a cudaMalloc'd or
 * cudaMallocAsync'd pointer of that ordinal). ND_HOST_MEMORY and
 * ND_CUDA_MEMORY(k) make one. */
typedef enum { ND_MEM_HOST = 0, ND_MEM_CUDA = 1 } nd_memory_kind;
typedef struct {
    nd_memory_kind kind;
    int device; /* CUDA ordinal; 0 for host memory */
} nd_memory;
#define ND_HOST_MEMORY ((nd_memory){ND_MEM_HOST, 0})
#define ND_CUDA_MEMORY(k) ((nd_memory){ND_MEM_CUDA, (k)})

#ifdef __cplusplus
}
#endif
#endif /* ND_TYPES_H */
