/* Graphviz pictures of a pending graph as planned. It draws the graph and
 * the plan together, so it lives with the scheduler (the graph layer does
 * not know plans). */
#ifndef ND_SCHEDULER_DOT_EXPORT_H
#define ND_SCHEDULER_DOT_EXPORT_H

#include "backends/plan.h"
#include "graph/graph.h"

/* One node per API call (op, shape, dtype), fused kernels as clusters,
 * inserted copies in their own colour, dropped nodes dashed, and a legend.
 * Buffers must carry the walk numbering (b->slot) the plan was built with. */
nd_status nd_graph_write_dot(const nd_graph *g, const nd_plan *plan, const char *path);

/* The plan of g as Graphviz (dot_plan.c): one node per step, a cluster per
 * stream, edges where a step uses what another wrote. */
nd_status nd_plan_write_dot(const nd_graph *g, const nd_plan *plan, const char *path);

#endif
