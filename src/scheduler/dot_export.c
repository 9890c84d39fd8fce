/* Graphviz export. The picture answers "what did my program record, and what
 * will run": each API call is a node, each generated kernel a cluster around
 * the calls it computes, and what stays in memory is drawn bold. */
#include "scheduler/dot_export.h"
#include "common/alloc.h"

#include <stdio.h>
#include <stdlib.h>

#include "backends/step_kinds.h"
#include "common/error.h"
#include "common/ufunc_loop.h"

/* One border colour per plan stream (compute streams, then the copy
 * streams host->device and device->host). */
#define ND_DOT_STREAM_COLOURS 6
static const char *const STREAM_COLOURS[ND_DOT_STREAM_COLOURS] = {"#1f77b4", "#9467bd", "#8c564b",
                                                                  "#e377c2", "#e6550d", "#31a354"};

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
        return nd_op_label((nd_op)n->op);
    case ND_NODE_REDUCE: return nd_reduce_label((nd_reduce_kind)n->op);
    case ND_NODE_RANDOM:
        return n->op == ND_RANDOM_NORMAL ? "normal" : n->op == ND_RANDOM_INTEGERS ? "integers" : "uniform";
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

static void write_node(FILE *f, const nd_graph *g, const nd_plan *plan, uint32_t i) {
    const nd_node *n = g->nodes[i];
    char shp[200];
    shape_text(shp, sizeof shp, n->ndim, n->shape);
    int dropped = plan->node_step[i] < 0;
    int mat = plan->node_materialised && plan->node_materialised[i];
    const char *api = n->label ? n->label : op_text(n);
    const char *fill = dropped ? "#eeeeee"
                       : n->kind == ND_NODE_MATMUL ? "#c7e9c0"
                       : n->kind == ND_NODE_STORE  ? "#fdd0a2"
                       : n->kind == ND_NODE_REDUCE ? "#dadaeb"
                                                   : "#ffffff";
    fprintf(f, "    n%u [label=\"%s\\n%s %s %s\", fillcolor=\"%s\"%s%s];\n", i, api, op_text(n), shp,
            nd_dtype_name((nd_dtype)n->dtype), fill, dropped ? ", style=\"rounded,dashed,filled\", fontcolor=\"#888888\"" : "",
            mat && !dropped ? ", penwidth=2.5" : "");
}

