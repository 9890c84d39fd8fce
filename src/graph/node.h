/* Graph nodes: one per API-level operation. Views are not nodes: a node's
 * inputs are refs, i.e. views (offset, strides) of a buffer at a version,
 * already broadcast to the node's iteration space. */
#ifndef ND_GRAPH_NODE_H
#define ND_GRAPH_NODE_H

#include "common/dtype.h"
#include "common/ops.h"
#include "common/lib_calls.h"
#include "common/body.h"
#include "common/user_kernel.h"
#include "graph/buffer.h"

typedef enum {
    ND_NODE_FULL,    /* out[...] = params[0]                                 */
    ND_NODE_ARANGE,  /* out[i] = params[0] + i * params[1] (flat index i)    */
    ND_NODE_RANDOM,  /* op = an nd_random_kind; params: seed (u),
                        stream (u), a, b (f: lo/hi or mean/sd). Element at
                        flat index i is Philox4x32-10(key=seed,
                        counter=(i_lo, i_hi, stream_lo, stream_hi)).        */
    ND_NODE_MAP,     /* out = op(inputs...) elementwise; cdtype = compute   */
    ND_NODE_REDUCE,  /* op = nd_reduce_kind over u.reduce.axes of input 0;
                        iteration space = input 0's shape                    */
    ND_NODE_MATMUL,  /* out = inputs[0] @ inputs[1] (NumPy matmul), compute
                        in `dtype`; inputs carry their own shapes            */
    ND_NODE_STORE,   /* out buffer region u.store (shape = node shape) =
                        cast(inputs[0]) broadcast to the region: a new
                        version of an existing buffer                        */
    ND_NODE_USER,    /* output u.user.index of a user kernel call, which
                        writes the view u.user (offset, strides; shape =
                        node shape) of out. A call with n outputs is n
                        consecutive nodes, index 0..n-1, live together;
                        node 0 holds the inputs: the call's n_in, then the
                        current version of each in-place output. A call
                        of one of nd's library routines (common/
                        lib_calls.h) has kernel NULL, op = its
                        nd_lib_call and its arguments in params[0..4)
                        (n_params 0: they are part of the plan key, not
                        flush parameters)                                  */
    ND_NUM_NODE_KINDS
} nd_node_kind;

/* ND_RANDOM_UNIFORM01 is nd_random_uniform(.., 0, 1): the draw itself, where
 * the general uniform scales and shifts it (lo + (hi - lo) * u, which is u
 * bit for bit then). A kind of its own because kernels are keyed by their
 * structure, never by parameter values. ND_RANDOM_INTEGERS is
 * nd_random_integers: params[2].u = hi - lo (the range, >= 1), params[3].u =
 * lo's bits; the value is lo + an unbiased draw in [0, range) (philox.h).
 * ND_RANDOM_INTEGERS_PAIRS is the same for a range r that draws two
 * elements a word (nd_philox_pairs(r)), a kind of its own for the same
 * reason; its params[2].u = r | t << 32 with the pair's rejection threshold
 * t = nd_philox_pair_threshold(r). */
typedef enum {
    ND_RANDOM_UNIFORM,
    ND_RANDOM_NORMAL,
    ND_RANDOM_UNIFORM01,
    ND_RANDOM_INTEGERS,
    ND_RANDOM_INTEGERS_PAIRS
} nd_random_kind;

/* A view of a buffer at a version, or a constant (buf == NULL). For MAP and
 * STORE nodes its ndim/shape equal the node's (broadcast strides are 0); for
 * REDUCE it is the input's own shape; for MATMUL each operand's shape. */
typedef struct nd_ref {
    nd_buffer *buf;   /* NULL: constant `value` */
    uint32_t version; /* version read */
    uint8_t dtype;
    uint8_t ndim;
    uint8_t weak;     /* constant from a weak scalar (for dumps) */
    uint8_t pad;
    int64_t offset;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS];
    nd_scalar_bits value; /* constant value, in dtype's kind */
} nd_ref;

