#include "scheduler/kernel_builder.h"
#include "scheduler/access_overlap.h"
#include "common/alloc.h"

#include <stdlib.h>

#include "common/grow.h"
#include <string.h>

#include "common/hash.h"
#include "common/body.h"
#include "common/ufunc_loop.h"

/* A node value already computed in this kernel under one transform; next:
 * the entry before it in its node's hash chain (memo_head), -1 at the end. */
typedef struct {
    int32_t node;
    nd_xform xform;
    int32_t value;
    int32_t next;
} memo_entry;

struct nd_kernel_builder {
    const nd_build_ctx *ctx;
    int32_t ndim;
    int64_t shape[ND_MAX_DIMS];
    nd_ir_inst *insts;
    int32_t n_insts, cap_insts;
    nd_ir_access *loads;
    int32_t n_loads, cap_loads;
    nd_ir_access *indices;
    int32_t n_indices, cap_indices;
    nd_ir_gather *gathers;
    int32_t n_gathers, cap_gathers;
    nd_ir_store *stores;
    uint8_t *store_region;
    int32_t n_stores, cap_stores;
    int32_t has_reduce;
    nd_ir_reduce reduce;
    int32_t *params; /* flush parameter index per kernel parameter */
    uint8_t *param_dtypes;
    int32_t n_params, cap_params;
    int32_t *slots; /* plan slot per kernel slot */
    int32_t n_slots, cap_slots;
    int32_t *cse; /* open addressing over insts, -1 = empty */
    int32_t cap_cse;
    memo_entry *memo;
    int32_t n_memo, cap_memo;
    /* Per hash of a node's index, its newest memo entry (-1: none): a
     * lookup is a short chain, where a scan of every entry made building
     * a kernel of 192 inlined nodes quadratic. */
    int32_t *memo_head;
    uint32_t cap_head; /* a power of two, or 0 */
    int32_t failed_node;
    /* An allocation failed while building: the kernel is incomplete (a
     * value or a store is missing), and the planner must fail the flush
     * rather than plan it without them. */
    int oom;
    /* Loop regions (kernel_ir.h's ND_IR_LOOP): how many were opened, and
     * the closed ones' [LOOP, LOOP_END) ranges, whose values hash-consing
     * must not hand to an instruction after them. */
    int32_t n_loops, n_closed, cap_closed;
    int32_t (*closed)[2];
};

nd_kernel_builder *nd_kb_new(const nd_build_ctx *ctx, int ndim, const int64_t *shape) {
    nd_kernel_builder *kb = nd_calloc(1, sizeof *kb);
    if (!kb) return NULL;
    kb->ctx = ctx;
    kb->ndim = ndim;
    for (int k = 0; k < ndim; k++) kb->shape[k] = shape[k];
    kb->failed_node = -1;
    return kb;
}

void nd_kb_free(nd_kernel_builder *kb) {
    if (!kb) return;
    free(kb->insts);
    free(kb->loads);
    free(kb->indices);
    free(kb->gathers);
    free(kb->stores);
    free(kb->store_region);
    free(kb->params);
    free(kb->param_dtypes);
    free(kb->slots);
    free(kb->cse);
    free(kb->memo);
    free(kb->memo_head);
    free(kb->closed);
    free(kb);
}

int32_t nd_kb_failed_node(const nd_kernel_builder *kb) { return kb->failed_node; }
int32_t nd_kb_gathers(const nd_kernel_builder *kb) { return kb->n_gathers; }
int nd_kb_oom(const nd_kernel_builder *kb) { return kb->oom; }

/* Every allocation failure while building goes through here. */
static int32_t out_of_memory(nd_kernel_builder *kb, int32_t value) {
    kb->oom = 1;
    return value;
}

void nd_xform_identity(nd_xform *t, int ndim) {
    memset(t, 0, sizeof *t);
    t->ndim = ndim;
    for (int k = 0; k < ND_MAX_DIMS; k++) {
        t->axis[k] = (int8_t)(k < ndim ? k : -1);
        t->coef[k] = k < ndim ? 1 : 0;
    }
}

/* ------------------------------------------------------------ hash-consing */

static uint64_t inst_hash(const nd_ir_inst *i) {
    uint64_t h = nd_hash_u64(ND_HASH_SEED, (uint64_t)i->ufunc << 32 | (uint64_t)i->flags << 16 |
                                               (uint64_t)i->op << 8 | i->dtype);
    h = nd_hash_u64(h, (uint64_t)(uint32_t)i->a << 32 | (uint32_t)i->b);
    return nd_hash_u64(h, (uint64_t)(uint32_t)i->c << 32 | (uint32_t)i->d);
}

static int cse_rehash(nd_kernel_builder *kb, int32_t cap) {
    int32_t *t = nd_malloc((size_t)cap * sizeof *t);
    if (!t) return 0;
    memset(t, 0xff, (size_t)cap * sizeof *t);
    for (int32_t v = 0; v < kb->n_insts; v++) {
        uint64_t h = inst_hash(&kb->insts[v]);
        int32_t s = (int32_t)(h & (uint64_t)(cap - 1));
        while (t[s] >= 0) s = (s + 1) & (cap - 1);
        t[s] = v;
    }
    free(kb->cse);
    kb->cse = t;
    kb->cap_cse = cap;
    return 1;
}

/* Whether instruction v lies in a loop region that has closed (its value
 * is not visible after it; the LOOP_END's is). */
static int in_closed_loop(const nd_kernel_builder *kb, int32_t v) {
    for (int32_t r = 0; r < kb->n_closed; r++)
        if (v >= kb->closed[r][0] && v < kb->closed[r][1]) return 1;
    return 0;
}

/* Instruction (op, dtype, a, b, c, d; user loop ufunc), or an equal earlier
 * one (not from inside a closed loop region). */
static int32_t emit_inst(nd_kernel_builder *kb, int op, nd_dtype dtype, int32_t a, int32_t b,
                         int32_t c, int32_t d, uint16_t flags, uint32_t ufunc) {
    if (a < -1 || b < -1 || c < -1 || d < -1) return -2; /* an operand already failed */
    nd_ir_inst in = {(uint8_t)op, (uint8_t)dtype, flags, a, b, c, d, ufunc};
    if (kb->n_insts * 2 >= kb->cap_cse && !cse_rehash(kb, kb->cap_cse ? kb->cap_cse * 2 : 64))
        return out_of_memory(kb, -2);
    uint64_t h = inst_hash(&in);
    int32_t s = (int32_t)(h & (uint64_t)(kb->cap_cse - 1));
    while (kb->cse[s] >= 0) {
        const nd_ir_inst *o = &kb->insts[kb->cse[s]];
        if (o->op == in.op && o->dtype == in.dtype && o->flags == flags && o->a == a && o->b == b &&
            o->c == c && o->d == d && o->ufunc == ufunc && !in_closed_loop(kb, kb->cse[s]))
            return kb->cse[s];
        s = (s + 1) & (kb->cap_cse - 1);
    }
    if (!nd_grow((void **)&kb->insts, (uint32_t *)&kb->cap_insts, kb->n_insts + 1, sizeof *kb->insts))
        return out_of_memory(kb, -2);
    kb->insts[kb->n_insts] = in;
    kb->cse[s] = kb->n_insts;
    return kb->n_insts++;
}

static int32_t emit4(nd_kernel_builder *kb, int op, nd_dtype dtype, int32_t a, int32_t b, int32_t c,
                     int32_t d, uint16_t flags) {
    return emit_inst(kb, op, dtype, a, b, c, d, flags, 0);
}

static int32_t emit_flagged(nd_kernel_builder *kb, int op, nd_dtype dtype, int32_t a, int32_t b,
                            int32_t c, uint16_t flags) {
    return emit4(kb, op, dtype, a, b, c, -1, flags);
}