nd_status nd_graph_write_dot(const nd_graph *g, const nd_plan *plan, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f)
        return nd_error_set(ND_ERR_IO, "nd_graph_dump_dot: cannot open '%s' for writing", path);
    fprintf(f, "digraph nd {\n  rankdir=TB; compound=true; newrank=true;\n");
    fprintf(f, "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    fprintf(f, "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n");

    /* Kernels and library calls as clusters of the API calls they compute. */
    for (int32_t s = 0; s < plan->n_steps; s++) {
        const nd_step *st = &plan->steps[s];
        const char *colour = STREAM_COLOURS[(st->stream < 0 ? 0 : st->stream) % ND_DOT_STREAM_COLOURS];
        char label[112];
        nd_step_label(st, label, sizeof label);
        switch (nd_step_category(st)) {
        case ND_PROFILE_COPY: continue; /* drawn below */
        case ND_PROFILE_KERNEL:
            fprintf(f, "  subgraph cluster_s%d {\n    label=\"%s %d: %s", s, nd_step_kinds[st->kind].name, s, label);
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
                    "  subgraph cluster_s%d {\n    label=\"library call %d: %s\"; "
                    "style=\"rounded,filled\"; fillcolor=\"#e5f5e0\"; color=\"%s\"; "
                    "fontname=\"Helvetica\"; fontsize=10;\n",
                    s, s, label, colour);
            break;
        }
        int members = 0;
        for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes; i++)
            if (plan->node_step[i] == s) {
                write_node(f, g, plan, i);
                members++;
            }
        /* A kernel the scheduler added on its own (the second half of a
         * store that needed a temporary) still gets a visible node. */
        if (!members && st->kind == ND_STEP_KERNEL) {
            fprintf(f, "    k%d [label=\"%s\\n(inserted by the scheduler)\", fillcolor=\"#fdd0a2\"];\n", s,
                    st->kernel->name);
        }
        fprintf(f, "  }\n");
        /* After its node: the copy of a store's temporary into the region;
         * before: a chain of stores' temporary filled with the buffer. */
        if (!members && st->kind == ND_STEP_KERNEL && st->first_node >= 0) {
            if (s < plan->node_step[st->first_node])
                fprintf(f, "  k%d -> n%d [label=\"buffer copied to a temporary\", style=dashed];\n", s,
                        st->first_node);
            else
                fprintf(f, "  n%d -> k%d [label=\"via temporary\", style=dashed];\n", st->first_node, s);
        }
    }
    for (uint32_t i = 0; i < g->n_nodes && (int32_t)i < plan->n_nodes; i++)
        if (plan->node_step[i] < 0) write_node(f, g, plan, i);

    /* Inserted copies in their own colour. */
    for (int32_t s = 0; s < plan->n_steps; s++) {
        const nd_step *st = &plan->steps[s];
        if (st->kind != ND_STEP_COPY) continue; /* the one copy kind */
        fprintf(f,
                "  c%d [label=\"copy %d: %s -> %s\\nbuffer b%d, %zu bytes\\nstream %d\", shape=cds, "
                "fillcolor=\"#fdae6b\", color=\"%s\", penwidth=2];\n",
                s, s, st->copy.src_memory == 0 ? "host" : "device",
                st->copy.dst_memory == 0 ? "host" : "device", st->copy.src_slot, st->copy.bytes, st->stream,
                STREAM_COLOURS[st->stream % ND_DOT_STREAM_COLOURS]);
        fprintf(f, "  b%d -> c%d [style=dashed, color=\"#e6550d\"];\n", st->copy.src_slot, s);
    }

    /* Buffers that existed before this flush, and the edges. */
    uint8_t *seen = nd_calloc((size_t)plan->n_slots + 1, 1);
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const nd_node *n = g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            const nd_ref *r = &n->inputs[k];
            if (!r->buf) continue;
            char label[160] = "";
            if (!view_is_plain(r)) view_text(label, sizeof label, r);
            int64_t w = nd_buffer_writer_of(r->buf, r->version);
            if (w >= 0) {
                fprintf(f, "  n%lld -> n%u [label=\"%s\"];\n", (long long)w, i, label);
            } else {
                int32_t b = r->buf->slot;
                if (seen && b >= 0 && b < plan->n_slots && !seen[b]) {
                    seen[b] = 1;
                    fprintf(f,
                            "  b%d [label=\"buffer b%d\\n%zu bytes %s\", shape=ellipse, "
                            "fillcolor=\"#ffffcc\"];\n",
                            b, b, r->buf->nbytes, nd_dtype_name(r->buf->dtype));
                }
                fprintf(f, "  b%d -> n%u [label=\"%s\"];\n", b, i, label);
            }
        }
        if (n->kind == ND_NODE_STORE) {
            int64_t w = nd_buffer_writer_of(n->out, n->out_version - 1);
            if (w >= 0) fprintf(f, "  n%lld -> n%u [style=dotted, label=\"rest kept\"];\n", (long long)w, i);
        }
    }
    free(seen);

    fprintf(f,
            "  subgraph cluster_legend {\n    label=\"legend\"; style=\"rounded\"; color=\"#999999\"; "
            "fontname=\"Helvetica\";\n"
            "    l_op [label=\"API call\\nop shape dtype\", fillcolor=\"#ffffff\"];\n"
            "    l_mat [label=\"value kept in memory\", fillcolor=\"#ffffff\", penwidth=2.5];\n"
            "    l_dead [label=\"dropped (no handle\\nreaches it)\", style=\"rounded,dashed,filled\", "
            "fillcolor=\"#eeeeee\"];\n"
            "    l_buf [label=\"buffer from before\", shape=ellipse, fillcolor=\"#ffffcc\"];\n"
            "    l_copy [label=\"inserted copy\", shape=cds, fillcolor=\"#fdae6b\"];\n"
            "    l_store [label=\"store into a region\", fillcolor=\"#fdd0a2\"];\n"
            "    l_kernel [label=\"blue cluster = one generated kernel\\ngreen cluster = library "
            "call\\nborder colour = stream\", shape=note, fillcolor=\"#deebf7\"];\n"
            "  }\n}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return nd_error_set(ND_ERR_IO, "nd_graph_dump_dot: error while writing '%s'", path);
    return ND_OK;
}
