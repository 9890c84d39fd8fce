/* Builds one kernel-IR kernel: inlines producers through their views,
 * hash-conses the body (a value used twice is computed once), then coalesces
 * axes, names and hashes the result. Used by plan_build.c. */
#ifndef ND_SCHEDULER_KERNEL_BUILDER_H
#define ND_SCHEDULER_KERNEL_BUILDER_H

#include "backends/kernel_ir.h"
#include "graph/graph.h"
#include "scheduler/flush_walk.h"

/* What the builder needs to know about the flush being planned. */
typedef struct {
    const nd_graph *g;
    const nd_flush_walk *walk;
    const uint8_t *inline_ok; /* per node: computed inside its consumers */
    int32_t *node_step;       /* per node: first step computing it (-1 none) */
    int32_t current_step;
    /* Where a version lives when not in its own buffer (chains of
     * hazardous stores, store_chains.h): per node, the plan slot holding
     * the version it writes, -1 = its buffer's slot. NULL: every version
     * lives in its buffer. */
    const int32_t *version_slot;
    /* While one store's kernel is built: version prev_version of prev_buf
     * (the one the store overwrites) is read from prev_slot. NULL: none. */
    const nd_buffer *prev_buf;
    uint32_t prev_version;
    int32_t prev_slot;
} nd_build_ctx;

/* The plan slot a kernel reads ref r's version from. */
int32_t nd_build_read_slot(const nd_build_ctx *ctx, const nd_ref *r);

/* How a kernel's iteration index maps onto a node's own index: for each
 * kernel axis k, node axis axis[k] (or -1) advances by coef[k]. */
typedef struct {
    int32_t ndim;
    int64_t base[ND_MAX_DIMS];
    int8_t axis[ND_MAX_DIMS];
    int64_t coef[ND_MAX_DIMS];
} nd_xform;

typedef struct nd_kernel_builder nd_kernel_builder;

nd_kernel_builder *nd_kb_new(const nd_build_ctx *ctx, int ndim, const int64_t *shape);
void nd_kb_free(nd_kernel_builder *kb);

/* The gathers of the kernel (ND_IR_GATHER sources). */
int32_t nd_kb_gathers(const nd_kernel_builder *kb);
/* Node whose inlining failed (its view could not be composed), or -1. */
int32_t nd_kb_failed_node(const nd_kernel_builder *kb);
/* Nonzero when an allocation failed while building: the kernel lacks a
 * value or a store and must not be planned (the flush fails instead). */
int nd_kb_oom(const nd_kernel_builder *kb);

/* The identity transform over the kernel's space. */
void nd_xform_identity(nd_xform *t, int ndim);

/* Value of node n computed at the kernel index (through transform t). */
int32_t nd_kb_node_value(nd_kernel_builder *kb, const nd_node *n, const nd_xform *t);
/* Value of input k of node c, cast to `want`. -1 on failure. */
int32_t nd_kb_ref_value(nd_kernel_builder *kb, const nd_node *c, int k, const nd_xform *tc,
                        nd_dtype want);
int32_t nd_kb_load(nd_kernel_builder *kb, int32_t plan_slot, nd_dtype dtype, int64_t offset,
                   const int64_t *strides);
int32_t nd_kb_cast(nd_kernel_builder *kb, int32_t v, nd_dtype dtype);
int32_t nd_kb_zero_index(nd_kernel_builder *kb);
/* region = 1: the store writes part of a buffer whose other elements stay. */
void nd_kb_store(nd_kernel_builder *kb, int32_t plan_slot, nd_dtype dtype, int64_t offset,
                 const int64_t *strides, int32_t value, int region);
void nd_kb_reduce(nd_kernel_builder *kb, nd_reduce_kind kind, uint32_t axes, int32_t value,
                  int32_t plan_slot, nd_dtype out_dtype, const int64_t *out_strides);

/* Redirects the (single) store of kb to a contiguous temporary; returns the
 * store's former access. For stores whose right-hand side reads the stored
 * region through another index map. */
int nd_kb_store_hazard(const nd_kernel_builder *kb);
void nd_kb_retarget_store(nd_kernel_builder *kb, int32_t temp_slot, nd_ir_access *former);

/* Appends b's body and stores into a (forwarding loads of what a stores with
 * the same map). Returns 0 when they cannot share one kernel. */
int nd_kb_try_merge(nd_kernel_builder *a, const nd_kernel_builder *b, int max_insts);

/* Plan slots touched: loads (read), stores (write), region stores. */
void nd_kb_slot_uses(const nd_kernel_builder *kb, void (*fn)(void *, int32_t slot, int write,
                                                                   int region),
                     void *arg);

/* Finishes: coalesces axes, names, hashes. Returns the kernel (one malloc
 * block) and fills plan_slots (kernel slot -> plan slot) and params (kernel
 * parameter -> flush parameter), both malloc'd. */
nd_kernel *nd_kb_finish(nd_kernel_builder *kb, int32_t **plan_slots, int32_t **params);
/* A finished kernel's copy, laid out like nd_kb_finish's (one free()); NULL
 * when out of memory. */
nd_kernel *nd_kernel_clone(const nd_kernel *k);
/* The reduction that folds `parts` partial results of reduction kernel k0
 * (slot 0: the partials, part p's outputs at element p * out_n) into k0's
 * output (slot 1), in part order: chunking's chunks and partitioning's
 * devices. NULL when out of memory. */
nd_kernel *nd_kernel_combine_partials(const nd_kernel *k0, int64_t parts, int64_t out_n, const char *name);
/* The fold of `parts` argmin/argmax partials of reduction kernel k0 into
 * k0's output (slot 2): slot 0 holds each part's extreme value (k0's
 * reduced value dtype), slot 1 its index within the part (int64), part
 * p's outputs at element p * out_n; part p's indices start at
 * index_base[p] of the whole reduction. Parts are folded in order with
 * NumPy's rule: the first NaN wins, then the strictly better value, so
 * equal values keep the lowest index. An elementwise kernel (no
 * reduction) over a unit axis and k0's kept axes. NULL when out of
 * memory. */
nd_kernel *nd_kernel_combine_arg_partials(const nd_kernel *k0, int64_t parts, int64_t out_n,
                                         const int64_t *index_base, const char *name);
/* nd_kernel_hash (backends/kernel_ir.h) is recomputed after a pass edits a
 * finished kernel, e.g. chunking. */

#endif