static int32_t emit(nd_kernel_builder *kb, int op, nd_dtype dtype, int32_t a, int32_t b, int32_t c) {
    return emit_flagged(kb, op, dtype, a, b, c, 0);
}

int32_t nd_kb_cast(nd_kernel_builder *kb, int32_t v, nd_dtype dtype) {
    if (v < 0) return v;
    if (kb->insts[v].dtype == dtype) return v;
    return emit(kb, ND_OP_CAST, dtype, v, -1, -1);
}

static int access_equal(const nd_ir_access *a, const nd_ir_access *b, int ndim) {
    if (a->slot != b->slot || a->dtype != b->dtype || a->offset != b->offset) return 0;
    for (int k = 0; k < ndim; k++)
        if (a->strides[k] != b->strides[k]) return 0;
    return 1;
}

static int32_t kernel_slot(nd_kernel_builder *kb, int32_t plan_slot) {
    for (int32_t s = 0; s < kb->n_slots; s++)
        if (kb->slots[s] == plan_slot) return s;
    if (!nd_grow((void **)&kb->slots, (uint32_t *)&kb->cap_slots, kb->n_slots + 1, sizeof *kb->slots))
        return out_of_memory(kb, -1);
    kb->slots[kb->n_slots] = plan_slot;
    return kb->n_slots++;
}

static nd_ir_access make_access(nd_kernel_builder *kb, int32_t slot, nd_dtype dtype, int64_t offset,
                                const int64_t *strides) {
    nd_ir_access a;
    memset(&a, 0, sizeof a);
    a.slot = slot;
    a.dtype = (uint8_t)dtype;
    a.offset = offset;
    for (int k = 0; k < kb->ndim; k++) a.strides[k] = kb->shape[k] == 1 ? 0 : strides[k];
    return a;
}

static int gather_base(const nd_kernel_builder *kb, int32_t l) {
    for (int32_t g = 0; g < kb->n_gathers; g++)
        if (kb->gathers[g].load == l) return 1;
    return 0;
}

/* The number of the load with this access (added if new), -2 on failure.
 * A gather's base (`base`) is never the load of a value with the same
 * access, nor the other way round: backends read a gather's base as an
 * offset only (nd_ir_load_gathered). */
static int32_t load_access(nd_kernel_builder *kb, int32_t plan_slot, nd_dtype dtype, int64_t offset,
                           const int64_t *strides, int base) {
    int32_t slot = kernel_slot(kb, plan_slot);
    if (slot < 0) return -2;
    nd_ir_access a = make_access(kb, slot, dtype, offset, strides);
    int32_t l = 0;
    while (l < kb->n_loads && (!access_equal(&kb->loads[l], &a, kb->ndim) || gather_base(kb, l) != base)) l++;
    if (l == kb->n_loads) {
        if (!nd_grow((void **)&kb->loads, (uint32_t *)&kb->cap_loads, kb->n_loads + 1, sizeof *kb->loads))
            return out_of_memory(kb, -2);
        kb->loads[kb->n_loads++] = a;
    }
    return l;
}

int32_t nd_kb_load(nd_kernel_builder *kb, int32_t plan_slot, nd_dtype dtype, int64_t offset,
                   const int64_t *strides) {
    int32_t l = load_access(kb, plan_slot, dtype, offset, strides, 0);
    return l < 0 ? l : emit(kb, ND_IR_LOAD, dtype, l, -1, -1);
}

static int32_t index_value(nd_kernel_builder *kb, int64_t offset, const int64_t *strides) {
    nd_ir_access a = make_access(kb, -1, ND_INT64, offset, strides);
    int32_t l = 0;
    while (l < kb->n_indices && !access_equal(&kb->indices[l], &a, kb->ndim)) l++;
    if (l == kb->n_indices) {
        if (!nd_grow((void **)&kb->indices, (uint32_t *)&kb->cap_indices, kb->n_indices + 1, sizeof *kb->indices))
            return out_of_memory(kb, -2);
        kb->indices[kb->n_indices++] = a;
    }
    return emit(kb, ND_IR_INDEX, ND_INT64, l, -1, -1);
}

int32_t nd_kb_zero_index(nd_kernel_builder *kb) {
    int64_t zero[ND_MAX_DIMS] = {0};
    return index_value(kb, 0, zero);
}

/* Kernel parameter index for a flush parameter read as `dtype`. */
static int32_t param_index(nd_kernel_builder *kb, int32_t flush_index, nd_dtype dtype) {
    int32_t p = 0;
    while (p < kb->n_params && !(kb->params[p] == flush_index && kb->param_dtypes[p] == dtype)) p++;
    if (p == kb->n_params) {
        int32_t cap = kb->cap_params;
        if (!nd_grow((void **)&kb->params, (uint32_t *)&cap, kb->n_params + 1, sizeof *kb->params))
            return out_of_memory(kb, -2);
        cap = kb->cap_params;
        if (!nd_grow((void **)&kb->param_dtypes, (uint32_t *)&cap, kb->n_params + 1, 1))
            return out_of_memory(kb, -2);
        kb->cap_params = cap;
        kb->params[kb->n_params] = flush_index;
        kb->param_dtypes[kb->n_params] = (uint8_t)dtype;
        kb->n_params++;
    }
    return p;
}

static int32_t param_value(nd_kernel_builder *kb, int32_t flush_index, nd_dtype dtype) {
    /* A complex constant (a fill, a weak scalar) is its real part: a
     * parameter of the part dtype, cast in the kernel (parameters are one
     * 8-byte word). */
    if (nd_dtype_is_complex(dtype)) {
        int32_t re = param_value(kb, flush_index, nd_dtype_part(dtype));
        return re < 0 ? re : nd_kb_cast(kb, re, dtype);
    }
    int32_t p = param_index(kb, flush_index, dtype);
    return p < 0 ? -2 : emit(kb, ND_IR_PARAM, dtype, p, -1, -1);
}

/* ---------------------------------------------------------------- inlining */

/* Expresses the kernel-space access (offset, strides) into node p's
 * contiguous row-major output as an index transform on p's own axes. Fails
 * when a stride is no multiple of one of p's axis strides within range (a
 * reshape that merges axes, for example). */
static int decompose(const nd_kernel_builder *kb, const nd_node *p, int64_t offset,
                     const int64_t *strides, nd_xform *t) {
    int64_t pstride[ND_MAX_DIMS], lo[ND_MAX_DIMS], hi[ND_MAX_DIMS];
    nd_contiguous_strides(p->ndim, p->shape, pstride);
    int64_t size = nd_shape_size(p->ndim, p->shape);
    if (size <= 0 || offset < 0 || offset >= size) return 0;
    memset(t, 0, sizeof *t);
    t->ndim = p->ndim;
    int64_t rest = offset;
    for (int j = 0; j < p->ndim; j++) {
        t->base[j] = rest / pstride[j];
        rest -= t->base[j] * pstride[j];
        lo[j] = hi[j] = t->base[j];
    }
    for (int k = 0; k < ND_MAX_DIMS; k++) t->axis[k] = -1;
    for (int k = 0; k < kb->ndim; k++) {
        int64_t s = strides[k], n = kb->shape[k];
        if (n <= 1 || s == 0) continue;
        int found = 0;
        for (int j = 0; j < p->ndim && !found; j++) {
            if (p->shape[j] == 1 || s % pstride[j] != 0) continue;
            int64_t a = s / pstride[j], ext = a * (n - 1);
            int64_t nlo = lo[j] + (ext < 0 ? ext : 0), nhi = hi[j] + (ext > 0 ? ext : 0);
            if (nlo < 0 || nhi >= p->shape[j]) continue;
            lo[j] = nlo;
            hi[j] = nhi;
            t->axis[k] = (int8_t)j;
            t->coef[k] = a;
            found = 1;
        }
        if (!found) return 0;
    }
    return 1;
}

/* The access a ref of node c makes, in kernel space, when c is computed
 * through transform tc. */
