/* Loop bodies (include/nd/body.h, common/body.h): nd_body_trace runs the
 * program's function once on placeholder arrays, recording into the real
 * graph through the ordinary entry points (so promotion, weak scalars and
 * broadcasting are exactly those of ops recorded one by one), reads the
 * template off the nodes it recorded, and takes them back. nd_body_call
 * records one MAP node that names the template.
 *
 * The trace holds the API lock from start to end, so the nodes recorded
 * meanwhile are the function's alone: those from the graph's length at
 * the start on. No flush may run in between (runtime.c: early flushes
 * wait, reads and syncs refuse), so they are all still there at the end,
 * and taking them back (nd_graph_drop_last, newest first) leaves the graph
 * and every array as they were, whether the trace succeeded or not. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/body.h"
#include "frontend/frontend.h"

nd_status nd_fe_trace_refuse_flush(void) {
    if (!nd_rt.trace_refused) nd_rt.trace_refused = nd_api_tls.traced_fn ? nd_api_tls.traced_fn : "a read";
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: %s reads values or waits for them inside the "
                        "body's function; a body may contain only elementwise ops (read results after "
                        "nd_body_call)", nd_rt.trace_refused);
}

typedef struct {
    const char *name;
    int n_in;
    nd_array *ph[ND_BODY_MAX_INPUTS]; /* the placeholders */
    uint32_t start;                   /* the graph's length when fn began */
    const nd_graph *g;
    int32_t *slot; /* per traced node (index - start): its entry or constant, -1 none */
    uint8_t *reach;
} tracer;

/* Why a node recorded by the body's function cannot be part of a body, or
 * NULL when it can (an elementwise map of nd's own ops, or a fill). */
static const char *not_elementwise(const nd_node *n) {
    switch ((nd_node_kind)n->kind) {
    case ND_NODE_FULL: return NULL;
    case ND_NODE_MAP:
        if (n->op < ND_NUM_ELEMENTWISE_OPS) return n->n_inputs <= 3 ? NULL : "has too many operands";
        if (n->op == ND_GATHER_MAP_OP) return "gathers by index arrays";
        if (n->op == ND_BODY_MAP_OP) return "calls another body (call its function instead)";
        return "calls a user function (nd_ufunc_call)";
    case ND_NODE_ARANGE: return "makes a range";
    case ND_NODE_RANDOM: return "draws random numbers";
    case ND_NODE_REDUCE: return "is a reduction";
    case ND_NODE_MATMUL: return "is a matrix product";
    case ND_NODE_STORE: return "writes into an array";
    case ND_NODE_USER: return "runs a library routine or a user kernel";
    default: return "is not elementwise";
    }
}

/* Whether ref r of node c reads all of a contiguous value of shape
 * (nd, shape) broadcast to c's shape, as an op reads a whole array
 * (strides of axes of extent 1 do not matter). Else it reads a view. */
static int whole_value(const nd_node *c, const nd_ref *r, int nd, const int64_t *shape) {
    if (r->offset != 0 || nd > c->ndim) return 0;
    int64_t cs[ND_MAX_DIMS];
    nd_contiguous_strides(nd, shape, cs);
    const int off = c->ndim - nd;
    for (int i = 0; i < off; i++)
        if (c->shape[i] != 1 && r->strides[i] != 0) return 0;
    for (int j = 0; j < nd; j++) {
        int64_t want = c->shape[off + j];
        if (want == 1) continue;
        if (shape[j] == want ? r->strides[off + j] != cs[j] : shape[j] != 1 || r->strides[off + j] != 0) return 0;
    }
    return 1;
}

static int placeholder_of(const tracer *T, const nd_buffer *b) {
    for (int k = 0; k < T->n_in; k++)
        if (T->ph[k]->buf == b) return k;
    return -1;
}

static nd_status trace_error(const tracer *T, const nd_node *n, const char *why) {
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: body '%s': %s %s; a body may contain only "
                        "elementwise ops of its inputs (do it outside the body, before or after "
                        "nd_body_call)", T->name, n->label ? n->label : "an operation", why);
}

/* The traced node that wrote what r reads (its index), -1 for a
 * placeholder; -2 with the error set for anything else. */
