/* The plan as Graphviz: what will run rather than what was recorded. One
 * node per step (kernel, library call, copy, user kernel) labelled with
 * what it computes, its iteration space and the unique bytes it moves; one
 * cluster per stream; an edge where a step reads or overwrites bytes an
 * earlier one wrote (labelled with the buffer), drawn bold red when the
 * two are on different streams (an event wait). A split plan (partition.c)
 * draws each logical device's steps in a cluster of its own
 * (cluster_dev<N>, its streams inside; whole-array steps in cluster_whole),
 * so a halo, scatter or gather copy is an edge between two clusters. A
 * plan whose steps repeat (a loop's kernels) is drawn with one copy of
 * them, framed "x50", as the graph view is (dot_fold.h). */
#include "scheduler/dot_export.h"
#include "common/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/step_kinds.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/names.h"
#include "scheduler/dot_fold.h"
#include "scheduler/flush_walk.h"
#include "scheduler/stream_assign.h"

static const char *const STREAM_NAMES[ND_PLAN_STREAMS] = {"compute 0", "compute 1", "compute 2", "compute 3",
                                                          "host->device", "device->host"};
static const char *const STREAM_FILL[ND_PLAN_STREAMS] = {"#f7fbff", "#fcfbfd", "#fff5eb", "#fde0ef",
                                                         "#fff5eb", "#f7fcf5"};

/* What a step of a split plan is (scheduler/partition.c), before its label. */
static const char *const PART_NAMES[] = {"", "", "", "scatter, ", "halo, ", "gather, ", "ring, ", "replica, "};
_Static_assert(sizeof PART_NAMES / sizeof *PART_NAMES == ND_PART_REPLICA + 1, "a name per ND_PART_*");

/* Kernels of a split plan: one colour per device (cycling). */
static const char *const DEVICE_FILL[4] = {"#c6dbef", "#dadaeb", "#fdd0a2", "#c7e9c0"};

static const char *step_value_name(const nd_graph *g, const nd_step *st) {
    int32_t n = st->last_node >= 0 ? st->last_node : st->first_node;
    return n >= 0 && (uint32_t)n < g->n_nodes ? nd_node_name(g->nodes[n]) : NULL;
}

static uint64_t step_sig(const nd_step *st) {
    char label[112];
    nd_step_label(st, label, sizeof label);
    return nd_hash_bytes(nd_hash_u64(ND_HASH_SEED, (uint64_t)st->device << 24 | (uint64_t)st->part << 16 |
                                                       (uint64_t)st->kind << 8 | (uint64_t)st->stream),
                         label, strlen(label));
}

typedef struct {
    const nd_plan *plan;
    const uint64_t *sig;
} fold_ctx;

static int steps_repeat(int32_t i, int32_t j, int32_t p, void *vctx) {
    (void)p;
    const fold_ctx *c = vctx;
    return c->sig[i] == c->sig[j] && nd_step_n_accesses(&c->plan->steps[i]) == nd_step_n_accesses(&c->plan->steps[j]);
}

static void write_step(FILE *f, const nd_graph *g, const nd_plan *plan, int32_t s) {
    const nd_step *st = &plan->steps[s];
    char label[112], more[320] = "", bytes[32];
    nd_step_label(st, label, sizeof label);
    const char *name = step_value_name(g, st);
    const char *shape = "box", *fill = "#deebf7";
    switch (st->kind) {
    case ND_STEP_KERNEL: {
        char shp[200];
        nd_format_shape(shp, sizeof shp, st->kernel->ndim, st->kernel->shape);
        nd_profile_bytes_text(bytes, sizeof bytes, nd_kernel_unique_bytes(st->kernel));
        snprintf(more, sizeof more, "space %s, %d ops\\nmoves %s", shp, st->kernel->n_insts, bytes);
        if (st->device) fill = DEVICE_FILL[(st->device - 1) % 4];
        break;
    }
    case ND_STEP_MATMUL: fill = "#c7e9c0"; break;
    case ND_STEP_COPY:
        shape = "cds";
        fill = st->part == ND_PART_HALO ? "#fb6a4a" : "#fdae6b";
        nd_profile_bytes_text(bytes, sizeof bytes, (double)st->copy.bytes);
        snprintf(more, sizeof more, "%sbuffer b%d, %s", PART_NAMES[st->part], st->copy.src_slot, bytes);
        break;
    case ND_STEP_USER: fill = "#fdd0a2"; break;
    }
    if (st->device) {
        /* A split plan: which device runs it (a copy: the one it writes). */
        size_t len = strlen(more);
        snprintf(more + len, sizeof more - len, "%sdevice %d", more[0] ? "\\n" : "", st->device - 1);
    }
    fprintf(f, "    s%d [label=\"%s%s%s %d: %s%s%s\", shape=%s, fillcolor=\"%s\"];\n", s, name ? name : "",
            name ? "\\n" : "", nd_step_kinds[st->kind].name, s, label, more[0] ? "\\n" : "", more, shape, fill);
}