static void ref_affine(const nd_kernel_builder *kb, const nd_ref *r, const nd_xform *tc,
                       int64_t *offset, int64_t *strides) {
    int64_t off = r->offset;
    for (int m = 0; m < r->ndim; m++) off += r->strides[m] * tc->base[m];
    *offset = off;
    for (int k = 0; k < kb->ndim; k++)
        strides[k] = tc->axis[k] >= 0 ? r->strides[tc->axis[k]] * tc->coef[k] : 0;
}

static int xform_equal(const nd_xform *a, const nd_xform *b, int kndim) {
    if (a->ndim != b->ndim) return 0;
    for (int j = 0; j < a->ndim; j++)
        if (a->base[j] != b->base[j]) return 0;
    for (int k = 0; k < kndim; k++)
        if (a->axis[k] != b->axis[k] || (a->axis[k] >= 0 && a->coef[k] != b->coef[k])) return 0;
    return 1;
}

int32_t nd_build_read_slot(const nd_build_ctx *ctx, const nd_ref *r) {
    if (r->buf == ctx->prev_buf && r->version == ctx->prev_version) return ctx->prev_slot;
    int64_t w = ctx->version_slot ? nd_buffer_writer_of(r->buf, r->version) : -1;
    return w >= 0 && ctx->version_slot[w] >= 0 ? ctx->version_slot[w] : r->buf->slot;
}

int32_t nd_kb_ref_value(nd_kernel_builder *kb, const nd_node *c, int k, const nd_xform *tc,
                        nd_dtype want) {
    const nd_ref *r = &c->inputs[k];
    const nd_build_ctx *ctx = kb->ctx;
    if (!r->buf) {
        int32_t idx = (int32_t)(ctx->walk->param_base[c->index] + c->n_params);
        for (int j = 0; j < k; j++) idx += c->inputs[j].buf == NULL;
        /* A float constant used as another float dtype is passed in that
         * dtype (one conversion at launch, not one per element). */
        nd_dtype pd = (nd_dtype)r->dtype;
        if (nd_dtype_is_float(pd) && nd_dtype_is_float(want)) pd = want;
        return nd_kb_cast(kb, param_value(kb, idx, pd), want);
    }
    int64_t off, strides[ND_MAX_DIMS];
    ref_affine(kb, r, tc, &off, strides);
    int64_t w = nd_buffer_writer_of(r->buf, r->version);
    int32_t v;
    if (w >= 0 && ctx->inline_ok[w]) {
        const nd_node *p = ctx->g->nodes[w];
        /* A component view (nd_real/nd_imag) of a complex value counts in
         * parts: part off % 2 of the pairs at off / 2, strides / 2 (even:
         * every stride of such a view is twice its base's). */
        int part = -1;
        if (r->dtype != p->dtype && nd_dtype_is_complex((nd_dtype)p->dtype) &&
            r->dtype == nd_dtype_part((nd_dtype)p->dtype)) {
            part = (int)(off & 1);
            off >>= 1;
            for (int j = 0; j < kb->ndim; j++) {
                if (strides[j] % 2) part = -2;
                strides[j] /= 2;
            }
        }
        nd_xform tp;
        if (part == -2 || !decompose(kb, p, off, strides, &tp)) {
            kb->failed_node = (int32_t)w;
            return -2;
        }
        v = nd_kb_node_value(kb, p, &tp);
        if (part >= 0 && v >= 0)
            v = emit(kb, part ? ND_OP_IMAG : ND_OP_REAL, (nd_dtype)r->dtype, v, -1, -1);
    } else {
        v = nd_kb_load(kb, nd_build_read_slot(ctx, r), (nd_dtype)r->dtype, off, strides);
    }
    return nd_kb_cast(kb, v, want);
}

/* Flat (row-major) index of node p's element under transform t. */
static int32_t flat_index(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    int64_t pstride[ND_MAX_DIMS], strides[ND_MAX_DIMS] = {0}, off = 0;
    nd_contiguous_strides(p->ndim, p->shape, pstride);
    for (int j = 0; j < p->ndim; j++) off += pstride[j] * t->base[j];
    for (int k = 0; k < kb->ndim; k++)
        strides[k] = t->axis[k] >= 0 ? pstride[t->axis[k]] * t->coef[k] : 0;
    return index_value(kb, off, strides);
}

/* A user function call: each input cast to its parameter's dtype, one
 * ND_IR_UFUNC instruction naming the loop. */
static int32_t ufunc_value(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    const nd_ufunc_loop *l = nd_ufunc_loop_get(p->u.ufunc.loop);
    if (!l || l->nargs != p->n_inputs) return out_of_memory(kb, -2); /* cannot happen */
    int32_t in[ND_UFUNC_MAX_ARGS] = {-1, -1, -1, -1};
    for (int k = 0; k < l->nargs; k++) {
        in[k] = nd_kb_ref_value(kb, p, k, t, (nd_dtype)l->args[k]);
        if (in[k] < -1) return -2;
    }
    int32_t v = emit_inst(kb, ND_IR_UFUNC, (nd_dtype)l->ret, in[0], in[1], in[2], in[3], 0, l->id);
    return nd_kb_cast(kb, v, (nd_dtype)p->dtype);
}

_Static_assert(ND_MAX_DIMS <= ND_IR_GATHER_MAX_AXES, "a gather node's index arrays (one an axis at most) are its instruction's operands");

/* The number of gather g in the kernel's table (added if new), -2 on
 * failure. */
static int32_t gather_number(nd_kernel_builder *kb, const nd_ir_gather *g) {
    int32_t n = 0;
    while (n < kb->n_gathers && memcmp(&kb->gathers[n], g, sizeof *g)) n++;
    if (n == kb->n_gathers) {
        if (!nd_grow((void **)&kb->gathers, (uint32_t *)&kb->cap_gathers, kb->n_gathers + 1, sizeof *kb->gathers))
            return out_of_memory(kb, -2);
        kb->gathers[kb->n_gathers++] = *g;
    }
    return n;
}

/* A gather (graph/node.h's ND_GATHER_MAP_OP): the index values, then one
 * ND_IR_GATHER from the source's base access. The source is never inlined
 * (plan_build.c materialises it): it is read at places only the indices
 * know. */
static int32_t gather_value(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    int K = p->u.gather.n_axes;
    if (K < 1 || K > ND_IR_GATHER_MAX_AXES) return out_of_memory(kb, -2); /* cannot happen: gather.c */
    int32_t idx[ND_IR_GATHER_MAX_AXES];
    for (int k = 0; k < ND_IR_GATHER_MAX_AXES; k++) idx[k] = -1;
    for (int k = 0; k < K; k++) {
        idx[k] = nd_kb_ref_value(kb, p, k, t, ND_INT64);
        if (idx[k] < 0) return idx[k];
    }
    const nd_ref *r = &p->inputs[K];
    int64_t off, strides[ND_MAX_DIMS];
    ref_affine(kb, r, t, &off, strides);
    /* the base access only: a LOAD of it would read the indexed axes'
     * element 0, which an empty axis does not have */
    int32_t base = load_access(kb, nd_build_read_slot(kb->ctx, r), (nd_dtype)r->dtype, off, strides, 1);
    if (base < 0) return base;
    nd_ir_gather g;
    memset(&g, 0, sizeof g);
    g.load = base;
    g.fn = p->u.gather.fn;
    g.axes = p->u.gather.axes;
    g.n_axes = K;
    const int64_t *axes = nd_node_gather_axes(p);
    for (int k = 0; k < K; k++) {
        g.stride[k] = axes[k];
        g.size[k] = axes[K + k];
    }
    for (int k = 3; k < ND_IR_GATHER_MAX_AXES; k++) g.more[k - 3] = idx[k];
    int32_t n = gather_number(kb, &g);
    if (n < 0) return n;
    return emit_inst(kb, ND_IR_GATHER, (nd_dtype)r->dtype, n, idx[0], idx[1], idx[2], 0, 0);
}

