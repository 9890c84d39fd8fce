/* An executable plan: what the scheduler hands a backend. Steps run in order
 * (a backend may overlap steps whose slots do not conflict; `stream` is the
 * scheduler's suggestion). Slots are the buffers a plan touches: external
 * ones are bound to the flush's buffers by position (the order in which the
 * graph walk first meets them), temporaries are allocated by the executor. */
#ifndef ND_BACKENDS_PLAN_H
#define ND_BACKENDS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "backends/kernel_ir.h"

typedef enum { ND_STEP_KERNEL, ND_STEP_MATMUL, ND_STEP_COPY } nd_step_kind;

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
} nd_matmul_desc;

typedef struct {
    int32_t src_slot, dst_slot;
    int32_t src_memory, dst_memory;
    size_t bytes;
} nd_copy_desc;

/* How a kernel step uses a slot; a region write keeps the other elements,
 * so it needs the buffer's current value like a read does. */
enum { ND_ACCESS_READ = 1, ND_ACCESS_WRITE = 2, ND_ACCESS_REGION = 4 };

typedef struct nd_step {
    nd_step_kind kind;
    int32_t stream;
    /* KERNEL: kernel slot i is plan slot slots[i]; kernel parameter j is the
     * flush parameter params[j]. */
    nd_kernel *kernel;
    int32_t *slots;
    int32_t *params;
    uint8_t *slot_access; /* per kernel slot: ND_ACCESS_* bits */
    nd_matmul_desc matmul; /* slots here are plan slots */
    nd_copy_desc copy;     /* slots here are plan slots */
    int32_t first_node, last_node; /* graph nodes it came from (names, dumps) */
} nd_step;

typedef enum {
    ND_SLOT_EXTERNAL, /* a flush buffer, bound by walk position */
    ND_SLOT_TEMP      /* plan-internal, allocated per run */
} nd_slot_role;

typedef struct {
    uint8_t role;
    int32_t walk_index;    /* EXTERNAL: position in the flush's buffer walk */
    size_t bytes;          /* TEMP: size */
    int32_t first_step, last_step; /* TEMP: lifetime, for reuse */
    int32_t memory;        /* memory the plan uses it in */
    uint8_t written;       /* EXTERNAL: a step writes it (valid only where written after) */
    uint32_t copied_to;    /* EXTERNAL: memories a COPY step makes it valid in */
} nd_plan_slot;

typedef struct nd_plan {
    uint64_t key;
    int32_t n_steps;
    nd_step *steps;
    int32_t n_slots;
    nd_plan_slot *slots;
    int32_t memory;        /* memory space kernels and library calls run in */
    /* For dumps and profiles: node -> step that computes it (-1 = dropped
     * as dead); a node inlined into several kernels names the first. */
    int32_t n_nodes;
    int32_t *node_step;
    uint8_t *node_materialised; /* 1 = its value goes to memory */
    void *backend_cache; /* a backend's per-plan state (CUDA graph), or NULL */
    void (*backend_cache_free)(void *);
} nd_plan;

#endif
