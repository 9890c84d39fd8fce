/* Graphviz export. The picture answers "what did my program record, and what
 * will run": each API call is a node, each generated kernel a cluster around
 * the calls it computes, and what stays in memory is drawn bold. A loop
 * recorded into one flush (50 stencil sweeps) is drawn once, in a cluster
 * that says how many times it repeats (dot_fold.h), with the edges that
 * carry values from one iteration to the next dashed: the picture of 50
 * sweeps is the picture of one. The plan view (nd_plan_write_dot) draws
 * the steps instead: kernels, library calls and copies, one cluster per
 * stream, edges where a step reads what another wrote. */
#include "scheduler/dot_export.h"
#include "common/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/step_kinds.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/names.h"
#include "common/ufunc_loop.h"
#include "scheduler/dot_fold.h"
#include "scheduler/flush_walk.h"

/* One border colour per plan stream (compute streams, then the copy
 * streams host->device and device->host). */
#define ND_DOT_STREAM_COLOURS 6
static const char *const STREAM_COLOURS[ND_DOT_STREAM_COLOURS] = {"#1f77b4", "#9467bd", "#8c564b",
                                                                  "#e377c2", "#e6550d", "#31a354"};

static const char *stream_colour(int32_t stream) {
    return STREAM_COLOURS[(stream < 0 ? 0 : stream) % ND_DOT_STREAM_COLOURS];
}

static void shape_text(char *buf, size_t cap, int ndim, const int64_t *shape) {
    nd_format_shape(buf, cap, ndim, shape);
}

static const char *op_text(const nd_node *n) {
    switch (n->kind) {
    case ND_NODE_MAP:
        if (n->op == ND_UFUNC_MAP_OP) {
            const nd_ufunc_loop *l = nd_ufunc_loop_get(n->u.ufunc.loop);
            return l ? l->name : "ufunc";
        }
        if (n->op == ND_GATHER_MAP_OP) return "take";
        if (n->op == ND_BODY_MAP_OP) return n->u.body.body->name;
        return nd_op_label((nd_op)n->op);
    case ND_NODE_REDUCE: return nd_reduce_label((nd_reduce_kind)n->op);
    case ND_NODE_RANDOM:
        return n->op == ND_RANDOM_NORMAL ? "normal" : n->op == ND_RANDOM_INTEGERS || n->op == ND_RANDOM_INTEGERS_PAIRS ? "integers" : "uniform";
    default: return nd_node_kind_label((nd_node_kind)n->kind);
    }
}


static int view_is_plain(const nd_ref *r) {
    int64_t s = 1;
    if (r->offset != 0) return 0;
    for (int k = r->ndim - 1; k >= 0; k--) {
        if (r->shape[k] != 1 && r->strides[k] != s) return 0;
        s *= r->shape[k];
    }
    return 1;
}

static void view_text(char *buf, size_t cap, const nd_ref *r) {
    int len = snprintf(buf, cap, "view +%lld [", (long long)r->offset);
    for (int k = 0; k < r->ndim && len > 0 && (size_t)len < cap; k++)
        len += snprintf(buf + len, cap - (size_t)len, "%s%lld", k ? "," : "",
                        (long long)r->strides[k]);
    if (len > 0 && (size_t)len < cap) snprintf(buf + len, cap - (size_t)len, "]");
}

/* ------------------------------------------------------------ edges once */

/* Edges of a folded picture repeat once per copy: each is written once. */
typedef struct {
    uint64_t *keys; /* 0 = empty */
    size_t cap, n;
} edge_set;