static int64_t ref_source(const tracer *T, const nd_node *c, const nd_ref *r) {
    int64_t w = nd_buffer_writer_of(r->buf, r->version);
    if (w >= (int64_t)T->start) {
        const nd_node *p = T->g->nodes[w];
        if (r->dtype == p->dtype && whole_value(c, r, p->ndim, p->shape)) return w;
        trace_error(T, c, "reads a view (a slice, reshape, transpose, broadcast or part) of a value computed in "
                          "the body");
        return -2;
    }
    int k = placeholder_of(T, r->buf);
    if (k >= 0 && w < 0) {
        const nd_array *a = T->ph[k];
        if (r->dtype == a->dtype && whole_value(c, r, a->ndim, a->shape)) return -1;
        nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: body '%s': %s reads a view (a slice, reshape, "
                     "transpose, broadcast or part) of input %d; a body reads its inputs whole (pass the "
                     "view as the input)", T->name, c->label ? c->label : "an operation", k);
        return -2;
    }
    nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: body '%s': %s reads an array that is not made from the "
                 "body's inputs (an array from outside the function: pass it as an input)", T->name,
                 c->label ? c->label : "an operation");
    return -2;
}

/* Marks what the result needs (reach), checking every read on the way. */
static nd_status mark_reachable(tracer *T, uint32_t from) {
    uint32_t n = T->g->n_nodes - T->start, top = 0;
    uint32_t *stack = malloc(sizeof(uint32_t) * (n ? n : 1));
    if (!stack) return nd_error_set(ND_ERR_OOM, "nd_body_trace: out of host memory");
    stack[top++] = from;
    T->reach[from - T->start] = 1;
    nd_status st = ND_OK;
    while (top > 0 && st == ND_OK) {
        const nd_node *c = T->g->nodes[stack[--top]];
        for (int k = 0; k < c->n_inputs && st == ND_OK; k++) {
            const nd_ref *r = &c->inputs[k];
            if (!r->buf) continue;
            int64_t w = ref_source(T, c, r);
            if (w == -2) st = nd_last_status();
            else if (w >= 0 && !T->reach[w - T->start]) {
                T->reach[w - T->start] = 1;
                stack[top++] = (uint32_t)w;
            }
        }
    }
    free(stack);
    return st;
}

static nd_body_ref make_ref(nd_body *b, tracer *T, const nd_ref *r) {
    nd_body_ref out = {0, r->dtype, 0, 0};
    if (!r->buf) {
        out.kind = ND_BODY_REF_CONST;
        out.index = (uint32_t)b->n_consts;
        b->consts[b->n_consts++] = r->value;
        return out;
    }
    int64_t w = nd_buffer_writer_of(r->buf, r->version);
    if (w < (int64_t)T->start) {
        out.kind = ND_BODY_REF_INPUT;
        out.index = (uint32_t)placeholder_of(T, r->buf);
        return out;
    }
    const nd_node *p = T->g->nodes[w];
    out.kind = p->kind == ND_NODE_FULL ? ND_BODY_REF_FULL : ND_BODY_REF_ENTRY;
    out.index = (uint32_t)T->slot[w - T->start];
    return out;
}