/* The dtype a MAP's operand k is read in: the compute dtype, bool for a
 * logical op or a where's condition, the operand's own for a cast. */
static nd_dtype operand_want(int op, nd_dtype cd, int k, nd_dtype own) {
    nd_dtype want = (nd_dtype)nd_op_operand_dtype((nd_op)op, cd);
    if (nd_op_kind_of((nd_op)op) == ND_OPK_LOGICAL) want = ND_BOOL;
    switch (op) {
    case ND_OP_WHERE: want = k == 0 ? ND_BOOL : cd; break;
    case ND_OP_CAST: want = own; break;
    default: break;
    }
    return want;
}

/* A MAP's instruction over its operands' values, cast to its dtype. */
static int32_t map_apply(nd_kernel_builder *kb, int op, nd_dtype cd, nd_dtype dtype, const int32_t *in) {
    nd_dtype rd = cd;
    if (nd_op_is_comparison((nd_op)op) || nd_op_kind_of((nd_op)op) == ND_OPK_LOGICAL)
        rd = ND_BOOL;
    else if (nd_op_computes_in_operands((nd_op)op)) /* abs, angle, parts of a complex */
        rd = (nd_dtype)nd_op_result_of((nd_op)op, cd);
    if (op == ND_OP_CAST) return nd_kb_cast(kb, in[0], dtype);
    int32_t v = emit(kb, op, rd, in[0], in[1], in[2]);
    return nd_kb_cast(kb, v, dtype);
}

/* A body call (common/body.h): its template's entries, each emitted as
 * map_value would emit the node it was traced from, demanded from the
 * result down in operand order as the kernel builder walks inlined nodes,
 * so the instructions, their order and the parameters are those of the
 * ops recorded one by one (the same kernel, the same bits). Entries are
 * computed once per call and transform (vals), as memoised nodes are. */
typedef struct {
    nd_kernel_builder *kb;
    const nd_node *p;
    const nd_xform *t;
    const nd_body *b;
    int32_t *vals; /* per entry: its value, -3 while not computed */
    int32_t const_base;
    int32_t carried; /* inside a loop call's region: its LOOP (input p->u.body.carry's value); else -1 */
} body_eval;

static int32_t body_entry_value(body_eval *E, int32_t e);

static int32_t body_operand(body_eval *E, const nd_body_ref *r, nd_dtype want) {
    nd_kernel_builder *kb = E->kb;
    switch ((nd_body_ref_kind)r->kind) {
    case ND_BODY_REF_INPUT:
        if (E->carried >= 0 && r->index == E->p->u.body.carry) return nd_kb_cast(kb, E->carried, want);
        return nd_kb_ref_value(kb, E->p, (int)r->index, E->t, want);
    case ND_BODY_REF_ENTRY: {
        int32_t v = body_entry_value(E, (int32_t)r->index);
        return v < 0 ? v : nd_kb_cast(kb, v, want);
    }
    case ND_BODY_REF_CONST: {
        /* as nd_kb_ref_value's constants */
        nd_dtype pd = (nd_dtype)r->dtype;
        if (nd_dtype_is_float(pd) && nd_dtype_is_float(want)) pd = want;
        int32_t v = param_value(kb, E->const_base + (int32_t)r->index, pd);
        return v < 0 ? v : nd_kb_cast(kb, v, want);
    }
    case ND_BODY_REF_FULL: {
        /* as source_value's FULL */
        int32_t v = param_value(kb, E->const_base + (int32_t)r->index, (nd_dtype)r->dtype);
        return v < 0 ? v : nd_kb_cast(kb, v, want);
    }
    }
    return out_of_memory(kb, -2); /* cannot happen: body.c made the refs */
}

static int32_t body_entry_value(body_eval *E, int32_t e) {
    if (E->vals[e] != -3) return E->vals[e];
    const nd_body_entry *en = &E->b->entries[e];
    const nd_dtype cd = (nd_dtype)en->cdtype;
    int32_t in[3] = {-1, -1, -1};
    for (int k = 0; k < en->n_in && k < 3; k++) {
        in[k] = body_operand(E, &en->in[k], operand_want(en->op, cd, k, (nd_dtype)en->in[k].dtype));
        if (in[k] < -1) return -2;
    }
    return E->vals[e] = map_apply(E->kb, en->op, cd, (nd_dtype)en->dtype, in);
}

/* A loop call (graph/node.h's nd_node_body_count > 1): the body applied
 * count times, its result carried into input `carry` of the next round.
 * The other inputs are demanded before the region, so their producers and
 * loads are computed once, not every round. */
static int32_t body_loop_value(body_eval *E, int32_t count_param) {
    nd_kernel_builder *kb = E->kb;
    const nd_node *p = E->p;
    const nd_body *b = E->b;
    const int carry = p->u.body.carry;
    const nd_dtype dt = (nd_dtype)b->in_dtype[carry];
    for (int k = 0; k < p->n_inputs; k++)
        if (k != carry && nd_kb_ref_value(kb, p, k, E->t, (nd_dtype)p->inputs[k].dtype) < -1) return -2;
    const int32_t count = param_value(kb, count_param, ND_INT64);
    const int32_t init = nd_kb_ref_value(kb, p, carry, E->t, dt);
    if (count < 0 || init < 0) return -2;
    const int32_t loop = emit4(kb, ND_IR_LOOP, dt, count, init, -1, kb->n_loops++, 0);
    if (loop < 0) return loop;
    E->carried = loop;
    const int32_t next = nd_kb_cast(kb, body_operand(E, &b->out, (nd_dtype)b->out.dtype), dt);
    E->carried = -1;
    if (next < 0) return next;
    const int32_t end = emit4(kb, ND_IR_LOOP_END, dt, loop, next, -1, -1, 0);
    if (end < 0) return end;
    if (!nd_grow((void **)&kb->closed, (uint32_t *)&kb->cap_closed, kb->n_closed + 1, sizeof *kb->closed))
        return out_of_memory(kb, -2);
    kb->closed[kb->n_closed][0] = loop;
    kb->closed[kb->n_closed++][1] = end;
    return end;
}

static int32_t body_value(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    const nd_body *b = p->u.body.body;
    int32_t stack_vals[64];
    int32_t *vals = b->n_entries <= 64 ? stack_vals : nd_malloc(sizeof(int32_t) * (size_t)b->n_entries);
    if (!vals) return out_of_memory(kb, -2);
    for (int32_t e = 0; e < b->n_entries; e++) vals[e] = -3;
    int32_t base = (int32_t)kb->ctx->walk->param_base[p->index] + p->n_params;
    for (int k = 0; k < p->n_inputs; k++) base += p->inputs[k].buf == NULL;
    body_eval E = {kb, p, t, b, vals, base, -1};
    int32_t v = nd_node_body_count(p) > 1 ? body_loop_value(&E, (int32_t)kb->ctx->walk->param_base[p->index])
                                          : body_operand(&E, &b->out, (nd_dtype)b->out.dtype);
    if (vals != stack_vals) free(vals);
    return v < 0 ? v : nd_kb_cast(kb, v, (nd_dtype)p->dtype);
}

static int32_t map_value(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    if (p->op == ND_UFUNC_MAP_OP) return ufunc_value(kb, p, t);
    if (p->op == ND_GATHER_MAP_OP) return nd_kb_cast(kb, gather_value(kb, p, t), (nd_dtype)p->dtype);
    if (p->op == ND_BODY_MAP_OP) return body_value(kb, p, t);
    nd_dtype cd = (nd_dtype)p->cdtype;
    int32_t in[3] = {-1, -1, -1};
    for (int k = 0; k < p->n_inputs && k < 3; k++) {
        in[k] = nd_kb_ref_value(kb, p, k, t, operand_want(p->op, cd, k, (nd_dtype)p->inputs[k].dtype));
        if (in[k] < -1) return -2;
    }
    return map_apply(kb, p->op, cd, (nd_dtype)p->dtype, in);
}