static int edge_new(edge_set *s, uint64_t key) {
    key |= 1; /* never 0 */
    if ((s->n + 1) * 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        uint64_t *k = nd_calloc(cap, sizeof *k);
        if (!k) return 1; /* without memory: drawn again rather than lost */
        for (size_t i = 0; i < s->cap; i++)
            if (s->keys[i]) {
                size_t j = (size_t)nd_hash_u64(ND_HASH_SEED, s->keys[i]) & (cap - 1);
                while (k[j]) j = (j + 1) & (cap - 1);
                k[j] = s->keys[i];
            }
        free(s->keys);
        s->keys = k;
        s->cap = cap;
    }
    size_t j = (size_t)nd_hash_u64(ND_HASH_SEED, key) & (s->cap - 1);
    while (s->keys[j]) {
        if (s->keys[j] == key) return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[j] = key;
    s->n++;
    return 1;
}

static uint64_t edge_key(char from_kind, int64_t from, char to_kind, int64_t to, int style) {
    return nd_hash_u64(nd_hash_u64(nd_hash_u64(ND_HASH_SEED, (uint64_t)from_kind << 56 ^ (uint64_t)from),
                                   (uint64_t)to_kind << 56 ^ (uint64_t)to),
                       (uint64_t)style);
}

/* ------------------------------------------------------------ graph fold */

static uint64_t node_sig(const nd_node *n) {
    uint64_t h = nd_hash_u64(ND_HASH_SEED, (uint64_t)n->kind | (uint64_t)n->op << 8 | (uint64_t)n->dtype << 16 |
                                               (uint64_t)n->cdtype << 24 | (uint64_t)n->n_inputs << 32 |
                                               (uint64_t)n->ndim << 40);
    for (int k = 0; k < n->ndim; k++) h = nd_hash_u64(h, (uint64_t)n->shape[k]);
    if (n->kind == ND_NODE_STORE) {
        h = nd_hash_u64(h, (uint64_t)n->u.store.offset);
        for (int k = 0; k < n->ndim; k++) h = nd_hash_u64(h, (uint64_t)n->u.store.strides[k]);
    }
    if (n->kind == ND_NODE_REDUCE) h = nd_hash_u64(h, n->u.reduce.axes);
    for (int k = 0; k < n->n_inputs; k++) {
        const nd_ref *r = &n->inputs[k];
        h = nd_hash_u64(h, (uint64_t)r->dtype << 8 | (r->buf != NULL));
        if (r->buf) h = nd_hash_u64(h, (uint64_t)r->offset);
    }
    return h;
}

static int same_view(const nd_ref *a, const nd_ref *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim || (a->buf == NULL) != (b->buf == NULL)) return 0;
    if (!a->buf) return 1;
    if (a->offset != b->offset) return 0;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k] || a->strides[k] != b->strides[k]) return 0;
    return 1;
}

/* Node j = i + p repeats node i: same op and views, and each input comes
 * from the same place shifted by p (the previous iteration's value), or
 * is the same value (loop-invariant), or for i comes from before where
 * j's comes from (the first iteration reads what the loop started with). */
static int nodes_repeat(int32_t i, int32_t j, int32_t p, void *ctx) {
    const nd_graph *g = ctx;
    const nd_node *a = g->nodes[i], *b = g->nodes[j];
    for (int k = 0; k < a->n_inputs; k++) {
        const nd_ref *x = &a->inputs[k], *y = &b->inputs[k];
        if (!same_view(x, y)) return 0;
        if (!x->buf) continue;
        int64_t wx = nd_buffer_writer_of(x->buf, x->version), wy = nd_buffer_writer_of(y->buf, y->version);
        if (wy >= 0 && wx >= 0 && wy - wx == p) continue;
        if (x->buf == y->buf && wx == wy) continue;
        if (wy >= 0 && wx <= wy - p) continue;
        return 0;
    }
    /* In place into the same buffer, or each into a new one. */
    return a->out == b->out || (a->out_version == 1 && b->out_version == 1);
}

static nd_fold fold_graph(const nd_graph *g) {
    nd_fold none = {0, 0, 0};
    if (g->n_nodes < 6) return none;
    uint64_t *sig = nd_malloc(sizeof *sig * g->n_nodes);
    if (!sig) return none;
    for (uint32_t i = 0; i < g->n_nodes; i++) sig[i] = node_sig(g->nodes[i]);
    nd_fold f = nd_fold_find((int32_t)g->n_nodes, sig, nodes_repeat, (void *)g, 12);
    free(sig);
    return f;
}

/* ------------------------------------------------------------ graph view */

/* What the picture draws: the fold (if any), where its frame goes, and the
 * name every drawn node of a step shares (said once, in the cluster's
 * label, instead of on each node). */