/* The template of what the result needs, read off the traced nodes. */
static nd_body *build(tracer *T, const nd_array *out) {
    const nd_graph *g = T->g;
    const uint32_t n = g->n_nodes > T->start ? g->n_nodes - T->start : 0;
    /* Whatever the function recorded must be elementwise, needed or not:
     * a write into an outside array would be taken back with the rest. */
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *c = g->nodes[T->start + i];
        if (c->kind == ND_NODE_GONE) continue;
        const char *why = not_elementwise(c);
        if (why) {
            trace_error(T, c, why);
            return NULL;
        }
    }
    if (out->weak) {
        nd_error_set(ND_ERR_ARG, "nd_body_trace: body '%s': the function returned a Python scalar "
                     "(nd_scalar); a body's result is an array made from its inputs", T->name);
        return NULL;
    }
    /* The result: a traced value (whole), or an input as it is. */
    int64_t w = nd_buffer_writer_of(out->buf, out->buf->version);
    int in_k = placeholder_of(T, out->buf);
    int64_t cs[ND_MAX_DIMS];
    nd_contiguous_strides(out->ndim, out->shape, cs);
    int whole = out->offset == 0;
    for (int k = 0; k < out->ndim; k++) whole &= out->shape[k] == 1 || out->strides[k] == cs[k];
    if (w >= (int64_t)T->start) {
        const nd_node *p = g->nodes[w];
        whole &= p->ndim == out->ndim && !memcmp(p->shape, out->shape, sizeof(int64_t) * out->ndim);
    } else if (in_k >= 0 && w < 0) {
        whole &= T->ph[in_k]->ndim == out->ndim &&
                 !memcmp(T->ph[in_k]->shape, out->shape, sizeof(int64_t) * out->ndim);
    } else {
        nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: body '%s': the function returned an array that is "
                     "not made from the body's inputs (an array from outside it)", T->name);
        return NULL;
    }
    if (!whole) {
        nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: body '%s': the function returned a view (a slice, "
                     "reshape, transpose or broadcast); a body's result is a whole value (return the "
                     "value, view the result of nd_body_call)", T->name);
        return NULL;
    }
    /* Every input must broadcast to the result. */
    for (int k = 0; k < T->n_in; k++) {
        const nd_array *a = T->ph[k];
        int ok = a->ndim <= out->ndim;
        for (int j = 0; ok && j < a->ndim; j++) {
            int64_t d = a->shape[j], o = out->shape[out->ndim - a->ndim + j];
            ok = d == o || d == 1;
        }
        if (!ok) {
            char s1[200], s2[200];
            nd_error_set(ND_ERR_ARG, "nd_body_trace: body '%s': input %d's shape %s does not broadcast to the "
                         "result's shape %s (a body's inputs broadcast to its result)", T->name, k,
                         nd_format_shape(s1, sizeof s1, a->ndim, a->shape),
                         nd_format_shape(s2, sizeof s2, out->ndim, out->shape));
            return NULL;
        }
    }
    nd_body *b = calloc(1, sizeof *b);
    T->slot = malloc(sizeof(int32_t) * (n ? n : 1));
    T->reach = calloc(n ? n : 1, 1);
    if (!b || !T->slot || !T->reach) goto oom;
    b->in_shape = malloc(sizeof(*b->in_shape) * (size_t)T->n_in);
    if (!b->in_shape) goto oom;
    if (w >= (int64_t)T->start && mark_reachable(T, (uint32_t)w) != ND_OK) goto fail;
    /* Numbers: entries in record order; constants, the fills' first, then
     * the refs' in the entries' order (only the walk and the builder read
     * them, both through the template). */
    int32_t n_entries = 0, fills = 0, n_consts = 0;
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *c = g->nodes[T->start + i];
        T->slot[i] = -1;
        if (!T->reach[i]) continue;
        if (c->kind == ND_NODE_FULL) {
            T->slot[i] = fills++;
        } else {
            T->slot[i] = n_entries++;
            for (int k = 0; k < c->n_inputs; k++) n_consts += c->inputs[k].buf == NULL;
        }
    }
    b->entries = malloc(sizeof *b->entries * (size_t)(n_entries ? n_entries : 1));
    b->consts = malloc(sizeof *b->consts * (size_t)(fills + n_consts ? fills + n_consts : 1));
    if (!b->entries || !b->consts) goto oom;
    b->n_consts = fills;
    for (uint32_t i = 0; i < n; i++) {
        const nd_node *c = g->nodes[T->start + i];
        if (!T->reach[i]) continue;
        if (c->kind == ND_NODE_FULL) {
            b->consts[T->slot[i]] = c->params[0];
            continue;
        }
        nd_body_entry *en = &b->entries[b->n_entries++];
        memset(en, 0, sizeof *en);
        en->op = c->op;
        en->dtype = c->dtype;
        en->cdtype = c->cdtype;
        en->n_in = c->n_inputs;
        for (int k = 0; k < c->n_inputs; k++) en->in[k] = make_ref(b, T, &c->inputs[k]);
    }
    memcpy(b->name, T->name, strlen(T->name) + 1);
    b->n_in = T->n_in;
    for (int k = 0; k < T->n_in; k++) {
        b->in_dtype[k] = (uint8_t)T->ph[k]->dtype;
        b->in_ndim[k] = T->ph[k]->ndim;
        memcpy(b->in_shape[k], T->ph[k]->shape, sizeof(int64_t) * ND_MAX_DIMS);
        b->in_whole[k] = T->ph[k]->ndim == out->ndim &&
                         !memcmp(T->ph[k]->shape, out->shape, sizeof(int64_t) * out->ndim);
    }
    b->out_dtype = (uint8_t)out->dtype;
    b->out_ndim = out->ndim;
    b->out_nbytes = (size_t)out->buf->nbytes;
    memcpy(b->out_shape, out->shape, sizeof(int64_t) * out->ndim);
    if (w >= (int64_t)T->start) {
        const nd_node *p = g->nodes[w];
        b->out = (nd_body_ref){(uint8_t)(p->kind == ND_NODE_FULL ? ND_BODY_REF_FULL : ND_BODY_REF_ENTRY), p->dtype,
                               0, (uint32_t)T->slot[w - T->start]};
    } else {
        b->out = (nd_body_ref){ND_BODY_REF_INPUT, (uint8_t)out->dtype, 0, (uint32_t)in_k};
    }
    b->magic = ND_BODY_MAGIC;
    b->refs = 1;
    nd_body_seal(b);
    nd_logf(2, "nd_body_trace: body '%s': %d ops, %d constants, %d inputs", b->name, (int)b->n_entries,
            (int)b->n_consts, b->n_in);
    return b;