static int32_t source_value(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    int32_t base = (int32_t)kb->ctx->walk->param_base[p->index];
    nd_dtype dt = (nd_dtype)p->dtype;
    if (p->kind == ND_NODE_FULL) return param_value(kb, base, dt);
    int32_t idx = flat_index(kb, p, t);
    if (p->kind == ND_NODE_ARANGE) {
        int32_t f = nd_kb_cast(kb, idx, ND_FLOAT64);
        int32_t step = param_value(kb, base + 1, ND_FLOAT64);
        int32_t start = param_value(kb, base, ND_FLOAT64);
        /* i * step + start rounded twice, as NumPy's arange and linspace:
         * an FMA would move values (bin edges) by an ulp on the GPU. */
        const uint16_t x = ND_IR_EXACT;
        int32_t v = emit_flagged(kb, ND_OP_ADD, ND_FLOAT64,
                                 emit_flagged(kb, ND_OP_MUL, ND_FLOAT64, f, step, -1, x), start, -1, x);
        return nd_kb_cast(kb, v, dt);
    }
    /* Random instructions name their seed and stream parameters directly.
     * The seed is that of the first node of the draw's run (flush_walk.h,
     * rng_root): one parameter for the run, whose streams then share a
     * high word (ND_IR_ONE_HIGH_WORD). */
    const int32_t seed = param_index(kb, (int32_t)kb->ctx->walk->param_base[kb->ctx->walk->rng_root[p->index]],
                                     ND_UINT64);
    const int32_t stream = param_index(kb, base + 1, ND_UINT64);
    const uint16_t one_high = ND_IR_ONE_HIGH_WORD;
    if (p->op == ND_RANDOM_INTEGERS || p->op == ND_RANDOM_INTEGERS_PAIRS) {
        /* lo + draw in [0, range), added in unsigned arithmetic (which
         * wraps: the sum is the value in the dtype's own bits), then cast.
         * The pair form's draw is a uint16 (two a word), widened first. */
        nd_dtype ud = nd_dtype_size(dt) == 8 ? ND_UINT64 : ND_UINT32;
        int32_t range = param_index(kb, base + 2, ND_UINT64);
        int32_t off = p->op == ND_RANDOM_INTEGERS_PAIRS
                          ? nd_kb_cast(kb, emit4(kb, ND_IR_RAND_INTEGER, ND_UINT16, idx, seed, stream, range, one_high), ud)
                          : emit4(kb, ND_IR_RAND_INTEGER, ud, idx, seed, stream, range, one_high);
        int32_t v = emit(kb, ND_OP_ADD, ud, off, param_value(kb, base + 3, ud), -1);
        return nd_kb_cast(kb, v, dt);
    }
    /* RANDOM: draws in float64 for float64 output, float32 otherwise. */
    nd_dtype cd = dt == ND_FLOAT64 ? ND_FLOAT64 : ND_FLOAT32;
    /* 0 + (1 - 0) * u is u exactly (u >= +0): a standard uniform is the
     * draw alone, two roundings fewer, and Monte Carlo kernels are bound by
     * instruction issue. */
    if (p->op == ND_RANDOM_UNIFORM01)
        return nd_kb_cast(kb, emit_flagged(kb, ND_IR_RAND_UNIFORM, cd, idx, seed, stream, one_high), dt);
    int32_t a = param_value(kb, base + 2, cd);
    int32_t b = param_value(kb, base + 3, cd);
    int32_t v;
    /* Exact rounding: the same draws on every backend, bit for bit. */
    const uint16_t x = ND_IR_EXACT;
    if (p->op == ND_RANDOM_UNIFORM) {
        int32_t u = emit_flagged(kb, ND_IR_RAND_UNIFORM, cd, idx, seed, stream, one_high);
        int32_t width = emit_flagged(kb, ND_OP_SUB, cd, b, a, -1, x);
        v = emit_flagged(kb, ND_OP_ADD, cd, a, emit_flagged(kb, ND_OP_MUL, cd, width, u, -1, x), -1, x);
    } else {
        int32_t z = emit_flagged(kb, ND_IR_RAND_NORMAL, cd, idx, seed, stream, one_high);
        v = emit_flagged(kb, ND_OP_ADD, cd, a, emit_flagged(kb, ND_OP_MUL, cd, b, z, -1, x), -1, x);
    }
    return nd_kb_cast(kb, v, dt);
}

static uint32_t memo_slot(uint32_t node, uint32_t cap) { return (node * 2654435761u) & (cap - 1); }

/* Rebuilds the chains for a table of cap heads; 0 when out of memory (the
 * memo then stops growing: values are computed again, and the CSE of
 * emit_inst still shares their instructions). */
static int memo_rehash(nd_kernel_builder *kb, uint32_t cap) {
    int32_t *h = nd_malloc(sizeof *h * cap);
    if (!h) return 0;
    for (uint32_t i = 0; i < cap; i++) h[i] = -1;
    for (int32_t m = 0; m < kb->n_memo; m++) {
        uint32_t s = memo_slot((uint32_t)kb->memo[m].node, cap);
        kb->memo[m].next = h[s];
        h[s] = m;
    }
    free(kb->memo_head);
    kb->memo_head = h;
    kb->cap_head = cap;
    return 1;
}

int32_t nd_kb_node_value(nd_kernel_builder *kb, const nd_node *p, const nd_xform *t) {
    if (kb->cap_head)
        for (int32_t m = kb->memo_head[memo_slot(p->index, kb->cap_head)]; m >= 0; m = kb->memo[m].next)
            if (kb->memo[m].node == (int32_t)p->index && xform_equal(&kb->memo[m].xform, t, kb->ndim))
                return kb->memo[m].value;
    if (kb->ctx->node_step[p->index] < 0) kb->ctx->node_step[p->index] = kb->ctx->current_step;
    int32_t v = p->kind == ND_NODE_MAP ? map_value(kb, p, t) : source_value(kb, p, t);
    if (v < 0) return v;
    if ((uint32_t)kb->n_memo * 2 + 2 > kb->cap_head && !memo_rehash(kb, kb->cap_head ? kb->cap_head * 2 : 64))
        return v;
    if (nd_grow((void **)&kb->memo, (uint32_t *)&kb->cap_memo, kb->n_memo + 1, sizeof *kb->memo)) {
        uint32_t s = memo_slot(p->index, kb->cap_head);
        kb->memo[kb->n_memo].node = (int32_t)p->index;
        kb->memo[kb->n_memo].xform = *t;
        kb->memo[kb->n_memo].value = v;
        kb->memo[kb->n_memo].next = kb->memo_head[s];
        kb->memo_head[s] = kb->n_memo;
        kb->n_memo++;
    }
    return v;
}

/* ----------------------------------------------------------------- outputs */

void nd_kb_store(nd_kernel_builder *kb, int32_t plan_slot, nd_dtype dtype, int64_t offset,
                 const int64_t *strides, int32_t value, int region) {
    int32_t slot = kernel_slot(kb, plan_slot);
    if (slot < 0 || value < 0) {
        kb->oom |= slot < 0; /* a failed value was flagged where it failed */
        return;
    }
    int32_t cap = kb->cap_stores;
    if (!nd_grow((void **)&kb->store_region, (uint32_t *)&cap, kb->n_stores + 1, 1)) {
        kb->oom = 1;
        return;
    }
    if (!nd_grow((void **)&kb->stores, (uint32_t *)&kb->cap_stores, kb->n_stores + 1, sizeof *kb->stores)) {
        kb->oom = 1;
        return;
    }
    kb->stores[kb->n_stores].at = make_access(kb, slot, dtype, offset, strides);
    kb->stores[kb->n_stores].value = nd_kb_cast(kb, value, dtype);
    kb->store_region[kb->n_stores] = (uint8_t)region;
    kb->n_stores++;
}