typedef struct nd_node {
    uint32_t index; /* position in record order */
    uint8_t kind;   /* nd_node_kind */
    uint8_t op;     /* nd_op / nd_reduce_kind / nd_random_kind / nd_lib_call */
    uint8_t dtype;  /* output dtype (STORE: the buffer's dtype) */
    uint8_t cdtype; /* compute dtype: inputs are cast to it first */
    uint8_t ndim;
    uint8_t n_inputs;
    uint8_t n_params;
    uint8_t flags;  /* ND_NODE_RECIPE_KEPT, ND_NODE_VALUE_NEEDED (0 while recording) */
    uint32_t scope; /* named scope it was recorded in (common/names.h), 0 = none */
    int64_t shape[ND_MAX_DIMS]; /* output shape (STORE: region shape) */
    nd_buffer *out;             /* buffer written */
    uint32_t out_version;       /* version this node makes */
    uint32_t tail_bytes;        /* after the refs in its arena block (nd_node_tail_bytes); in padding */
    nd_ref *inputs;
    nd_scalar_bits params[4];
    union {
        struct { uint32_t axes; } reduce; /* bit k: input axis k reduced */
        struct { int64_t offset; int64_t strides[ND_MAX_DIMS]; } store;
        struct {
            int64_t offset;
            int64_t strides[ND_MAX_DIMS];
            struct nd_user_kernel *kernel; /* node 0 holds a reference */
            uint8_t index, count, n_in, in_place;
        } user;
        /* MAP with op ND_UFUNC_MAP_OP: the user loop called (common/ufunc_loop.h);
         * inputs are cast to its parameter types, cdtype = dtype = its return */
        struct { uint32_t loop; } ufunc;
        /* MAP with op ND_BODY_MAP_OP (common/body.h): a call of a traced
         * body, which the node holds a reference to; inputs are the call's
         * (broadcast refs), cdtype = dtype = the body's result dtype. Its
         * constants are flush parameters after the refs' (flush_walk.c).
         * A loop call (n_params 1, params[0].i = count >= 2: calls whose
         * results fed the next call, merged by nd_graph_merge_loop) applies
         * the body count times, each result being input `carry` of the
         * next; the other inputs are the same in every round. */
        struct { struct nd_body *body; uint32_t carry; } body;
        /* MAP with op ND_GATHER_MAP_OP: out = source[i_0, .., i_{K-1}] along
         * K = n_axes indexed axes (1..ND_MAX_DIMS: as many index arrays as
         * an array has axes). inputs[0..K) are the int64 indices (node
         * shape, broadcast: stride 0 where one does not vary), inputs[K]
         * the source's base (node shape: its strides over the node's axes,
         * 0 where the indices vary, the indexed axes at element 0);
         * indexed axis k has stride and size nd_node_gather_axes(n)[k] and
         * [K + k] (after the refs: every node stays its size whatever K);
         * fn and axes name them in the bounds error (common/lib_calls.h's
         * ND_LIB_GATHER v[1], v[2]). The source is read anywhere along
         * those axes. dtype = cdtype = the source's. */
        struct { int64_t axes; int32_t fn, n_axes; } gather;
    } u;
    const char *label; /* API function that recorded it ("nd_add"), static */
} nd_node;

/* A library call's arguments live in params (see ND_NODE_USER). */
_Static_assert(sizeof(((nd_node *)0)->params) == sizeof(nd_lib_args), "nd_lib_args must fit nd_node.params");

/* The MAP op of a gather (beside common/ufunc_loop.h's ND_UFUNC_MAP_OP). */
#define ND_GATHER_MAP_OP 254
_Static_assert(ND_NUM_ELEMENTWISE_OPS < ND_GATHER_MAP_OP, "the gather's MAP op is no elementwise op");

/* A node's arena block (graph.c) is the node, its n_inputs refs, then
 * tail_bytes more: a gather keeps its indexed axes there (a stride and a
 * size for each of its n_inputs - 1 index arrays), so that any number of
 * them fits and no other node pays for them. */
static inline uint32_t nd_node_tail_bytes(nd_node_kind kind, int op, int n_inputs) {
    return kind == ND_NODE_MAP && op == ND_GATHER_MAP_OP && n_inputs > 1
               ? (uint32_t)(2 * (size_t)(n_inputs - 1) * sizeof(int64_t))
               : 0;
}
static inline size_t nd_node_block_bytes(const nd_node *n) {
    return sizeof(nd_node) + (size_t)n->n_inputs * sizeof(nd_ref) + n->tail_bytes;
}
/* A gather node's indexed axes: [k] the stride of axis k, [n_axes + k]
 * its size. */
static inline int64_t *nd_node_gather_axes(const nd_node *n) { return (int64_t *)(void *)(n->inputs + n->n_inputs); }

/* Flags of the nodes of a flush that a read split off the pending graph
 * (graph/read_split.h); a flush of the whole graph sets none.
 * ND_NODE_RECIPE_KEPT: a copy of the node stays pending, so its value need
 * not be written now even though a handle sees it (it is computed inside
 * its consumers, and again when it is read). ND_NODE_VALUE_NEEDED: a node
 * that stays pending reads the value from memory, so it is written even
 * though no handle sees it. ND_NODE_READ_LATER (with RECIPE_KEPT): a node
 * that stays pending reads the value, so the recipe runs again there
 * unless this flush writes the value after all (the planner counts that
 * use: scheduler/shared_values.c). */
enum { ND_NODE_RECIPE_KEPT = 1, ND_NODE_VALUE_NEEDED = 2, ND_NODE_READ_LATER = 4 };

/* Whether the flush must leave n's value in its buffer because something
 * after the flush reads it: a handle sees that version (it is the latest),
 * or a node that stays pending reads it. */
static inline int nd_node_value_wanted(const nd_node *n) {
    if (n->flags & ND_NODE_RECIPE_KEPT) return 0;
    return (n->flags & ND_NODE_VALUE_NEEDED) ||
           (nd_buffer_visible(n->out) && n->out_version == n->out->version);
}

const char *nd_node_kind_label(nd_node_kind k);

/* Whether n is a call of a traced body. */
static inline int nd_node_is_body(const nd_node *n) { return n->kind == ND_NODE_MAP && n->op == ND_BODY_MAP_OP; }

/* How many times body call n applies its body (1, or a loop's count). */
static inline int64_t nd_node_body_count(const nd_node *n) { return n->n_params ? n->params[0].i : 1; }

/* The references a node holds besides its buffers' (a user kernel's, a
 * body's), released where the node goes. */
static inline void nd_node_release_extras(nd_node *n) {
    if (n->kind == ND_NODE_USER && n->u.user.index == 0) nd_user_kernel_unref(n->u.user.kernel);
    else if (nd_node_is_body(n)) nd_body_unref(n->u.body.body);
}
static inline void nd_node_take_extras(nd_node *n) {
    if (nd_node_is_body(n)) nd_body_ref_take(n->u.body.body);
}

#endif