typedef struct {
    const nd_graph *g;
    const nd_plan *plan;
    nd_fold fo;
    /* The frame "repeated xN" holds whole steps (-1), or sits inside the
     * one step that computes the loop together with calls around it (a
     * loop fused into one kernel). */
    int32_t frame_step;
    const char **step_name; /* per step: the name its drawn nodes share, or NULL */
} picture;

/* Which graph node stands for node i in the picture, and whether it is
 * drawn (not a later copy of the loop body). */
static int drawn(const nd_fold *fo, uint32_t i) { return nd_fold_rep(fo, (int32_t)i) == (int32_t)i; }

static int in_frame(const picture *pic, uint32_t i) { return pic->fo.reps && nd_fold_in_body(&pic->fo, (int32_t)i); }

static void write_node(FILE *f, const picture *pic, uint32_t i) {
    const nd_graph *g = pic->g;
    const nd_plan *plan = pic->plan;
    const nd_node *n = g->nodes[i];
    char shp[200];
    shape_text(shp, sizeof shp, n->ndim, n->shape);
    int dropped = plan->node_step[i] < 0;
    int mat = plan->node_materialised && plan->node_materialised[i];
    const char *api = n->label ? n->label : op_text(n);
    const char *op = op_text(n);
    /* "nd_mul" says "mul": the op is written only when it adds something. */
    int same_op = strncmp(api, "nd_", 3) == 0 && strncmp(api + 3, op, strlen(op)) == 0 &&
                  (api[3 + strlen(op)] == '\0' || api[3 + strlen(op)] == ' ');
    const char *name = nd_node_name(n);
    if (name && !dropped && pic->step_name[plan->node_step[i]] == name) name = NULL; /* in the cluster's label */
    const char *fill = dropped ? "#eeeeee"
                       : n->kind == ND_NODE_MATMUL ? "#c7e9c0"
                       : n->kind == ND_NODE_STORE  ? "#fdd0a2"
                       : n->kind == ND_NODE_REDUCE ? "#dadaeb"
                                                   : "#ffffff";
    fprintf(f, "    n%u [label=\"%s%s%s\\n%s%s%s %s\", fillcolor=\"%s\"%s%s];\n", i, name ? name : "", name ? "\\n" : "",
            api, same_op ? "" : op, same_op ? "" : " ", shp, nd_dtype_name((nd_dtype)n->dtype), fill,
            dropped ? ", style=\"rounded,dashed,filled\", fontcolor=\"#888888\"" : "",
            mat && !dropped ? ", penwidth=2.5" : "");
}

/* A step's place: 0 not drawn (all its nodes are later copies), 1 drawn
 * outside the frame, 2 inside it. */
static int step_place(const picture *pic, int32_t s) {
    const nd_graph *g = pic->g;
    const nd_plan *plan = pic->plan;
    const nd_fold *fo = &pic->fo;
    const nd_step *st = &plan->steps[s];
    int any = 0, all_body = 1;
    for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes; i++) {
        if (plan->node_step[i] != s || !drawn(fo, i)) continue;
        any = 1;
        if (!nd_fold_in_body(fo, (int32_t)i)) all_body = 0;
    }
    if (!any) {
        /* Inserted by the scheduler: drawn where the node it serves is; a
         * fill before a chain of stores runs once, outside the frame. */
        if (st->kind != ND_STEP_KERNEL) return 0;
        if (st->first_node < 0) return 1;
        if (!drawn(fo, (uint32_t)st->first_node)) return 0;
        int before = s < plan->node_step[st->first_node];
        return !before && pic->frame_step < 0 && in_frame(pic, (uint32_t)st->first_node) ? 2 : 1;
    }
    return all_body && fo->reps && pic->frame_step < 0 ? 2 : 1;
}

static void open_frame(FILE *f, const nd_fold *fo) {
    fprintf(f,
            "  subgraph cluster_loop {\n    label=\"repeated x%d: calls %d..%d drawn once (%d calls each "
            "time)\"; style=\"rounded,bold\"; color=\"#3182bd\"; fontname=\"Helvetica-Bold\"; fontsize=14; "
            "fontcolor=\"#3182bd\";\n",
            fo->reps, fo->start, fo->start + fo->period - 1, fo->period);
}