void nd_kb_reduce(nd_kernel_builder *kb, nd_reduce_kind kind, uint32_t axes, int32_t value,
                  int32_t plan_slot, nd_dtype out_dtype, const int64_t *out_strides) {
    kb->has_reduce = 1;
    kb->reduce.kind = (uint8_t)kind;
    kb->reduce.out_dtype = (uint8_t)out_dtype;
    kb->reduce.axes = axes;
    kb->reduce.value = value;
    kb->reduce.out = make_access(kb, kernel_slot(kb, plan_slot), out_dtype, 0, out_strides);
}

int nd_kb_store_hazard(const nd_kernel_builder *kb) {
    if (kb->n_stores != 1) return 0;
    const nd_ir_access *st = &kb->stores[0].at;
    int64_t slo, shi;
    nd_access_byte_span(kb->ndim, kb->shape, st, &slo, &shi);
    for (int32_t l = 0; l < kb->n_loads; l++) {
        const nd_ir_access *ld = &kb->loads[l];
        if (ld->slot != st->slot) continue;
        for (int32_t g = 0; g < kb->n_gathers; g++)
            if (kb->gathers[g].load == l) return 1; /* read anywhere */
        /* each element reads only itself: safe in place */
        if (nd_access_same_element(kb->ndim, ld, st) || nd_access_same_element(kb->ndim, st, ld)) continue;
        if (nd_access_never_meet(kb->ndim, ld, st)) continue;
        int64_t llo, lhi;
        nd_access_byte_span(kb->ndim, kb->shape, ld, &llo, &lhi);
        if (llo <= shi && slo <= lhi) return 1;
    }
    return 0;
}

void nd_kb_retarget_store(nd_kernel_builder *kb, int32_t temp_slot, nd_ir_access *former) {
    nd_ir_store *st = &kb->stores[0];
    *former = st->at;
    former->slot = kb->slots[st->at.slot]; /* report the plan slot */
    int64_t strides[ND_MAX_DIMS];
    nd_contiguous_strides(kb->ndim, kb->shape, strides);
    st->at = make_access(kb, kernel_slot(kb, temp_slot), (nd_dtype)st->at.dtype, 0, strides);
    kb->store_region[0] = 0;
}

void nd_kb_slot_uses(const nd_kernel_builder *kb,
                     void (*fn)(void *, int32_t slot, int write, int region), void *arg) {
    for (int32_t l = 0; l < kb->n_loads; l++) fn(arg, kb->slots[kb->loads[l].slot], 0, 0);
    for (int32_t s = 0; s < kb->n_stores; s++)
        fn(arg, kb->slots[kb->stores[s].at.slot], 1, kb->store_region[s]);
    if (kb->has_reduce) fn(arg, kb->slots[kb->reduce.out.slot], 1, 0);
}

/* ------------------------------------------------------------------ merging */

int nd_kb_try_merge(nd_kernel_builder *a, const nd_kernel_builder *b, int max_insts) {
    /* a loop region's instructions would be renumbered one by one and
     * shared with a's: not done */
    if (a->has_reduce || b->has_reduce || a->ndim != b->ndim || a->n_loops || b->n_loops) return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return 0;
    if (a->n_insts + b->n_insts > max_insts) return 0;
    /* b may read what a writes only through the very same map (then the
     * value is forwarded); any other overlap is a dependency across
     * elements. Neither may write what the other reads or writes. */
    /* A gather's base load reads its slot anywhere: b gathers from
     * nothing a writes (a forwarded store cannot stand in for it). A bad
     * index in a merged kernel spoils only the values computed from it
     * (kernel_ir.h's nd_ir_fail), so gathers merge like any map. */
    for (int32_t l = 0; l < b->n_loads; l++) {
        nd_ir_access ld = b->loads[l];
        ld.slot = b->slots[ld.slot];
        int gathered = 0;
        for (int32_t g = 0; g < b->n_gathers; g++) gathered |= b->gathers[g].load == l;
        for (int32_t s = 0; s < a->n_stores; s++) {
            nd_ir_access st = a->stores[s].at;
            st.slot = a->slots[st.slot];
            if (st.slot == ld.slot && (gathered || !access_equal(&st, &ld, a->ndim))) return 0;
        }
    }
    for (int32_t s = 0; s < b->n_stores; s++) {
        int32_t ps = b->slots[b->stores[s].at.slot];
        for (int32_t l = 0; l < a->n_loads; l++)
            if (a->slots[a->loads[l].slot] == ps) return 0;
        for (int32_t t = 0; t < a->n_stores; t++)
            if (a->slots[a->stores[t].at.slot] == ps) return 0;
    }
    int32_t *map = nd_malloc((size_t)(b->n_insts ? b->n_insts : 1) * sizeof *map);
    if (!map) return 0;
    for (int32_t v = 0; v < b->n_insts; v++) {
        const nd_ir_inst *in = &b->insts[v];
        int32_t r = -2;
        if (in->op == ND_IR_LOAD) {
            nd_ir_access ld = b->loads[in->a];
            int32_t ps = b->slots[ld.slot];
            for (int32_t s = 0; s < a->n_stores && r < 0; s++) {
                nd_ir_access st = a->stores[s].at;
                st.slot = a->slots[st.slot];
                ld.slot = ps;
                if (access_equal(&st, &ld, a->ndim)) r = a->stores[s].value;
            }
            if (r < 0) r = nd_kb_load(a, ps, (nd_dtype)ld.dtype, ld.offset, ld.strides);
        } else if (in->op == ND_IR_PARAM) {
            r = param_value(a, b->params[in->a], (nd_dtype)b->param_dtypes[in->a]);
        } else if (in->op == ND_IR_INDEX) {
            r = index_value(a, b->indices[in->a].offset, b->indices[in->a].strides);
        } else if (in->op == ND_IR_GATHER) {
            nd_ir_gather g = b->gathers[in->a];
            const nd_ir_access *ld = &b->loads[g.load];
            for (int q = 0; q < ND_IR_GATHER_MAX_AXES - 3; q++) g.more[q] = g.more[q] >= 0 ? map[g.more[q]] : -1;
            g.load = load_access(a, b->slots[ld->slot], (nd_dtype)ld->dtype, ld->offset, ld->strides, 1);
            int32_t n = g.load < 0 ? -2 : gather_number(a, &g);
            int32_t ops[3] = {in->b, in->c, in->d};
            for (int q = 0; q < 3; q++) ops[q] = ops[q] >= 0 ? map[ops[q]] : -1;
            r = n < 0 ? -2 : emit_inst(a, ND_IR_GATHER, (nd_dtype)in->dtype, n, ops[0], ops[1], ops[2], 0, 0);
        } else {
            int ar = in->op < ND_NUM_ELEMENTWISE_OPS ? nd_op_arity((nd_op)in->op) : 1;
            int32_t oa = in->a >= 0 ? map[in->a] : -1;
            int32_t ob = in->b, oc = in->c;
            int32_t od = -1;
            if (in->op == ND_IR_UFUNC) {
                ob = in->b >= 0 ? map[in->b] : -1;
                oc = in->c >= 0 ? map[in->c] : -1;
                od = in->d >= 0 ? map[in->d] : -1;
            } else if (in->op == ND_IR_RAND_UNIFORM || in->op == ND_IR_RAND_NORMAL ||
                in->op == ND_IR_RAND_INTEGER) {
                /* b, c (and d) name parameters, not values */
                ob = param_index(a, b->params[in->b], ND_UINT64);
                oc = param_index(a, b->params[in->c], ND_UINT64);
                if (in->op == ND_IR_RAND_INTEGER) od = param_index(a, b->params[in->d], ND_UINT64);
            } else {
                ob = ar >= 2 && in->b >= 0 ? map[in->b] : -1;
                oc = ar >= 3 && in->c >= 0 ? map[in->c] : -1;
            }
            r = emit_inst(a, in->op, (nd_dtype)in->dtype, oa, ob, oc, od, in->flags, in->ufunc);
        }
        if (r < 0) {
            free(map);
            return 0;
        }
        map[v] = r;
    }
    for (int32_t s = 0; s < b->n_stores; s++) {
        const nd_ir_store *st = &b->stores[s];
        nd_kb_store(a, b->slots[st->at.slot], (nd_dtype)st->at.dtype, st->at.offset,
                    st->at.strides, map[st->value], b->store_region[s]);
    }
    free(map);
    return 1;
}

