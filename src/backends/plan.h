/* An executable plan: what the scheduler hands a backend. Steps are listed
 * in an order that is always safe to run one after another; a backend with
 * several queues (CUDA streams) may instead run each step on its `stream`
 * after the steps named in its `waits`, which is the same result (the
 * scheduler derived both from the steps' reads and writes). Slots are the
 * buffers a plan touches: external ones are bound to the flush's buffers by
 * position (the order in which the graph walk first meets them),
 * temporaries live in storages the executor allocates per run. */
#ifndef ND_BACKENDS_PLAN_H
#define ND_BACKENDS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "backends/kernel_ir.h"
#include "common/lib_calls.h"
#include "common/memory.h"

/* What a step is. Every fact about a kind (name, what it counts as, which
 * slots it reads and writes) is in backends/step_kinds.c; docs/internals.md
 * ("Adding a step kind") lists the places a new kind touches. */
typedef enum { ND_STEP_KERNEL, ND_STEP_MATMUL, ND_STEP_COPY, ND_STEP_USER } nd_step_kind;
enum { ND_STEP_KIND_COUNT = ND_STEP_USER + 1 }; /* the last kind + 1 */

/* C[b] = A[b] @ B[b] for every batch index b, all operands of `dtype`. Each
 * operand: element (r, c) of batch b is at offset + sum batch_strides*b +
 * r*rs + c*cs of its slot. */
typedef struct {
    nd_dtype dtype;
    int64_t m, n, k;
    int32_t batch_ndim;
    int64_t batch_shape[ND_MAX_DIMS];
    int32_t a_slot, b_slot, c_slot;
    int64_t a_offset, b_offset, c_offset;
    int64_t a_batch[ND_MAX_DIMS], b_batch[ND_MAX_DIMS], c_batch[ND_MAX_DIMS];
    int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
    /* C += A @ B instead of C = A @ B: the steps of one device's matmul
     * over blocks of the inner dimension (scheduler/partition_matmul.c),
     * emitted only for float32, float64, complex64 and complex128 operands
     * that BLAS addresses in place (column stride 1). */
    uint8_t accumulate;
} nd_matmul_desc;

/* Copies `bytes` from src_offset of src_slot's memory in src_memory to
 * dst_offset of dst_slot's in dst_memory. src_slot == dst_slot: the buffer
 * becomes valid in dst_memory too; dst a temporary: a staged chunk. */
typedef struct {
    int32_t src_slot, dst_slot;
    int32_t src_memory, dst_memory;
    size_t bytes;
    size_t src_offset, dst_offset;
} nd_copy_desc;

/* One argument of a user kernel step: the view (offset, shape, strides in
 * elements of dtype) of plan slot `slot`, and how the step uses it. */
typedef struct {
    int32_t slot;
    uint8_t access; /* ND_ACCESS_*: inputs READ, new outputs WRITE,
                       in-place outputs WRITE | REGION (their old value stays
                       where the kernel does not write, and it may read it) */
    uint8_t dtype;
    uint8_t ndim;
    int64_t offset;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
} nd_user_arg_desc;

/* A call: a user kernel run (include/nd/kernels.h) or one of nd's library
 * routines (common/lib_calls.h: lib != ND_LIB_NONE, kernel NULL, with its
 * scalar arguments). args[0..n_in) are its inputs, args[n_in..n_in+n_out)
 * its outputs. The step holds a reference to a user kernel. */
typedef struct {
    struct nd_user_kernel *kernel;
    int32_t n_in, n_out;
    nd_user_arg_desc *args;
    int32_t lib; /* nd_lib_call */
    nd_lib_args lib_args;
} nd_user_desc;

/* How a kernel step uses a slot; a region write keeps the other elements,
 * so it needs the buffer's current value like a read does. */
enum { ND_ACCESS_READ = 1, ND_ACCESS_WRITE = 2, ND_ACCESS_REGION = 4 };

/* Queues a multi-stream backend runs steps on: compute streams first, then
 * one per copy direction. */
enum { ND_PLAN_COMPUTE_STREAMS = 4 };
enum { ND_STREAM_H2D = ND_PLAN_COMPUTE_STREAMS, ND_STREAM_D2H, ND_PLAN_STREAMS };