static void write_step_cluster(FILE *f, const picture *pic, int32_t s) {
    const nd_graph *g = pic->g;
    const nd_plan *plan = pic->plan;
    const nd_step *st = &plan->steps[s];
    const char *colour = stream_colour(st->stream);
    const char *name = pic->step_name[s];
    char label[112];
    nd_step_label(st, label, sizeof label);
    switch (nd_step_category(st)) {
    case ND_PROFILE_COPY: return; /* drawn apart */
    case ND_PROFILE_KERNEL:
        /* The kernel first (what tools and tests look for), then whose. */
        fprintf(f, "  subgraph cluster_s%d {\n    label=\"%s %d: %s%s%s", s, nd_step_kinds[st->kind].name, s, label,
                name ? "\\n" : "", name ? name : "");
        if (st->kind == ND_STEP_KERNEL) {
            char shp[200];
            shape_text(shp, sizeof shp, st->kernel->ndim, st->kernel->shape);
            fprintf(f, "\\nspace %s, %d ops", shp, st->kernel->n_insts);
        }
        fprintf(f,
                ", stream %d\"; style=\"rounded,filled\"; fillcolor=\"#deebf7\"; color=\"%s\"; "
                "fontname=\"Helvetica\"; fontsize=10;\n",
                st->stream, colour);
        break;
    case ND_PROFILE_LIBRARY:
        fprintf(f,
                "  subgraph cluster_s%d {\n    label=\"library call %d: %s%s%s\"; "
                "style=\"rounded,filled\"; fillcolor=\"#e5f5e0\"; color=\"%s\"; "
                "fontname=\"Helvetica\"; fontsize=10;\n",
                s, s, label, name ? "\\n" : "", name ? name : "", colour);
        break;
    }
    int members = 0;
    for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes; i++)
        if (plan->node_step[i] == s && drawn(&pic->fo, i) && !(pic->frame_step == s && in_frame(pic, i))) {
            write_node(f, pic, i);
            members++;
        }
    if (pic->frame_step == s) {
        open_frame(f, &pic->fo);
        for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes; i++)
            if (plan->node_step[i] == s && drawn(&pic->fo, i) && in_frame(pic, i)) {
                write_node(f, pic, i);
                members++;
            }
        fprintf(f, "  }\n");
    }
    /* A kernel the scheduler added on its own (the second half of a
     * store that needed a temporary) still gets a visible node. */
    if (!members && st->kind == ND_STEP_KERNEL)
        fprintf(f, "    k%d [label=\"%s\\n(inserted by the scheduler)\", fillcolor=\"#fdd0a2\"];\n", s,
                st->kernel->name);
    fprintf(f, "  }\n");
}

/* Where the frame goes (picture.frame_step), or no fold when the loop's
 * calls are spread over steps that also compute calls outside it (then no
 * frame can hold them). */
static void place_frame(picture *pic) {
    const nd_plan *plan = pic->plan;
    pic->frame_step = -1;
    if (!pic->fo.reps) return;
    int32_t shared = -1, whole = 0;
    for (int32_t i = pic->fo.start; i < pic->fo.start + pic->fo.period && i < plan->n_nodes; i++) {
        int32_t s = plan->node_step[i];
        if (s < 0) continue;
        /* Does step s compute calls outside the body (in the drawing)? */
        int outside = 0;
        for (int32_t j = 0; j < plan->n_nodes && !outside; j++)
            outside = plan->node_step[j] == s && drawn(&pic->fo, (uint32_t)j) && !nd_fold_in_body(&pic->fo, j);
        if (!outside) {
            whole = 1;
        } else if (shared < 0 || shared == s) {
            shared = s;
        } else {
            shared = -2;
        }
    }
    if (shared == -1) return;                      /* whole steps: the frame holds them */
    if (shared >= 0 && !whole) pic->frame_step = shared; /* one step around it */
    else pic->fo.reps = 0;                         /* no frame fits: drawn unfolded */
}

/* The name most drawn nodes of step s share (Boyer-Moore's majority vote),
 * said once on the cluster; a node called otherwise ("pricing/call" in a
 * "pricing" kernel) keeps its own. NULL when no name has a majority. */