oom:
    nd_error_set(ND_ERR_OOM, "nd_body_trace: out of host memory for body '%s'", T->name);
fail:
    if (b) {
        free(b->in_shape);
        free(b->entries);
        free(b->consts);
        free(b);
    }
    return NULL;
}

static int bad_name(const char *name) {
    size_t len = strlen(name);
    if (len < 1 || len > 63) return 1;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '_') return 1;
    return 0;
}

nd_body *nd_body_trace(const char *name, int n_in, nd_array *const *like, nd_body_fn fn, void *ctx) {
    ND_API_GUARD();
    const char *f = "nd_body_trace";
    if (!name || !fn || !like) {
        nd_error_null_input(f, !name ? "name" : !fn ? "fn" : "like");
        return NULL;
    }
    if (bad_name(name)) {
        nd_error_set(ND_ERR_ARG, "%s: name \"%.80s\" is not 1-63 characters of letters, digits and '_'", f, name);
        return NULL;
    }
    if (n_in < 1 || n_in > ND_BODY_MAX_INPUTS) {
        nd_error_set(ND_ERR_ARG, "%s: body '%s': n_in = %d is out of range (1..%d)", f, name, n_in,
                     ND_BODY_MAX_INPUTS);
        return NULL;
    }
    for (int k = 0; k < n_in; k++) {
        char arg[24];
        snprintf(arg, sizeof arg, "like[%d]", k);
        if (nd_fe_arg(f, arg, like[k])) return NULL;
        if (like[k]->weak) {
            nd_error_set(ND_ERR_ARG, "%s: body '%s': like[%d] is a Python scalar (nd_scalar); a body's inputs "
                         "are arrays (make a 0-d array with nd_full or nd_asarray)", f, name, k);
            return NULL;
        }
    }
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (nd_rt.tracing) {
        nd_error_set(ND_ERR_STATE, "%s: body '%s' is traced inside the function of another body's trace "
                     "(trace bodies one at a time)", f, name);
        return NULL;
    }
    tracer T;
    memset(&T, 0, sizeof T);
    T.name = name;
    T.n_in = n_in;
    T.g = &nd_rt.graph;
    for (int k = 0; k < n_in; k++) {
        T.ph[k] = nd_fe_empty(f, like[k]->dtype, like[k]->ndim, like[k]->shape);
        if (!T.ph[k]) {
            for (int j = 0; j < k; j++) nd_fe_release(T.ph[j]);
            return NULL;
        }
    }
    const nd_stats before = nd_rt.stats;
    T.start = nd_rt.graph.n_nodes;
    const int32_t depth = nd_fe_scope_depth();
    nd_scope_begin();
    nd_rt.tracing = 1;
    nd_rt.trace_refused = NULL;
    nd_api_tls.trace_depth = nd_api_tls.depth;
    nd_api_tls.traced_fn = NULL;
    const uint32_t errs = nd_api_tls.err_gen;
    nd_array *out = fn(T.ph, ctx);
    nd_api_tls.trace_depth = 0;
    nd_api_tls.traced_fn = NULL;
    nd_rt.tracing = 0;
    nd_body *b = NULL;
    if (nd_rt.trace_refused) {
        /* the refusal's error stands (the function may have gone on) */
        nd_error_set(ND_ERR_UNSUPPORTED, "nd_body_trace: body '%s': %s reads values or waits for them; a body may "
                     "contain only elementwise ops of its inputs (read results after nd_body_call)", name,
                     nd_rt.trace_refused);
    } else if (!out) {
        if (nd_api_tls.err_gen == errs)
            nd_error_set(ND_ERR_ARG, "nd_body_trace: body '%s': the function returned NULL", name);
    } else if (out->state != ND_ARRAY_LIVE) {
        nd_error_set(ND_ERR_ARG, "nd_body_trace: body '%s': the function returned a freed handle", name);
    } else {
        b = build(&T, out);
    }
    free(T.slot);
    free(T.reach);
    /* Take back what the function recorded, newest first. */
    nd_graph *g = &nd_rt.graph;
    while (g->n_nodes > T.start) {
        nd_node *n = g->nodes[g->n_nodes - 1];
        if (n->kind == ND_NODE_GONE) {
            g->n_nodes--;
            g->n_gone--;
        } else {
            nd_graph_drop_last(g);
        }
    }
    /* The function's result: a reference it hands over when no scope holds
     * it (nd_retain(in[0])); else the trace's scope releases it. */
    int handed = out && out->state == ND_ARRAY_LIVE && out->scope_slot < 0;
    for (int k = 0; handed && k < n_in; k++)
        if (out == T.ph[k] && out->refs == 1) handed = 0; /* an input returned without nd_retain */
    while (nd_fe_scope_depth() > depth) nd_scope_end(); /* the function's own, if it left one open */
    if (handed) nd_fe_release(out);
    for (int k = 0; k < n_in; k++) nd_fe_release(T.ph[k]);
    nd_rt.stats.nodes_recorded = before.nodes_recorded;
    nd_rt.stats.nodes_dropped = before.nodes_dropped;
    return b;
}