typedef struct nd_step {
    nd_step_kind kind;
    int32_t stream;   /* 0..ND_PLAN_STREAMS-1 */
    /* Earlier steps on other streams that must finish before this one
     * starts (same-stream order is implied); `signals` = some later step
     * waits for this one. */
    int32_t n_waits;
    int32_t *waits;
    uint8_t signals;
    /* KERNEL: kernel slot i is plan slot slots[i]; kernel parameter j is the
     * flush parameter params[j]. */
    nd_kernel *kernel;
    int32_t *slots;
    int32_t *params;
    uint8_t *slot_access; /* per kernel slot: ND_ACCESS_* bits */
    /* Per kernel slot, bytes added to the slot's address (NULL: none): a
     * chunk's kernels share one IR (one compile) and differ only here. */
    int64_t *slot_byte_offset;
    nd_matmul_desc matmul; /* slots here are plan slots */
    nd_copy_desc copy;     /* slots here are plan slots */
    nd_user_desc user;     /* slots here are plan slots */
    int32_t first_node, last_node; /* graph nodes it came from (names, dumps) */
    /* Several devices (scheduler/partition.c): what the step is to the
     * split of arrays in row blocks (ND_PART_*), and 1 + the device it
     * runs on (a halo or piece copy: the device it writes); 0 = the
     * whole array, as on one device. */
    uint8_t part;
    uint8_t device;
    /* A device kernel split at its halo (partition_edges.c): ND_STRIP_*. */
    uint8_t strip;
} nd_step;

/* nd_step.strip: which rows of its device's iteration rows a KERNEL step
 * covers. A device kernel that reads ghost rows runs as its edge strips
 * (the rows whose loads reach a ghost row) and its interior (the rest),
 * so that the halo copies of the next kernel overlap the interior. */
enum {
    ND_STRIP_WHOLE,    /* every iteration row of its device (or not split) */
    ND_STRIP_EDGE,     /* the first or last rows, which read ghost rows */
    ND_STRIP_INTERIOR  /* the rows between, which read only owned rows */
};

/* nd_step.part: NONE for every step of a one-device plan. */
enum {
    ND_PART_NONE,    /* an ordinary step over whole arrays */
    ND_PART_KERNEL,  /* a kernel over the rows one device owns */
    ND_PART_COMBINE, /* folds the devices' partial reductions, in device order */
    ND_PART_SCATTER, /* whole array -> one device's piece (its rows and ghost rows) */
    ND_PART_HALO,    /* a neighbour's owned rows -> a piece's ghost rows */
    ND_PART_GATHER,  /* one device's owned rows -> the whole array */
    ND_PART_RING,    /* a row block of a matmul's B -> a device's ring buffer */
    ND_PART_REPLICA  /* a small matmul B, whole -> one device's replica */
};

typedef enum {
    ND_SLOT_EXTERNAL, /* a flush buffer, bound by walk position */
    ND_SLOT_TEMP,     /* plan-internal, allocated per run */
    ND_SLOT_TWIN,     /* the twin of the flush buffer at walk_index (graph/buffer.h):
                         a store chain's temporary that outlives the flush */
    ND_SLOT_PIECE     /* device (device - 1)'s piece of the flush buffer at
                         walk_index split in row blocks (of its twin when
                         piece_of_twin), which outlives the flush
                         (graph/buffer.h nd_buffer_pieces): bytes long */
} nd_slot_role;

typedef struct {
    uint8_t role;
    int32_t walk_index;    /* EXTERNAL, TWIN: position in the flush's buffer walk */
    size_t bytes;          /* TEMP: size */
    int32_t first_step, last_step; /* TEMP: lifetime, for reuse */
    int32_t storage;       /* TEMP: which of the plan's storages holds it */
    int32_t memory;        /* memory the plan uses it in */
    uint8_t written;       /* EXTERNAL: a step writes it (valid only where written after) */
    uint32_t copied_to;    /* EXTERNAL: memories a COPY step makes it valid in */
    uint8_t used;          /* some step reads or writes it (the walk also meets
                              buffers of values that were inlined or dropped) */
    int32_t last_writer;   /* EXTERNAL: the flush's last node writing it, or -1
                              (its recording function names a failure); a
                              piece of a split array: the array's */
    uint8_t device;        /* TEMP: 1 + the device whose piece of a split
                              array it is (scheduler/partition.c); 0: none */
    uint8_t split_temp;    /* TEMP, PIECE: added by the partition pass (a piece, partials) */
    uint8_t piece_of_twin; /* PIECE: of the buffer's twin */
    int64_t natural_row;   /* EXTERNAL: elements per row (after the first axis) of
                              the array its last writer writes whole, when that
                              has two axes or more; else 0. A flat kernel
                              writing it is split along those rows
                              (scheduler/partition.c) */
} nd_plan_slot;

/* What a plan leaves in the pieces of a buffer (or twin) it splits or
 * gathers (scheduler/partition.c), applied when the plan is submitted:
 * keep, the pieces hold the value after the plan, laid out as below
 * (whole_stale: and the whole memory does not: the plan wrote the pieces
 * only); else they no longer hold it (the plan wrote the whole array). */
typedef struct {
    int32_t walk_index;
    uint8_t twin, keep, whole_stale, ghosts_fresh;
    int32_t n_dev;
    size_t row_bytes;
    int64_t rows;
    int64_t p0[ND_MAX_PIECES], pn[ND_MAX_PIECES];
} nd_plan_pieces;