static const char *shared_name(const picture *pic, int32_t s) {
    const char *cand = NULL;
    int64_t votes = 0, members = 0, agree = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < pic->g->n_nodes && (int32_t)i < pic->plan->n_nodes; i++) {
            if (pic->plan->node_step[i] != s || !drawn(&pic->fo, i)) continue;
            const char *n = nd_node_name(pic->g->nodes[i]);
            if (pass == 1) {
                members++;
                agree += n == cand;
            } else if (votes == 0) {
                cand = n, votes = 1;
            } else {
                votes += n == cand ? 1 : -1;
            }
        }
    return cand && 2 * agree > members ? cand : NULL;
}

/* Edges from one node (or buffer) to another, once each: a later copy of
 * the loop body maps to the first, and a value it carries from one copy
 * to the next is a dashed "next iteration" edge. */
static void write_edge(FILE *f, edge_set *seen, const nd_fold *fo, int64_t w, uint32_t i, const char *label,
                       const char *extra) {
    int32_t ri = nd_fold_rep(fo, (int32_t)i);
    int32_t ci = nd_fold_copy(fo, (int32_t)i);
    if (w < 0) return;
    int32_t rw = nd_fold_rep(fo, (int32_t)w), cw = nd_fold_copy(fo, (int32_t)w);
    int carried = fo->reps && cw >= 0 && cw < fo->reps && ci >= 0 && ci < fo->reps && cw < ci;
    int after = fo->reps && cw >= 0 && cw < fo->reps && ci == fo->reps;
    if (!edge_new(seen, edge_key('n', rw, 'n', ri, carried * 2 + after + (extra ? 4 : 0)))) return;
    if (carried)
        fprintf(f, "  n%d -> n%d [label=\"next iteration%s%s\", style=dashed, color=\"#3182bd\", constraint=false];\n",
                rw, ri, label[0] ? "\\n" : "", label);
    else if (after)
        fprintf(f, "  n%d -> n%d [label=\"after the last iteration%s%s\"%s];\n", rw, ri, label[0] ? "\\n" : "",
                label, extra ? extra : "");
    else
        fprintf(f, "  n%d -> n%d [label=\"%s\"%s];\n", rw, ri, label, extra ? extra : "");
}