/* --------------------------------------------------------------- finishing */

static void drop_axis(nd_kernel *k, nd_ir_access **acc, int n_acc, int axis) {
    for (int i = 0; i < n_acc; i++)
        for (int j = axis; j < k->ndim - 1; j++) acc[i]->strides[j] = acc[i]->strides[j + 1];
    for (int j = axis; j < k->ndim - 1; j++) k->shape[j] = k->shape[j + 1];
    if (k->has_reduce) {
        uint32_t lowmask = (1u << axis) - 1u;
        k->reduce.axes = (k->reduce.axes & lowmask) | ((k->reduce.axes >> 1) & ~lowmask);
    }
    k->ndim--;
}

/* Merges neighbouring axes that every access walks as one (a contiguous
 * elementwise kernel becomes 1-d) and drops axes of length 1. Keeps the
 * row-major order of the reduced axes, so argmin/argmax indices hold. */
static void coalesce(nd_kernel *k) {
    int n_acc = k->n_loads + k->n_indices + k->n_stores + (k->has_reduce ? 1 : 0);
    nd_ir_access *acc[n_acc > 0 ? n_acc : 1];
    int a = 0;
    for (int i = 0; i < k->n_loads; i++) acc[a++] = &k->loads[i];
    for (int i = 0; i < k->n_indices; i++) acc[a++] = &k->indices[i];
    for (int i = 0; i < k->n_stores; i++) acc[a++] = &k->stores[i].at;
    if (k->has_reduce) acc[a++] = &k->reduce.out;
    for (int j = k->ndim - 1; j >= 0; j--)
        if (k->shape[j] == 1 && k->ndim > 1) drop_axis(k, acc, n_acc, j);
    for (int j = k->ndim - 2; j >= 0; j--) {
        int ok = 1;
        for (int i = 0; i < n_acc && ok; i++)
            ok = acc[i]->strides[j] == acc[i]->strides[j + 1] * k->shape[j + 1];
        if (k->has_reduce)
            ok = ok && (((k->reduce.axes >> j) & 1u) == ((k->reduce.axes >> (j + 1)) & 1u));
        if (!ok) continue;
        k->shape[j] *= k->shape[j + 1];
        for (int i = 0; i < n_acc; i++) acc[i]->strides[j] = acc[i]->strides[j + 1];
        drop_axis(k, acc, n_acc, j + 1);
    }
    if (k->ndim == 0) {
        k->ndim = 1;
        k->shape[0] = 1;
        for (int i = 0; i < n_acc; i++) acc[i]->strides[0] = 0;
        if (k->has_reduce && k->reduce.axes) k->reduce.axes = 1;
    }
    for (int j = k->ndim; j < ND_MAX_DIMS; j++) {
        k->shape[j] = 0;
        for (int i = 0; i < n_acc; i++) acc[i]->strides[j] = 0;
    }
}

static void name_kernel(nd_kernel *k) {
    char *out = k->name;
    size_t cap = sizeof k->name, len = 0;
    const char *last = NULL;
    for (int32_t v = 0; v < k->n_insts; v++) {
        int op = k->insts[v].op;
        const char *l = NULL;
        if (op < ND_NUM_ELEMENTWISE_OPS && op != ND_OP_CAST)
            l = nd_op_label((nd_op)op);
        else if (op == ND_IR_RAND_UNIFORM)
            l = "uniform";
        else if (op == ND_IR_RAND_NORMAL)
            l = "normal";
        else if (op == ND_IR_RAND_INTEGER)
            l = "integers";
        else if (op == ND_IR_GATHER)
            l = "take";
        else if (op == ND_IR_LOOP)
            l = "loop";
        else if (op == ND_IR_UFUNC) {
            const nd_ufunc_loop *u = nd_ufunc_loop_get(k->insts[v].ufunc);
            l = u ? u->name : NULL;
        }
        if (!l || l == last) continue;
        size_t n = strlen(l);
        if (len + n + 2 >= cap - 8) break;
        if (len) out[len++] = '_';
        memcpy(out + len, l, n);
        len += n;
        last = l;
    }
    const char *tail = k->has_reduce ? nd_reduce_label((nd_reduce_kind)k->reduce.kind)
                                     : (len ? NULL : "copy");
    if (tail && len + strlen(tail) + 2 < cap) {
        if (len) out[len++] = '_';
        memcpy(out + len, tail, strlen(tail));
        len += strlen(tail);
    }
    out[len] = 0;
}

/* A kernel and its arrays in one allocation (one free()), widest alignment
 * first; counts and array pointers set, everything else zero. */
static nd_kernel *kernel_alloc(int32_t n_params, int32_t n_loads, int32_t n_indices, int32_t n_insts,
                               int32_t n_stores, int32_t n_gathers) {
    size_t sz = sizeof(nd_kernel) + (size_t)n_params + 16 + sizeof(nd_ir_access) * (size_t)(n_loads + n_indices) +
                sizeof(nd_ir_inst) * (size_t)n_insts + sizeof(nd_ir_store) * (size_t)n_stores +
                sizeof(nd_ir_gather) * (size_t)n_gathers;
    nd_kernel *k = nd_calloc(1, sz);
    if (!k) return NULL;
    unsigned char *cur = (unsigned char *)(k + 1);
    k->gathers = (nd_ir_gather *)cur;
    cur += sizeof(nd_ir_gather) * (size_t)n_gathers;
    k->n_gathers = n_gathers;
    k->loads = (nd_ir_access *)cur;
    cur += sizeof(nd_ir_access) * (size_t)n_loads;
    k->indices = (nd_ir_access *)cur;
    cur += sizeof(nd_ir_access) * (size_t)n_indices;
    k->stores = (nd_ir_store *)cur;
    cur += sizeof(nd_ir_store) * (size_t)n_stores;
    k->insts = (nd_ir_inst *)cur;
    cur += sizeof(nd_ir_inst) * (size_t)n_insts;
    k->param_dtypes = cur;
    k->n_params = n_params;
    k->n_loads = n_loads;
    k->n_indices = n_indices;
    k->n_insts = n_insts;
    k->n_stores = n_stores;
    return k;
}

/* Copies the arrays of a kernel with the same counts (src's pointers may be
 * anywhere). */
static void copy_arrays(nd_kernel *k, const nd_ir_access *loads, const nd_ir_access *indices,
                        const nd_ir_store *stores, const nd_ir_inst *insts, const uint8_t *param_dtypes,
                        const nd_ir_gather *gathers) {
    if (k->n_gathers) memcpy(k->gathers, gathers, sizeof(nd_ir_gather) * (size_t)k->n_gathers);
    if (k->n_loads) memcpy(k->loads, loads, sizeof(nd_ir_access) * (size_t)k->n_loads);
    if (k->n_indices) memcpy(k->indices, indices, sizeof(nd_ir_access) * (size_t)k->n_indices);
    if (k->n_stores) memcpy(k->stores, stores, sizeof(nd_ir_store) * (size_t)k->n_stores);
    if (k->n_insts) memcpy(k->insts, insts, sizeof(nd_ir_inst) * (size_t)k->n_insts);
    if (k->n_params) memcpy(k->param_dtypes, param_dtypes, (size_t)k->n_params);
}