typedef struct nd_plan {
    uint64_t key;
    /* The flush it was built for, as the bases pass saw it
     * (scheduler/flush_walk.h): its relative key and, for an
     * offset_generic plan (else NULL), where the views of each flush
     * buffer started (view_base per walk index). offset_generic:
     * only kernels over the flush's buffers and temporaries, so it runs as
     * well on views that start elsewhere by the same bytes per buffer (a
     * loop over a matrix's rows): the cache finds it by relative_key too,
     * and the executor moves each buffer's address by the difference. */
    uint64_t relative_key;
    int64_t *view_base;
    uint8_t offset_generic;
    int32_t n_steps;
    nd_step *steps;
    int32_t n_slots;
    nd_plan_slot *slots;
    int32_t memory;        /* memory space kernels and library calls run in */
    /* Temporaries whose lifetimes do not overlap share a storage. */
    int32_t n_storages;
    size_t *storage_bytes;
    /* Per storage: 1 + the device whose pieces it holds (a storage holds
     * temporaries of one device only), 0 for whole temporaries. A backend
     * with device_memories > 1 allocates it in memory `memory + device - 1`. */
    uint8_t *storage_device;
    int32_t n_streams_used; /* highest stream index used + 1 */
    /* For dumps and profiles: node -> step that computes it (-1 = dropped
     * as dead); a node inlined into several kernels names the first. */
    int32_t n_nodes;
    int32_t *node_step;
    uint8_t *node_materialised; /* 1 = its value goes to memory */
    /* Store chains that end in their buffer's twin (store_chains.h): after
     * the plan, the twin of buffer walk_index[i] holds what lies outside
     * the region that node twin_last_store[i] writes. */
    int32_t n_twins;
    int32_t *twin_walk_index, *twin_last_store;
    /* Arrays of at least the split size that this plan keeps whole
     * although it runs on several devices (they move axis 0, or a step
     * reading them does not partition yet): nd_stats.arrays_whole. */
    int32_t n_whole;
    /* Kernels of the one-device plan that run per device (nd_stats.kernels_split). */
    int32_t n_split_kernels;
    /* A planning pass skipped its work for lack of host memory (fusion,
     * the shared-operand saving, the rows of collapsed kernels): the plan
     * is right but slower than it should be, so it runs once and is not
     * cached (scheduler.c plan_for), where a transient failure would leave
     * it in place for every later flush of the same shape. */
    uint8_t degraded;
    /* The pieces it leaves (nd_plan_pieces), and how many arrays it
     * scatters into pieces and gathers from them (nd_stats). */
    int32_t n_pieces;
    nd_plan_pieces *pieces;
    int32_t n_scattered, n_gathered;
    /* Under mpirun with the link: which lane each step runs on
     * (scheduler/rank_lanes.h), made on the plan's first run; tried: made
     * once, even when there were none. */
    struct nd_rank_lanes *rank_lanes;
    uint8_t rank_lanes_tried;
    void *backend_cache; /* a backend's per-plan state (CUDA graph), or NULL */
    void (*backend_cache_free)(void *);
} nd_plan;

/* Kernel steps that gather, and the gather and scatter routines
 * (common/lib_calls.h's nd_lib_files_fails), have a fail record each
 * (kernel_ir.h's nd_ir_fail; a routine's names the indexed axis in `axis`,
 * its message is nd_lib_fail_error's), numbered in step order: the number
 * of such steps, and with index, step i's number (-1: it has none). */
static inline int32_t nd_plan_fail_records(const nd_plan *plan, int32_t *index) {
    int32_t n = 0;
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        int gathers = (st->kind == ND_STEP_KERNEL && st->kernel->n_gathers > 0) ||
                      (st->kind == ND_STEP_USER && nd_lib_files_fails(st->user.lib));
        if (index) index[i] = gathers ? n : -1;
        n += gathers;
    }
    return n;
}

/* The error a set fail record of a gather or scatter routine's step means
 * (set as this thread's error, returned): the routine's message, the same
 * as the CPU backend's (backends/kernel_fail.c). */
int nd_lib_fail_error(const nd_user_desc *u, const nd_ir_fail *f);

/* A plan bound to memory for one run: what run_plan receives. */
typedef struct {
    void *const *slots;         /* per plan slot, in the plan's memory */
    void *const *copy_dst;      /* per step: COPY destination (else NULL) */
    const void *const *copy_src;/* per step: COPY source (else NULL) */
    const nd_scalar_bits *params; /* the flush's parameters */
    /* Per step: the name of the value it computes (nd_set_name, a named
     * scope) for NVTX ranges, profiles and traces, or NULL; NULL when the
     * program names nothing. */
    const char *const *step_names;
} nd_bound_plan;

#endif