nd_status nd_plan_write_dot(const nd_graph *g, const nd_plan *plan, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return nd_error_set(ND_ERR_IO, "nd_plan_dump_dot: cannot open '%s' for writing", path);
    nd_fold fo = {0, 0, 0};
    uint64_t *sig = plan->n_steps >= 6 ? nd_malloc(sizeof *sig * (size_t)plan->n_steps) : NULL;
    if (sig) {
        for (int32_t i = 0; i < plan->n_steps; i++) sig[i] = step_sig(&plan->steps[i]);
        fold_ctx c = {plan, sig};
        fo = nd_fold_find(plan->n_steps, sig, steps_repeat, &c, 2);
        free(sig);
    }
    fprintf(f, "digraph nd_plan {\n  rankdir=TB; newrank=true;\n");
    fprintf(f, "  node [style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    fprintf(f, "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n");
    fprintf(f, "  label=\"plan: %d step%s on %d stream%s%s\"; labelloc=t; fontname=\"Helvetica\";\n", plan->n_steps,
            plan->n_steps == 1 ? "" : "s", plan->n_streams_used, plan->n_streams_used == 1 ? "" : "s",
            fo.reps ? " (a repeated run of steps drawn once)" : "");
    /* A split plan: one cluster per logical device (group 1 + d; group 0
     * the whole-array steps), its streams inside; else one per stream. */
    int32_t n_groups = 1;
    for (int32_t s = 0; s < plan->n_steps; s++)
        if (plan->steps[s].device + 1 > n_groups) n_groups = plan->steps[s].device + 1;
    for (int32_t gr = 0; gr < n_groups; gr++) {
        int any = 0;
        for (int32_t s = 0; s < plan->n_steps && !any; s++) any = plan->steps[s].device == gr;
        if (!any) continue;
        const char *ind = n_groups > 1 ? "  " : "";
        if (n_groups > 1 && gr == 0)
            fprintf(f, "  subgraph cluster_whole {\n    label=\"whole arrays (on device 0)\"; style=\"rounded,bold\"; "
                       "color=\"#636363\"; fontname=\"Helvetica-Bold\";\n");
        else if (n_groups > 1)
            fprintf(f, "  subgraph cluster_dev%d {\n    label=\"device %d\"; style=\"rounded,bold\"; color=\"#636363\"; "
                       "fontname=\"Helvetica-Bold\";\n", gr - 1, gr - 1);
        for (int32_t t = 0; t < ND_PLAN_STREAMS; t++) {
            any = 0;
            for (int32_t s = 0; s < plan->n_steps && !any; s++)
                any = plan->steps[s].stream == t && plan->steps[s].device == gr;
            if (!any) continue;
            char name[48];
            if (n_groups == 1) snprintf(name, sizeof name, "stream%d", t);
            else if (gr == 0) snprintf(name, sizeof name, "whole_stream%d", t);
            else snprintf(name, sizeof name, "dev%d_stream%d", gr - 1, t);
            fprintf(f,
                    "%s  subgraph cluster_%s {\n%s    label=\"stream %d (%s)\"; style=\"rounded,filled\"; "
                    "fillcolor=\"%s\"; color=\"#999999\"; fontname=\"Helvetica\";\n",
                    ind, name, ind, t, STREAM_NAMES[t], STREAM_FILL[t]);
            int open_loop = 0;
            for (int32_t s = 0; s < plan->n_steps; s++) {
                if (plan->steps[s].stream != t || plan->steps[s].device != gr || nd_fold_rep(&fo, s) != s) continue;
                int body = fo.reps && nd_fold_in_body(&fo, s);
                if (body && !open_loop) {
                    fprintf(f,
                            "%s    subgraph cluster_loop%d {\n%s    label=\"repeated x%d\"; style=\"rounded,bold\"; "
                            "color=\"#3182bd\"; fontcolor=\"#3182bd\"; fontname=\"Helvetica-Bold\"; fontsize=14;\n",
                            ind, gr * ND_PLAN_STREAMS + t, ind, fo.reps);
                    open_loop = 1;
                } else if (!body && open_loop) {
                    fprintf(f, "%s    }\n", ind);
                    open_loop = 0;
                }
                write_step(f, g, plan, s);
            }
            if (open_loop) fprintf(f, "%s    }\n", ind);
            fprintf(f, "%s  }\n", ind);
        }
        if (n_groups > 1) fprintf(f, "  }\n");
    }
    /* Data edges: per slot the earlier writes no later write covered
     * (WRITERS of them at most; byte ranges, stream_assign.h), drawn from
     * each one whose bytes the step touches. */
    enum { WRITERS = 8 };
    typedef struct {
        int32_t step;
        int64_t lo, hi;
    } wrote;
    wrote *writer = nd_malloc(sizeof *writer * WRITERS * ((size_t)plan->n_slots + 1));
    uint8_t *n_writers = nd_calloc((size_t)plan->n_slots + 1, 1);
    uint64_t *drawn_edges = nd_calloc(4096, sizeof *drawn_edges);
    if (writer && n_writers) {
        for (int32_t s = 0; s < plan->n_steps; s++) {
            const nd_step *st = &plan->steps[s];
            for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
                nd_step_access a = nd_step_access_at(st, j, plan->memory);
                if (a.slot < 0 || a.slot >= plan->n_slots) continue;
                int64_t lo, hi;
                nd_step_access_range(st, j, &lo, &hi);
                for (int32_t k = 0; k < n_writers[a.slot]; k++) {
                    const wrote *wr = &writer[(size_t)a.slot * WRITERS + (size_t)k];
                    int32_t w = wr->step;
                    if (wr->hi <= lo || hi <= wr->lo || w == s) continue;
                    int32_t rw = nd_fold_rep(&fo, w), rs = nd_fold_rep(&fo, s);
                    int carried = fo.reps && nd_fold_copy(&fo, w) < nd_fold_copy(&fo, s) &&
                                  nd_fold_copy(&fo, w) >= 0 && nd_fold_copy(&fo, s) < fo.reps;
                    const nd_step *ws = &plan->steps[w];
                    int cross = ws->stream != st->stream || ws->device != st->device;
                    int devices = ws->device != st->device && st->part >= ND_PART_SCATTER;
                    uint64_t key = nd_hash_u64(nd_hash_u64(ND_HASH_SEED, (uint64_t)rw << 32 | (uint32_t)rs),
                                               (uint64_t)a.slot << 1 | (uint64_t)carried) | 1;
                    /* A small table of edges drawn; when it is full, edges repeat. */
                    size_t h = (size_t)key & 4095;
                    int fresh = 1;
                    for (size_t probe = 0; drawn_edges && probe < 4096; probe++, h = (h + 1) & 4095) {
                        if (drawn_edges[h] == key) {
                            fresh = 0;
                            break;
                        }
                        if (!drawn_edges[h]) {
                            drawn_edges[h] = key;
                            break;
                        }
                    }
                    if (!fresh || rw == rs) continue;
                    char what[64] = "";
                    if (devices)
                        snprintf(what, sizeof what, ": %s from %s %d", st->part == ND_PART_HALO ? "halo" : "rows",
                                 ws->device ? "device" : "whole, device", ws->device ? ws->device - 1 : 0);
                    fprintf(f, "  s%d -> s%d [label=\"b%d%s\"%s%s%s];\n", rw, rs, a.slot, what,
                            cross ? ", color=\"#cb181d\", penwidth=2, fontcolor=\"#cb181d\"" : "",
                            devices ? ", style=bold, arrowhead=vee" : "",
                            carried ? ", style=dashed, constraint=false" : "");
                }
            }
            for (int32_t j = 0, n = nd_step_n_accesses(st); j < n; j++) {
                nd_step_access a = nd_step_access_at(st, j, plan->memory);
                if (!(a.mode & ND_ACCESS_WRITE) || a.slot < 0 || a.slot >= plan->n_slots) continue;
                int64_t lo, hi;
                nd_step_access_range(st, j, &lo, &hi);
                wrote *list = &writer[(size_t)a.slot * WRITERS];
                int32_t keep = 0;
                for (int32_t k = 0; k < n_writers[a.slot]; k++)
                    if (!(lo <= list[k].lo && list[k].hi <= hi)) list[keep++] = list[k];
                if (keep == WRITERS) { /* full: the oldest goes (an edge less, never a wrong one) */
                    memmove(list, list + 1, sizeof *list * (WRITERS - 1));
                    keep--;
                }
                list[keep++] = (wrote){s, lo, hi};
                n_writers[a.slot] = (uint8_t)keep;
            }
        }
    }
    free(n_writers);
    free(writer);
    free(drawn_edges);
    fprintf(f, "  legend [shape=note, style=filled, fillcolor=\"#f7f7f7\", fontsize=9, label=\"legend\\l"
               "blue box: a generated kernel (name, step, iteration\\l   space, ops, unique bytes it moves)\\l"
               "green box: a library call (cuBLAS, BLAS)\\l"
               "orange arrow: a copy (red: a halo copy into\\l   ghost rows)\\l"
               "split plans: a frame per device; kernels coloured\\l   per device; (edge rows) and (interior): a kernel\\l   split at its halo; bold edge: a copy between\\l   devices (halo, scatter, gather)\\l"
               "edge: reads or overwrites what the other wrote\\l   (buffer bN); red: across streams (an event)\\l"
               "bold blue frame: steps repeated, drawn once\\l"
               "dashed edge: into the next repetition\\l\"];\n}\n");
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return nd_error_set(ND_ERR_IO, "nd_plan_dump_dot: error while writing '%s'", path);
    return ND_OK;
}
