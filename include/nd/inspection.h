/*
 * nd/inspection.h — Reading an array's shape, dtype and strides; dumping the graph.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_INSPECTION_H
#define ND_INSPECTION_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Also valid on a handle that outlived nd_shutdown; a freed handle gives
 * the NULL value and ND_ERR_ARG. */
ND_API int nd_ndim(const nd_array *a);                /* -1 for NULL */
ND_API const int64_t *nd_shape(const nd_array *a);    /* NULL for NULL */
ND_API int64_t nd_size(const nd_array *a);            /* -1 for NULL */
ND_API nd_dtype nd_dtype_of(const nd_array *a);       /* ND_NUM_DTYPES for NULL */
/* Strides in elements (NumPy's strides divided by the item size). */
ND_API const int64_t *nd_strides(const nd_array *a);

/* Writes the pending graph, as the scheduler would plan it, as Graphviz:
 * one node per API call (op, shape, dtype), fused kernels as clusters,
 * inserted copies in their own colour, a legend. Does not run anything. */
ND_API nd_status nd_graph_dump_dot(const char *path);
/* The pending graph's plan as Graphviz instead: one node per step (generated
 * kernel, library call, copy, user kernel) with what it computes, its
 * iteration space and the unique bytes it moves, one cluster per stream,
 * and an edge where a step reads or overwrites what another wrote (red
 * across streams: an event). A run of repeated steps (a loop's kernels)
 * is drawn once, framed "repeated xN"; so is a repeated part of the graph
 * in nd_graph_dump_dot. ND_DUMP_DOT_PLAN=1 (nd_config.dump_dot_plan) adds
 * this picture of every flush to ND_DUMP_DOT's folder (flush-N-plan.dot).
 * Runs nothing. Errors: NULL path (ND_ERR_ARG), a file that cannot be
 * written (ND_ERR_IO). */
ND_API nd_status nd_plan_dump_dot(const char *path);

/* Names. nd_set_name(a, "grid") names the data a views (its buffer: every
 * view of it shares the name, and naming a view names its base); the ops
 * that write it and the buffer itself carry the name in Graphviz dumps,
 * ND_PROFILE rows, ND_TRACE events, NVTX ranges, ND_LOG lines and the
 * message of a failure to compute it ("... computed by nd_assign for
 * 'grid' could not be computed: ..."). NULL or "" removes the name. A name
 * is at most 200 printable characters without '"' or '\'; names are kept
 * for the life of the process (a program has a few). Errors: NULL or freed
 * a (ND_ERR_ARG), a bad name (ND_ERR_ARG, nothing changes). Costs nothing
 * for programs that name nothing. */
ND_API nd_status nd_set_name(nd_array *a, const char *name);
/* The name nd_set_name gave a's data, or NULL (also for NULL or a freed a,
 * which set ND_ERR_ARG). The string lives as long as the process. */
ND_API const char *nd_get_name(const nd_array *a);
/* nd_scope_begin, and every op recorded on this thread until the matching
 * nd_scope_end is labelled `name` in the same places as nd_set_name's
 * names ("jacobi sweep"; "jacobi sweep/grid" for an op writing an array
 * named "grid"). Named scopes nest into paths ("solver/jacobi sweep"); an
 * unnamed scope inside keeps the outer name; past 32 nested named scopes
 * a scope keeps its outer name. NULL or "" is nd_scope_begin. Errors: as
 * nd_scope_begin, and a bad name as nd_set_name's (ND_ERR_ARG; no scope
 * opens then). */
ND_API void nd_scope_begin_named(const char *name);

/* Progress of long runs. nd_set_progress(fn, ctx, seconds) makes nd call
 * fn(&p, ctx) after a flush has run when at least `seconds` passed since
 * the last call (0: after every flush), with the counts below, so a
 * program can draw a progress bar while the work it recorded runs. A
 * flush is the unit: a flush counts as done once it ran (on the CUDA
 * backend, once its work was launched on the device). fn runs on nd's
 * executor thread, or on the thread inside the nd call that ran the flush
 * itself (nd_sync), while nd waits for it: it must return soon and must
 * not call nd functions. fn NULL turns it off. Waits for the flush in
 * flight. Errors: seconds negative or not finite (ND_ERR_ARG). */
typedef struct {
    uint64_t flushes_done;    /* flushes run since nd_init */
    uint64_t flushes_pending; /* planned and handed to the executor, not yet run */
    uint64_t nodes_done;      /* operations recorded into the flushes done */
    double seconds;           /* since nd_set_progress */
} nd_progress;
typedef void (*nd_progress_fn)(const nd_progress *p, void *ctx);
ND_API nd_status nd_set_progress(nd_progress_fn fn, void *ctx, double seconds);

#ifdef __cplusplus
}
#endif
#endif /* ND_INSPECTION_H */