nd_status nd_graph_write_dot(const nd_graph *g, const nd_plan *plan, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f)
        return nd_error_set(ND_ERR_IO, "nd_graph_dump_dot: cannot open '%s' for writing", path);
    picture pic = {g, plan, fold_graph(g), -1, NULL};
    place_frame(&pic);
    const nd_fold fo = pic.fo;
    pic.step_name = nd_calloc((size_t)plan->n_steps + 1, sizeof *pic.step_name);
    if (!pic.step_name) {
        fclose(f);
        return nd_error_set(ND_ERR_OOM, "nd_graph_dump_dot: out of host memory");
    }
    for (int32_t s = 0; s < plan->n_steps; s++) pic.step_name[s] = shared_name(&pic, s);
    fprintf(f, "digraph nd {\n  rankdir=TB; compound=true; newrank=true; nodesep=0.2; ranksep=0.3;\n");
    fprintf(f, "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    fprintf(f, "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n");

    /* The loop body first (kernels and library calls whose drawn calls are
     * all in it), then everything else, as clusters of the API calls they
     * compute. */
    const int framed = fo.reps && pic.frame_step < 0;
    for (int pass = framed ? 2 : 1; pass >= 1; pass--) {
        if (pass == 2) open_frame(f, &fo);
        for (int32_t s = 0; s < plan->n_steps; s++)
            if (step_place(&pic, s) == pass) write_step_cluster(f, &pic, s);
        for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes; i++)
            if (plan->node_step[i] < 0 && drawn(&fo, i) && (framed && in_frame(&pic, i) ? 2 : 1) == pass)
                write_node(f, &pic, i);
        if (pass == 2) fprintf(f, "  }\n");
    }
    /* Inserted kernels' links to the node they serve: after it, the copy
     * of a store's temporary into the region; before, a chain of stores'
     * temporary filled with the buffer. */
    for (int32_t s = 0; s < plan->n_steps; s++) {
        const nd_step *st = &plan->steps[s];
        if (st->kind != ND_STEP_KERNEL || st->first_node < 0 || !step_place(&pic, s)) continue;
        int members = 0;
        for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes && !members; i++)
            members = plan->node_step[i] == s;
        if (members) continue;
        if (s < plan->node_step[st->first_node])
            fprintf(f, "  k%d -> n%d [label=\"buffer copied to a temporary\", style=dashed];\n", s,
                    nd_fold_rep(&fo, st->first_node));
        else
            fprintf(f, "  n%d -> k%d [label=\"via temporary\", style=dashed];\n", nd_fold_rep(&fo, st->first_node),
                    s);
    }

    /* Inserted copies in their own colour. */
    for (int32_t s = 0; s < plan->n_steps; s++) {
        const nd_step *st = &plan->steps[s];
        if (st->kind != ND_STEP_COPY) continue; /* the one copy kind */
        fprintf(f,
                "  c%d [label=\"copy %d: %s -> %s\\nbuffer b%d, %zu bytes\\nstream %d\", shape=cds, "
                "fillcolor=\"#fdae6b\", color=\"%s\", penwidth=2];\n",
                s, s, st->copy.src_memory == 0 ? "host" : "device",
                st->copy.dst_memory == 0 ? "host" : "device", st->copy.src_slot, st->copy.bytes, st->stream,
                stream_colour(st->stream));
        fprintf(f, "  b%d -> c%d [style=dashed, color=\"#e6550d\"];\n", st->copy.src_slot, s);
    }

    /* Buffers that existed before this flush, and the edges. */
    uint8_t *seen = nd_calloc((size_t)plan->n_slots + 1, 1);
    edge_set edges = {NULL, 0, 0};
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const nd_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            const nd_ref *r = &n->inputs[k];
            if (!r->buf) continue;
            char label[160] = "";
            if (!view_is_plain(r)) view_text(label, sizeof label, r);
            int64_t w = nd_buffer_writer_of(r->buf, r->version);
            if (w >= 0) {
                write_edge(f, &edges, &fo, w, i, label, NULL);
                continue;
            }
            int32_t b = r->buf->slot;
            if (seen && b >= 0 && b < plan->n_slots && !seen[b]) {
                seen[b] = 1;
                const char *name = r->buf->named ? nd_name_bound(r->buf) : NULL;
                fprintf(f,
                        "  b%d [label=\"%s%s%sbuffer b%d\\n%zu bytes %s\", shape=ellipse, "
                        "fillcolor=\"#ffffcc\"];\n",
                        b, name ? "'" : "", name ? name : "", name ? "'\\n" : "", b, r->buf->nbytes,
                        nd_dtype_name(r->buf->dtype));
            }
            int32_t ri = nd_fold_rep(&fo, (int32_t)i);
            if (edge_new(&edges, edge_key('b', b, 'n', ri, 0)))
                fprintf(f, "  b%d -> n%d [label=\"%s\"];\n", b, ri, label);
        }
        if (n->kind == ND_NODE_STORE) {
            int64_t w = nd_buffer_writer_of(n->out, n->out_version - 1);
            write_edge(f, &edges, &fo, w, i, "rest kept", ", style=dotted");
        }
    }
    free(edges.keys);
    free(seen);
    free(pic.step_name);

    /* One note, not a cluster of samples: a legend as wide as the samples
     * made every picture wider than its graph. */
    fprintf(f, "  legend [shape=note, style=filled, fillcolor=\"#f7f7f7\", fontsize=9, label=\"legend\\l"
               "white box: an API call (name, call, op shape dtype)\\l"
               "bold border: its value is kept in memory\\l"
               "grey dashed: dropped (no handle reaches it)\\l"
               "orange box: a store into a region\\l"
               "yellow ellipse: a buffer from before\\l"
               "orange arrow: an inserted copy\\l"
               "blue cluster: one generated kernel\\l"
               "green cluster: a library call\\l"
               "border colour: the stream\\l"
               "bold blue frame: a loop drawn once\\l"
               "dashed blue edge: a value carried to the next iteration\\l\"];\n}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return nd_error_set(ND_ERR_IO, "nd_graph_dump_dot: error while writing '%s'", path);
    return ND_OK;
}