nd_kernel *nd_kernel_clone(const nd_kernel *k) {
    nd_kernel *c = kernel_alloc(k->n_params, k->n_loads, k->n_indices, k->n_insts, k->n_stores, k->n_gathers);
    if (!c) return NULL;
    nd_kernel arrays = *c;
    *c = *k;
    c->loads = arrays.loads;
    c->indices = arrays.indices;
    c->stores = arrays.stores;
    c->insts = arrays.insts;
    c->param_dtypes = arrays.param_dtypes;
    c->gathers = arrays.gathers;
    copy_arrays(c, k->loads, k->indices, k->stores, k->insts, k->param_dtypes, k->gathers);
    return c;
}

nd_kernel *nd_kernel_combine_partials(const nd_kernel *k0, int64_t parts, int64_t out_n, const char *name) {
    nd_kernel *k = kernel_alloc(0, 1, 0, 1, 0, 0);
    if (!k) return NULL;
    /* Axes: the parts, then the kept axes of k0 in order. */
    k->ndim = 1;
    k->shape[0] = parts;
    nd_ir_access *ld = &k->loads[0];
    nd_ir_reduce *r = &k->reduce;
    ld->slot = 0;
    ld->dtype = k0->reduce.out_dtype;
    ld->strides[0] = out_n;
    r->out = k0->reduce.out;
    r->out.slot = 1;
    r->out.strides[0] = 0;
    for (int d = 0; d < k0->ndim; d++) {
        if (k0->reduce.axes & (1u << d)) continue;
        k->shape[k->ndim] = k0->shape[d];
        r->out.strides[k->ndim] = k0->reduce.out.strides[d];
        k->ndim++;
    }
    int64_t stride = 1;
    for (int d = k->ndim - 1; d >= 1; d--) {
        ld->strides[d] = stride;
        stride *= k->shape[d];
    }
    k->n_slots = 2;
    k->insts[0] = (nd_ir_inst){.op = ND_IR_LOAD, .dtype = k0->reduce.out_dtype, .a = 0, .b = -1, .c = -1};
    k->has_reduce = 1;
    r->kind = k0->reduce.kind;
    r->out_dtype = k0->reduce.out_dtype;
    r->axes = 1u;
    r->value = 0;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->hash = nd_kernel_hash(k);
    return k;
}

/* Appends instruction (op, dtype, a, b, c) to k at *n; its index. */
static int32_t put_inst(nd_kernel *k, int32_t *n, int op, nd_dtype dtype, int32_t a, int32_t b, int32_t c) {
    k->insts[*n] = (nd_ir_inst){.op = (uint8_t)op, .dtype = (uint8_t)dtype, .a = a, .b = b, .c = c, .d = -1};
    return (*n)++;
}

nd_kernel *nd_kernel_combine_arg_partials(const nd_kernel *k0, int64_t parts, int64_t out_n,
                                         const int64_t *index_base, const char *name) {
    const nd_dtype vdt = (nd_dtype)k0->insts[k0->reduce.value].dtype;
    const int fl = nd_dtype_is_float(vdt), mn = k0->reduce.kind == ND_REDUCE_ARGMIN;
    const nd_dtype odt = (nd_dtype)k0->reduce.out.dtype;
    const int32_t per = 4 + 3 + (fl ? 5 : 0);
    nd_kernel *k = kernel_alloc(0, (int32_t)(2 * parts), (int32_t)parts, (int32_t)(per * parts + 1), 1, 0);
    if (!k) return NULL;
    /* Axes: a unit axis (so that a reduction to one element has one),
     * then the kept axes of k0 in order. */
    k->ndim = 1;
    k->shape[0] = 1;
    nd_ir_store *st = &k->stores[0];
    st->at = k0->reduce.out;
    st->at.slot = 2;
    st->at.strides[0] = 0;
    for (int d = 0; d < k0->ndim; d++) {
        if (k0->reduce.axes & (1u << d)) continue;
        k->shape[k->ndim] = k0->shape[d];
        st->at.strides[k->ndim] = k0->reduce.out.strides[d];
        k->ndim++;
    }
    int64_t contig[ND_MAX_DIMS] = {0}, stride = 1;
    for (int d = k->ndim - 1; d >= 1; d--) {
        contig[d] = stride;
        stride *= k->shape[d];
    }
    int32_t n = 0, best_v = -1, best_i = -1;
    for (int64_t p = 0; p < parts; p++) {
        for (int w = 0; w < 2; w++) {
            nd_ir_access *ld = &k->loads[2 * p + w];
            ld->slot = w;
            ld->dtype = (uint8_t)(w ? ND_INT64 : vdt);
            ld->offset = p * out_n;
            memcpy(ld->strides, contig, sizeof contig);
        }
        k->indices[p].offset = index_base[p];
        int32_t v = put_inst(k, &n, ND_IR_LOAD, vdt, (int32_t)(2 * p), -1, -1);
        int32_t li = put_inst(k, &n, ND_IR_LOAD, ND_INT64, (int32_t)(2 * p + 1), -1, -1);
        int32_t base = put_inst(k, &n, ND_IR_INDEX, ND_INT64, (int32_t)p, -1, -1);
        int32_t gi = put_inst(k, &n, ND_OP_ADD, ND_INT64, li, base, -1);
        if (p == 0) {
            best_v = v, best_i = gi;
            continue;
        }
        /* A later part wins only when strictly better (equal values keep
         * the earlier, lower index) or when it holds the first NaN. */
        int32_t take = put_inst(k, &n, mn ? ND_OP_LT : ND_OP_GT, ND_BOOL, v, best_v, -1);
        if (fl) {
            int32_t nv = put_inst(k, &n, ND_OP_ISNAN, ND_BOOL, v, -1, -1);
            int32_t nb = put_inst(k, &n, ND_OP_ISNAN, ND_BOOL, best_v, -1, -1);
            int32_t keep = put_inst(k, &n, ND_OP_LOGICAL_NOT, ND_BOOL, nb, -1, -1);
            int32_t first = put_inst(k, &n, ND_OP_LOGICAL_AND, ND_BOOL, nv, keep, -1);
            take = put_inst(k, &n, ND_OP_LOGICAL_OR, ND_BOOL, take, first, -1);
        }
        best_v = put_inst(k, &n, ND_OP_WHERE, vdt, take, v, best_v);
        best_i = put_inst(k, &n, ND_OP_WHERE, ND_INT64, take, gi, best_i);
    }
    if (odt != ND_INT64) best_i = put_inst(k, &n, ND_OP_CAST, odt, best_i, -1, -1);
    k->n_insts = n;
    st->value = best_i;
    k->n_slots = 3;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->hash = nd_kernel_hash(k);
    return k;
}

nd_kernel *nd_kb_finish(nd_kernel_builder *kb, int32_t **plan_slots, int32_t **params) {
    nd_kernel *k = kernel_alloc(kb->n_params, kb->n_loads, kb->n_indices, kb->n_insts, kb->n_stores, kb->n_gathers);
    int32_t *ps = nd_malloc(sizeof(int32_t) * (size_t)(kb->n_slots + 1));
    int32_t *pp = nd_malloc(sizeof(int32_t) * (size_t)(kb->n_params + 1));
    if (!k || !ps || !pp) {
        free(k);
        free(ps);
        free(pp);
        return NULL;
    }
    k->ndim = kb->ndim;
    for (int j = 0; j < kb->ndim; j++) k->shape[j] = kb->shape[j];
    k->n_slots = kb->n_slots;
    k->has_reduce = kb->has_reduce;
    k->reduce = kb->reduce;
    copy_arrays(k, kb->loads, kb->indices, kb->stores, kb->insts, kb->param_dtypes, kb->gathers);
    if (kb->n_slots) memcpy(ps, kb->slots, sizeof(int32_t) * (size_t)kb->n_slots);
    if (kb->n_params) memcpy(pp, kb->params, sizeof(int32_t) * (size_t)kb->n_params);
    coalesce(k);
    name_kernel(k);
    k->hash = nd_kernel_hash(k);
    *plan_slots = ps;
    *params = pp;
    return k;
}