static int check_body(const char *fn, const nd_body *b) {
    if (!b) {
        nd_error_null_input(fn, "b");
        return -1;
    }
    if (b->magic != ND_BODY_MAGIC || b->freed) {
        nd_error_set(ND_ERR_ARG, "%s: b (%p) is not a live nd_body (freed with nd_body_free, or never one)", fn,
                     (const void *)b);
        return -1;
    }
    return 0;
}

/* Off the call's path: its two shape buffers would be its stack frame. */
static __attribute__((noinline, cold)) void call_mismatch(const char *fn, const nd_body *b, int k,
                                                          const nd_array *a) {
    char s1[200], s2[200];
    if (a->weak)
        nd_error_set(ND_ERR_ARG, "%s: body '%s': in[%d] is a Python scalar (nd_scalar); pass an array "
                     "of the traced shape and dtype", fn, b->name, k);
    else
        nd_error_set(a->dtype != b->in_dtype[k] ? ND_ERR_DTYPE : ND_ERR_SHAPE,
                     "%s: body '%s': in[%d] is %s %s but the body was traced with %s %s (trace "
                     "another body for these inputs)", fn, b->name, k,
                     nd_format_shape(s1, sizeof s1, a->ndim, a->shape), nd_dtype_name(a->dtype),
                     nd_format_shape(s2, sizeof s2, b->in_ndim[k], b->in_shape[k]),
                     nd_dtype_name((nd_dtype)b->in_dtype[k]));
}

nd_array *nd_body_call(const nd_body *cb, nd_array *const *in) {
    ND_API_GUARD();
    const char *fn = "nd_body_call";
    if (check_body(fn, cb)) return NULL;
    nd_body *b = (nd_body *)cb; /* immutable: only its count changes */
    if (!in) {
        nd_error_null_input(fn, "in");
        return NULL;
    }
    static const char *const names[8] = {"in[0]", "in[1]", "in[2]", "in[3]", "in[4]", "in[5]", "in[6]", "in[7]"};
    const int n = b->n_in;
    int same = 1; /* every input has the result's shape: its strides are the ref's */
    for (int k = 0; k < n; k++) {
        const nd_array *a = in[k];
        if (nd_fe_arg(fn, k < 8 ? names[k] : "in[k]", a)) return NULL;
        if (__builtin_expect(!nd_fe_body_input_fits(b, k, a), 0)) {
            call_mismatch(fn, b, k, a);
            return NULL;
        }
        same &= b->in_whole[k];
    }
    if (nd_runtime_ensure() != ND_OK) return NULL;
    return nd_runtime_track(nd_fe_body_node(fn, b, in, same));
}

/* NULL b answers NULL or -1 quietly (body.h); a freed one is an error. */
static int live_or_null(const char *fn, const nd_body *b) {
    return !b ? -1 : check_body(fn, b);
}

const char *nd_body_name(const nd_body *b) {
    ND_API_GUARD(); /* under the lock: another thread may free b */
    return live_or_null("nd_body_name", b) ? NULL : b->name;
}

int nd_body_n_inputs(const nd_body *b) {
    ND_API_GUARD();
    return live_or_null("nd_body_n_inputs", b) ? -1 : b->n_in;
}

void nd_body_free(nd_body *b) {
    ND_API_GUARD();
    /* A second nd_body_free finds freed set (its struct waits in the
     * runtime's ring once the last pending call has run: common/body.h). */
    if (!b || b->magic != ND_BODY_MAGIC || b->freed) return;
    b->freed = 1; /* pending calls keep it, but the program may not call it again */
    nd_body_unref(b);
}
