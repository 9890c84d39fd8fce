/* A traced loop body (include/nd/body.h): the template of elementwise ops
 * that one call node stands for. Plain data, immutable once traced, so the
 * frontend that traces and records calls, the scheduler that expands it
 * into kernel IR (kernel_builder.c's body_value) and the flush walk that
 * hashes it read the same facts. Reference counted: the program's handle
 * and every pending call node hold one (plans do not: their kernels are
 * the expanded IR, and the plan key hashes the template's content, not
 * its address, so a freed body's address reused by another names nothing
 * stale). */
#ifndef ND_COMMON_BODY_H
#define ND_COMMON_BODY_H

#include <stdint.h>

#include "nd.h"
#include "common/dtype.h"
#include "common/ops.h"

/* A MAP node whose op is this is a call of the body u.body.body
 * (graph/node.h), beside ND_GATHER_MAP_OP (254) and ND_UFUNC_MAP_OP (255). */
#define ND_BODY_MAP_OP 253
_Static_assert(ND_NUM_ELEMENTWISE_OPS < ND_BODY_MAP_OP, "a body's MAP op is no elementwise op");

/* What an operand of a template entry is. */
typedef enum {
    ND_BODY_REF_INPUT, /* the call's input `index`, broadcast to the call's shape */
    ND_BODY_REF_ENTRY, /* the value of entry `index` (an earlier one) */
    ND_BODY_REF_CONST, /* constant `index`: a weak scalar's constant ref */
    ND_BODY_REF_FULL   /* constant `index`: a FULL node's value */
} nd_body_ref_kind;

typedef struct {
    uint8_t kind;  /* nd_body_ref_kind */
    uint8_t dtype; /* the ref's dtype, as the traced node's ref had it */
    uint16_t pad;
    uint32_t index;
} nd_body_ref;

/* One traced MAP node: op over its operands, computed in cdtype, result
 * dtype (graph/node.h's MAP). */
typedef struct {
    uint8_t op, dtype, cdtype, n_in;
    nd_body_ref in[3];
} nd_body_entry;

#define ND_BODY_MAGIC 0x79646F42u /* "Body" */

struct nd_body {
    uint32_t magic; /* ND_BODY_MAGIC while alive */
    int refs;       /* atomic: handle + pending call nodes */
    char name[64];
    int n_in;
    uint8_t in_dtype[ND_BODY_MAX_INPUTS];
    uint8_t in_ndim[ND_BODY_MAX_INPUTS];
    int64_t (*in_shape)[ND_MAX_DIMS]; /* n_in shapes */
    uint8_t in_whole[ND_BODY_MAX_INPUTS]; /* input k has the result's shape (no broadcast) */
    int freed; /* the program's handle was freed (under the API lock) */
    uint8_t out_dtype, out_ndim;
    int64_t out_shape[ND_MAX_DIMS];
    size_t out_nbytes; /* the result's bytes (checked at the trace) */
    nd_body_ref out; /* the result: an entry (or an input, cast) */
    int32_t n_entries;
    nd_body_entry *entries; /* topological (record) order */
    int32_t n_consts;
    nd_scalar_bits *consts; /* values, in their dtype's kind (flush parameters) */
    /* Content hash: entries, refs, dtypes, shapes (not constant values:
     * those are kernel parameters, as for ops recorded one by one). */
    uint64_t hash;
    /* Ops it stands for in the fusion's size cap (plan_build.c): entries,
     * at least 1. */
    int32_t weight;
    /* Its weight in transcendental calls (shared_values.c): 8 an
     * approximate op, 1 any other. */
    int32_t calls;
};

struct nd_freelist;

void nd_body_ref_take(nd_body *b);
/* Drops a reference. The last one frees the body's arrays and clears its
 * magic, and the struct itself waits in the ring set by nd_body_set_ring
 * (freed at once without one), so that a program passing a freed body
 * again is told so (frontend/body.c's check) instead of reading freed
 * memory. Under the API lock. */
void nd_body_unref(nd_body *b);
/* The ring that freed bodies wait in: the runtime's (a delaying
 * nd_freelist that keeps nothing for reuse), set by nd_init; NULL frees at
 * once. Bodies outlive the runtime, so the ring is the runtime's to drain
 * at nd_shutdown, not this layer's. */
void nd_body_set_ring(struct nd_freelist *ring);
/* Fills b->hash and b->weight from the rest. */
void nd_body_seal(nd_body *b);

/* Whether b's result can be input i of the next call (its dtype and, not
 * broadcast, its whole shape): what a loop call carries (graph/node.h). */
static inline int nd_body_carries(const nd_body *b, int i) {
    return b->in_dtype[i] == b->out_dtype && b->in_whole[i];
}

#endif
